"""What a manager (a test, a bench) reads from a bed: varbinds, the
notifications snmptrapd logged, infiniband-diags' output, requests timed
from send to answer."""
import re
import select
import socket
import time

TRAP_OID = ".1.3.6.1.6.3.1.1.4.1.0"  # snmpTrapOID.0
VARBIND = re.compile(r"^(\.[0-9.]+) = (?:([A-Za-z0-9-]+): )?(.*)$")


def parse_varbinds(text):
    """{oid: (type, value)} of net-snmp's -On output."""
    res = {}
    last = None
    for line in text.splitlines():
        m = VARBIND.match(line)
        if m:
            last = m.group(1)
            res[last] = (m.group(2) or "", m.group(3).strip())
        elif last:  # continuation of a long hex string
            t, v = res[last]
            res[last] = (t, v + " " + line.strip())
    return res


def notifications(bed):
    """[{oid: value}] of every notification in snmptrapd's log (one line each,
    varbinds tab-separated), oldest first; string values without quotes."""
    res = []
    for line in bed.log("traps.log").splitlines():
        if TRAP_OID not in line:
            continue
        vbs = {}
        for part in line.strip().split("\t"):
            if " = " in part:
                name, value = part.split(" = ", 1)
                vbs[name.strip()] = value.split(": ", 1)[-1].strip().strip('"')
        res.append(vbs)
    return res


def wait_for(predicate, seconds=60, step=0.5):
    """Polls predicate until it is true or `seconds` have passed; returns it."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def fields(text):
    """{Field: value} of smpquery's and perfquery's "Field:....value" lines."""
    res = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9]+):\.+(.*)$", line)
        if m:
            res[m.group(1)] = m.group(2).strip()
    return res


def guid_index(guid):
    """A GUID as the 8 sub-identifiers of a table index."""
    return ".".join(str(b) for b in guid.to_bytes(8, "big"))


def node_guids(bed):
    """{node description: (node GUID, LID)} from ibnetdiscover: a switch's LID
    is on its header line, a CA's on its (first) port line."""
    text = bed.run_on_node("ibnetdiscover")
    res, pending = {}, None
    for line in text.splitlines():
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"[HS]-([0-9a-f]+)"\s+# "([^"]+)"(.*)$', line)
        if m:
            lid = re.search(r"\blid (\d+)", m.group(4))
            res[m.group(3)] = (int(m.group(2), 16), int(lid.group(1)) if lid else None)
            pending = None if lid else m.group(3)
            continue
        lid = re.search(r"# lid (\d+)", line)
        if pending and line.startswith("[") and lid:
            res[pending] = (res[pending][0], int(lid.group(1)))
            pending = None
    return res


def generated(bed):
    """(nodes {name: (type, guid, nports, lid)}, links {frozenset of two (name,
    port)}) from the file of what fabricsim generated (a --big bed's
    SIMFABRIC_TOPOLOGY): the simulator's own account, not ibsnmpd's."""
    nodes, by_guid, links_ = {}, {}, set()
    with open(bed.env["SIMFABRIC_TOPOLOGY"]) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "node":
                name = " ".join(parts[5:])
                nodes[name] = (parts[1], int(parts[2], 16), int(parts[3]), int(parts[4]))
                by_guid[int(parts[2], 16)] = name
            elif parts[0] == "link":
                links_.add(frozenset([(by_guid[int(parts[1], 16)], int(parts[2])),
                                      (by_guid[int(parts[3], 16)], int(parts[4]))]))
    return nodes, links_


def links(bed, *options, fabric=1):
    """{(node description, port): (peer description, peer port)} of every
    link ibnetdiscover shows (options: e.g. -y KEY) on one of the bed's
    fabrics."""
    res, node = {}, None
    for line in bed.run_on_node("ibnetdiscover", *options, fabric=fabric).splitlines():
        m = re.match(r'^(?:Switch|Ca)\s+\d+\s+"[HS]-[0-9a-f]+"\s+# "([^"]+)"', line)
        if m:
            node = m.group(1)
            continue
        m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[HS]-[0-9a-f]+"\[(\d+)\]'
                     r'(?:\([0-9a-f]+\))?\s+#[^"]*"([^"]+)"', line)
        if m and node:
            res[(node, int(m.group(1)))] = (m.group(3), int(m.group(2)))
    return res


LINKINFO_LINE = re.compile(
    r'^0x[0-9a-f]+\s+"\s*([^"]*)"\s+\d+\s+(\d+)\[[^]]*\]\s+==\(.*?(\w+)/\s*(\w+)\)==>'
    r'(?:\s+0x[0-9a-f]+\s+\d+\s+(\d+)\[[^]]*\]\s+"([^"]*)")?', re.M)


def link_states(bed, fabric=1):
    """{(node description, port): (LinkState, peer description or None)} of
    every port iblinkinfo reaches (-l: a line a port, both ends): "Active",
    "Down", "Init", "Armed". A node it cannot reach (dead, or behind a link
    down) is not there; its switch's port is, Down."""
    res = {}
    for m in LINKINFO_LINE.finditer(bed.run_on_node("iblinkinfo", "-l", fabric=fabric,
                                                    timeout=120)):
        res[(m.group(1), int(m.group(2)))] = (m.group(3), m.group(6) or None)
    return res


def perf_counters(bed, lid, port):
    """{field: int} of perfquery's PortCounters of a port"""
    out = bed.run_on_node("perfquery", str(lid), str(port), timeout=60)
    return {k: int(v, 0) for k, v in fields(out).items() if re.match(r"^(0x)?[0-9a-f]+$", v)}


