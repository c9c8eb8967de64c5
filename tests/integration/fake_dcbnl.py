"""A fake kernel for ibsnmpd's DCBX backend: it listens on a SOCK_SEQPACKET
unix socket (ibsnmpd's `dcbxSocket`) and answers rtnetlink dcbnl requests in
the kernel's formats (include/uapi/linux/dcbnl.h, net/dcb/dcbnl.c), written
here independently of ibsnmpd's C code: RTM_GETLINK dumps (multipart, split
over datagrams), GSTATE, GNUMTCS, CEE_GET with peer data, the set commands
and SET_ALL (which, like the kernel, also multicasts a CEE dump with pid 0),
NLMSG_ERROR for interfaces without dcbnl ops (EOPNOTSUPP) and for injected
refusals, and raw (truncated, malformed) messages on demand.

Only loopback-free resources: a unix socket in the test's directory."""
import errno
import os
import socket
import struct
import threading

RTM_NEWLINK, RTM_GETLINK, RTM_GETDCB, RTM_SETDCB = 16, 18, 78, 79
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_MULTI = 2
GSTATE, SSTATE, PGTX_SCFG, PFC_SCFG, SET_ALL = 1, 2, 4, 8, 9
GNUMTCS, SAPP, SFEATCFG, CEE_GET = 12, 19, 25, 26
A_IFNAME, A_STATE, A_PFC_CFG, A_PG_CFG, A_SET_ALL = 1, 2, 4, 6, 7
A_NUMTCS, A_APP, A_DCBX, A_FEATCFG, A_CEE = 10, 12, 14, 15, 16
CEE_PEER_PG, CEE_PEER_PFC, CEE_PEER_APP_TABLE, CEE_TX_PG = 1, 2, 3, 4
CEE_RX_PG, CEE_PFC, CEE_APP_TABLE, CEE_FEAT = 5, 6, 7, 8
PEER_APP_INFO, PEER_APP = 1, 2
PG_TC_0, PG_BW_ID_0 = 1, 11
TC_PGID, TC_UP_MAPPING, TC_STRICT_PRIO, TC_BW_PCT = 1, 2, 3, 4
NUMTCS_PG, NUMTCS_PFC = 2, 3
APP_IDTYPE, APP_ID, APP_PRIORITY = 1, 2, 3
IFLA_IFNAME = 3
REPLY_PID = 4242  # the requester's port id, as the kernel addresses replies

ERROR, ENABLE, WILLING, ADVERTISE = 1, 2, 4, 8


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def u8(kind, v):
    return attr(kind, struct.pack("=B", v))


def u16(kind, v):
    return attr(kind, struct.pack("=H", v))


def nest(kind, *attrs):
    return attr(kind, b"".join(attrs))


def string(kind, s):
    return attr(kind, s.encode() + b"\0")


def message(mtype, flags, seq, pid, body):
    return struct.pack("=IHHII", 16 + len(body), mtype, flags, seq, pid) + body


def dcb(mtype, cmd, seq, pid, *attrs, flags=0):
    return message(mtype, flags, seq, pid, struct.pack("=BBH", 0, cmd, 0) + b"".join(attrs))


def error(seq, request, code):
    return message(NLMSG_ERROR, 0, seq, REPLY_PID, struct.pack("=i", -code) + request[:16])


def parse_attrs(data):
    out = []
    while len(data) >= 4:
        n, kind = struct.unpack("=HH", data[:4])
        if n < 4 or n > len(data):
            break
        out.append((kind & 0x3fff, data[4:n]))
        data = data[(n + 3) & ~3:]
    return out


class Port:
    def __init__(self, ifindex, name, dcb=True):
        self.ifindex, self.name, self.dcb = ifindex, name, dcb
        self.state = 1
        self.numtcs = (8, 8)
        self.prio_pgid = [0, 0, 1, 1, 2, 2, 3, 7]
        self.pg_bw = [25, 25, 25, 25, 0, 0, 0, 0]
        self.pfc = [0, 0, 0, 1, 0, 0, 0, 0]
        self.apps = [(0, 0x8915, 0x08)]  # RoCE ethertype on priority 3
        self.feat = {2: ENABLE | WILLING | ADVERTISE, 3: ENABLE | ADVERTISE, 4: ENABLE | ADVERTISE}
        # the peer: (willing, error, pg_en, tcs, pg_bw[8], prio_pg[8])
        self.peer_pg = (0, 0, 1, 8, list(self.pg_bw), list(self.prio_pgid))
        self.peer_pfc = (0, 0, 0x08, 8)  # willing, error, pfc_en bitmap, tcs
        self.peer_apps = (0, 0, [(0, 0x8915, 0x08)])
        self.dcbx = 0x04 | 0x02  # VER_CEE | LLD_MANAGED

    def cee(self):
        tx = b"".join(nest(PG_TC_0 + i, u8(TC_PGID, self.prio_pgid[i]), u8(TC_UP_MAPPING, 1 << i),
                           u8(TC_STRICT_PRIO, 0), u8(TC_BW_PCT, 0)) for i in range(8))
        tx += b"".join(u8(PG_BW_ID_0 + i, self.pg_bw[i]) for i in range(8))
        parts = [attr(CEE_TX_PG, tx), attr(CEE_RX_PG, tx),
                 nest(CEE_PFC, *[u8(1 + i, self.pfc[i]) for i in range(8)]),
                 nest(CEE_APP_TABLE, *[nest(A_APP, u8(APP_IDTYPE, s), u16(APP_ID, i),
                                            u8(APP_PRIORITY, p)) for s, i, p in self.apps]),
                 nest(CEE_FEAT, *[u8(f, v) for f, v in sorted(self.feat.items())])]
        if self.peer_pg:
            w, e, en, tcs, bw, prio = self.peer_pg
            parts.append(attr(CEE_PEER_PG, struct.pack("=4B8B8B", w, e, en, tcs, *bw, *prio)))
        if self.peer_pfc:
            parts.append(attr(CEE_PEER_PFC, struct.pack("=4B", *self.peer_pfc)))
        if self.peer_apps:
            w, e, table = self.peer_apps
            parts.append(nest(CEE_PEER_APP_TABLE, attr(PEER_APP_INFO, struct.pack("=BB", w, e)),
                              *[attr(PEER_APP, struct.pack("=BBH", s, p, i))
                                for s, i, p in table]))
        return [string(A_IFNAME, self.name), nest(A_CEE, *parts), u8(A_DCBX, self.dcbx)]