def port_pkeys(bed, lid, port=1):
    """{P_Key base: full?} of a port, from smpquery pkeys."""
    out = bed.run_on_node("smpquery", "pkeys", str(lid), str(port))
    res = {}
    for v in re.findall(r"0x([0-9a-f]{4})", out):
        v = int(v, 16)
        if v & 0x7fff:
            res[v & 0x7fff] = bool(v & 0x8000)
    return res


# ---- requests timed from send to answer -----------------------------------------------
# Written here: no SNMP library for Python in Debian's base, and snmpget would
# time its own start-up (on a busy machine, most of what it measures).

GET, GETNEXT = 0xa0, 0xa1


def _ber(tag, value):
    n = len(value)
    if n < 128:
        return bytes([tag, n]) + value
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + value


def _ber_int(i):
    return _ber(0x02, i.to_bytes(max(1, (i.bit_length() + 8) // 8), "big", signed=True))


def _ber_oid(dotted):
    arcs = [int(a) for a in dotted.strip(".").split(".")]
    out = bytearray([40 * arcs[0] + arcs[1]])
    for a in arcs[2:]:
        chunk = [a & 0x7f]
        a >>= 7
        while a:
            chunk.append(0x80 | (a & 0x7f))
            a >>= 7
        out += bytes(reversed(chunk))
    return _ber(0x06, bytes(out))


def _tlv(data, pos):
    """(tag, start of value, end of value) of the BER TLV at pos."""
    tag, n, pos = data[pos], data[pos + 1], pos + 2
    if n & 0x80:
        size = n & 0x7f
        n, pos = int.from_bytes(data[pos:pos + size], "big"), pos + size
    return tag, pos, pos + n


def _response(data):
    """(request-id, error-status, whether every varbind holds a value) of an
    SNMPv2c response; (None, None, False) if it is not one. A varbind of
    noSuchObject, noSuchInstance or endOfMibView holds none."""
    try:
        _, pos, _ = _tlv(data, 0)                # Message SEQUENCE
        for _ in range(2):                       # version, community
            pos = _tlv(data, pos)[2]
        _, pos, _ = _tlv(data, pos)              # the PDU
        values = []
        for _ in range(3):                       # request-id, error-status, error-index
            tag, start, end = _tlv(data, pos)
            if tag != 0x02:
                return None, None, False
            values.append(int.from_bytes(data[start:end], "big", signed=True))
            pos = end
        _, pos, end = _tlv(data, pos)            # the varbind list
        held = True
        while pos < end:
            _, vb, vb_end = _tlv(data, pos)
            value_at = _tlv(data, vb)[2]         # past the name
            held = held and data[value_at] not in (0x80, 0x81, 0x82)
            pos = vb_end
        return values[0], values[1], held
    except IndexError:
        return None, None, False


def _request_id(data):
    """The request-id of an SNMPv2c message (None if it is not one)."""
    return _response(data)[0]


def _message(command, request_id, oids, community):
    """An SNMPv2c request of oids (values NULL)."""
    vbs = b"".join(_ber(0x30, _ber_oid(o) + b"\x05\x00") for o in oids)
    pdu = _ber(command, _ber_int(request_id) + _ber_int(0) + _ber_int(0) + _ber(0x30, vbs))
    return _ber(0x30, _ber_int(1) + _ber(0x04, community.encode()) + pdu)


def timed_requests(target, oids, done, interval=0.05, timeout=2.0, command=GETNEXT,
                   community="public"):
    """A manager polling: an SNMPv2c GET or GETNEXT of oids every `interval` s
    until done() is true, over one UDP socket, each timed from send to
    answer. Returns [(sent, seconds)], sent as time.monotonic(), seconds None
    where no answer came within timeout."""
    host, port = target.split(":")[-2:]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(timeout)
    res, request_id = [], 1
    while not done():
        request_id += 1
        msg = _message(command, request_id, oids, community)
        sent_at, sent = time.monotonic(), time.perf_counter()
        sock.sendto(msg, (host, int(port)))
        took = None
        while took is None:
            try:
                sock.settimeout(max(0.001, timeout - (time.perf_counter() - sent)))
                data = sock.recv(65535)
            except socket.timeout:
                break
            if _request_id(data) == request_id:  # this request's (an older one: read on)
                took = time.perf_counter() - sent
        res.append((sent_at, took))
        time.sleep(interval)
    sock.close()
    return res


def paired_requests(target, oids, peer_oids, done, interval=0.05, timeout=5.0,
                    community="public"):
    """Two requests at once on one UDP socket: every `interval` s until
    done() is true, a GET of oids and a GET of peer_oids sent together,
    each timed from send to answer. The peer (objects the agent serves
    itself, e.g. snmpd's sysUpTime) times what the machine's load and the
    socket alone cost at that moment. An answer counts only with
    error-status noError and a value in every varbind (snmpd answers
    genErr when its subagent does not answer in time). Returns [(sent,
    seconds, peer seconds)], sent as time.monotonic(), seconds None where
    no such answer came within timeout."""
    host, port = target.split(":")[-2:]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    res, request_id = [], 0
    while not done():
        request_id += 2
        ids = (request_id, request_id + 1)
        sent_at, sent = time.monotonic(), time.perf_counter()
        for rid, which in zip(ids, (oids, peer_oids)):
            sock.sendto(_message(GET, rid, which, community), (host, int(port)))
        took, pending = [None, None], set(ids)
        while pending:
            left = timeout - (time.perf_counter() - sent)
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                break
            rid, status, held = _response(sock.recv(65535))
            if rid in pending:  # this tick's (an older one: read on)
                pending.discard(rid)
                if status == 0 and held:
                    took[ids.index(rid)] = time.perf_counter() - sent
        res.append((sent_at, took[0], took[1]))
        time.sleep(interval)
    sock.close()
    return res