class FakeKernel(threading.Thread):
    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.ports = {}
        self.received = []      # (cmd, ifname, attrs) of every DCB request
        self.refuse = {}        # cmd -> errno for the next such request
        self.silent = set()     # cmds left unanswered
        self.mangle = set()     # cmds answered with a malformed reply (a u16 DCB_ATTR_STATE)
        self.lock = threading.Lock()
        self.conn = None
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if os.path.exists(path):
            os.unlink(path)
        self.listener.bind(path)
        self.listener.listen(4)
        self.stopping = False

    def add(self, port):
        self.ports[port.ifindex] = port
        return port

    def stop(self):
        self.stopping = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        if self.conn:
            self.conn.close()

    def run(self):
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.conn = conn
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    break
                if not data:
                    break
                with self.lock:
                    self.handle(conn, data)

    def send(self, data):
        if self.conn:
            self.conn.send(data)

    def notify(self, ifindex, cmd=CEE_GET, mtype=RTM_GETDCB):
        """An unsolicited RTNLGRP_DCB dump (pid 0, seq 0), as dcbnl_cee_notify."""
        with self.lock:
            self.send(dcb(mtype, cmd, 0, 0, *self.ports[ifindex].cee()))

    def by_name(self, name):
        return next((p for p in self.ports.values() if p.name == name), None)

    def handle(self, conn, data):
        length, mtype, flags, seq, pid = struct.unpack("=IHHII", data[:16])
        if mtype == RTM_GETLINK:
            links = [message(RTM_NEWLINK, NLM_F_MULTI, seq, REPLY_PID,
                             struct.pack("=BxHiII", 0, 1, p.ifindex, 0, 0) +
                             string(IFLA_IFNAME, p.name))
                     for p in sorted(self.ports.values(), key=lambda p: p.ifindex)]
            done = message(NLMSG_DONE, NLM_F_MULTI, seq, REPLY_PID, struct.pack("=i", 0))
            # multipart over two datagrams, several messages in each
            conn.send(b"".join(links[:2]))
            conn.send(b"".join(links[2:]) + done)
            return
        if mtype not in (RTM_GETDCB, RTM_SETDCB):
            conn.send(error(seq, data, errno.EOPNOTSUPP))
            return
        cmd = data[17]
        attrs = dict(parse_attrs(data[20:length]))
        name = attrs.get(A_IFNAME, b"").rstrip(b"\0").decode()
        self.received.append((cmd, name, attrs))
        port = self.by_name(name)
        if cmd in self.silent:
            return
        if not name:
            conn.send(error(seq, data, errno.EINVAL))
            return
        if not port:
            conn.send(error(seq, data, errno.ENODEV))
            return
        if not port.dcb:
            conn.send(error(seq, data, errno.EOPNOTSUPP))
            return
        if cmd in self.mangle:
            conn.send(dcb(mtype, cmd, seq, REPLY_PID, string(A_IFNAME, name), u16(A_STATE, 1)))
            return
        if cmd in self.refuse:
            conn.send(error(seq, data, self.refuse.pop(cmd)))
            return
        if cmd == GSTATE:
            conn.send(dcb(RTM_GETDCB, cmd, seq, REPLY_PID, u8(A_STATE, port.state)))
        elif cmd == GNUMTCS:
            conn.send(dcb(RTM_GETDCB, cmd, seq, REPLY_PID,
                          nest(A_NUMTCS, u8(NUMTCS_PG, port.numtcs[0]),
                               u8(NUMTCS_PFC, port.numtcs[1]))))
        elif cmd == CEE_GET:
            conn.send(dcb(RTM_GETDCB, cmd, seq, REPLY_PID, *port.cee()))
        elif cmd == SSTATE:
            port.state = attrs[A_STATE][0]
            conn.send(dcb(RTM_SETDCB, cmd, seq, REPLY_PID, u8(A_STATE, 0)))
        elif cmd == SFEATCFG:
            for f, v in parse_attrs(attrs[A_FEATCFG]):
                port.feat[f] = v[0] | (port.feat.get(f, 0) & ERROR)
            conn.send(dcb(RTM_SETDCB, cmd, seq, REPLY_PID, u8(A_FEATCFG, 0)))
        elif cmd == PGTX_SCFG:
            for k, v in parse_attrs(attrs[A_PG_CFG]):
                if PG_TC_0 <= k < PG_TC_0 + 8:
                    for p, pv in parse_attrs(v):
                        if p == TC_PGID:
                            port.prio_pgid[k - PG_TC_0] = pv[0]
                elif PG_BW_ID_0 <= k < PG_BW_ID_0 + 8:
                    port.pg_bw[k - PG_BW_ID_0] = v[0]
            conn.send(dcb(RTM_SETDCB, cmd, seq, REPLY_PID, u8(A_PG_CFG, 0)))
        elif cmd == PFC_SCFG:
            for k, v in parse_attrs(attrs[A_PFC_CFG]):
                if 1 <= k <= 8:
                    port.pfc[k - 1] = v[0]
            conn.send(dcb(RTM_SETDCB, cmd, seq, REPLY_PID, u8(A_PFC_CFG, 0)))
        elif cmd == SAPP:
            a = dict(parse_attrs(attrs[A_APP]))
            sel, ident, prio = a[APP_IDTYPE][0], struct.unpack("=H", a[APP_ID])[0], a[APP_PRIORITY][0]
            port.apps = [(s, i, prio if (s, i) == (sel, ident) else p) for s, i, p in port.apps]
            conn.send(dcb(RTM_SETDCB, cmd, seq, REPLY_PID, u8(A_APP, 0)))
            conn.send(dcb(RTM_SETDCB, cmd, seq, 0, *port.cee()))
        elif cmd == SET_ALL:
            conn.send(dcb(RTM_SETDCB, cmd, seq, REPLY_PID, u8(A_SET_ALL, 2)))  # DCB_HW_CHG
            conn.send(dcb(RTM_SETDCB, cmd, seq, 0, *port.cee()))  # dcbnl_cee_notify
        else:
            conn.send(error(seq, data, errno.EOPNOTSUPP))
