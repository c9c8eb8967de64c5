"""Direct mode: ibsnmpd as its own SNMP agent (agentaddress), not snmpd's
subagent. The bed's ibsnmpd.conf has the same communities, SNMPv3 user and
trap sink as its snmpd (scripts/simfabric up --direct); values are checked
against smpquery, perfquery and ibnetdiscover on the same fabric."""
import subprocess

import pytest

from conftest import (fields, ibsnmpd_bin, node_guids, notified_on_unlink, parse_varbinds,
                      snmp_env, start_testbed, stop_testbed, wait_for)

NODE_TYPE = ".1.3.6.1.3.117.3.1.1.4.0"
NODE_GUID = ".1.3.6.1.3.117.3.1.1.7.0"
PM_XMIT_OCTETS = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1.5."
LINK_DOWN = ".1.3.6.1.4.1.8072.9999.9999.117.0.1"
NLM_NOTIFICATION_ID = ".1.3.6.1.2.1.92.1.3.1.1.9"  # NOTIFICATION-LOG-MIB::nlmLogNotificationID
SYS_NAME = ".1.3.6.1.2.1.1.5.0"
IF_NUMBER = ".1.3.6.1.2.1.2.1.0"


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca1", direct=True,
                      extra_conf=["cacheLifetime fabricPorts 5", "cacheLifetime pmCounters 5"])
    yield b
    stop_testbed(b)


def direct(bed, tool, *args, community="public", extra=()):
    out = subprocess.run([tool, "-v2c", "-c", community, "-On", "-t", "2", "-r", "1"] +
                         list(extra) + [bed.env["SNMP_DIRECT_TARGET"]] + list(args),
                         capture_output=True, text=True, env=snmp_env(), timeout=60)
    return out


def test_serves_its_own_port_not_snmpd(bed):
    out = direct(bed, "snmpget", NODE_TYPE, NODE_GUID, extra=["-Ox"])
    assert out.returncode == 0, out.stderr
    got = parse_varbinds(out.stdout)
    theirs = fields(bed.run_on_node("smpquery", "nodeinfo", "-D", "0"))
    assert int(got[NODE_TYPE][1]) == 1  # channelAdapter(1), as smpquery: NodeType Channel Adapter
    assert theirs["NodeType"] == "Channel Adapter"
    assert int(got[NODE_GUID][1].replace(" ", ""), 16) == int(theirs["Guid"], 16)
    # snmpd (the host's agent) no longer has ibsnmpd's MIBs: nothing attached to it
    assert "No Such" in bed.get(NODE_TYPE)[NODE_TYPE][1]
    # a wrong community gets no answer
    assert direct(bed, "snmpget", NODE_TYPE, community="wrong").returncode != 0
    assert "direct mode: serving SNMP on udp:127.0.0.1:" in bed.log("ibsnmpd.log")
    # requests are not logged one by one (net-snmp's TCP-wrappers lines)
    assert "Connection from" not in bed.log("ibsnmpd.log")


def test_counters_and_contexts(bed):
    guids = node_guids(bed)
    sw, sw_lid = guids["sw1"]
    bed.simfabric("sim", 'PerformanceSet "sw1"[2] PortCountersExtended.PortXmitData=123456789')
    cell = PM_XMIT_OCTETS + ".".join(str(b) for b in sw.to_bytes(8, "big")) + ".2"

    def octets():
        out = direct(bed, "snmpget", cell)
        v = parse_varbinds(out.stdout).get(cell, ("", ""))[1]
        return int(v) if v.isdigit() else -1
    assert wait_for(lambda: octets() >= 123456789 * 4, seconds=30)
    ext = fields(bed.run_on_node("perfquery", "-x", str(sw_lid), "2"))
    assert octets() <= int(ext["PortXmitData"]) * 4
    # the switch as a device, in its context, with the bed's SNMPv3 user
    context = "ib-%016x" % sw
    assert wait_for(lambda: subprocess.run(
        ["snmpget"] + bed.env["SNMP_V3_ARGS"].split() + ["-n", context, "-On",
                                                         bed.env["SNMP_DIRECT_TARGET"],
                                                         SYS_NAME],
        capture_output=True, text=True, env=snmp_env()).returncode == 0, seconds=30)
    out = subprocess.run(["snmpget"] + bed.env["SNMP_V3_ARGS"].split() +
                         ["-n", context, "-On", bed.env["SNMP_DIRECT_TARGET"], SYS_NAME,
                          IF_NUMBER], capture_output=True, text=True, env=snmp_env())
    got = parse_varbinds(out.stdout)
    assert got[SYS_NAME][1].strip('"') == "sw1" and got[IF_NUMBER][1] == "8"


def test_a_bulk_walk_equals_the_walk_through_getnext(bed):
    root = PM_XMIT_OCTETS[:-3]
    bulk = direct(bed, "snmpbulkwalk", root, extra=["-Cr50"])
    nexts = direct(bed, "snmpwalk", root)
    assert bulk.returncode == 0 and nexts.returncode == 0
    a, b = parse_varbinds(bulk.stdout), parse_varbinds(nexts.stdout)
    assert list(a) == list(b) and len(a) >= 11 * 20


def test_notifications_go_to_its_own_trap_sink(bed):
    assert notified_on_unlink(bed, '"sw1"[3]', LINK_DOWN)


def test_it_logs_its_notifications_as_snmpd_does(bed):
    """NOTIFICATION-LOG-MIB's nlmLogTable, served as snmpd serves it: what
    the agent sent (the link notifications of the test above, at least)."""
    assert notified_on_unlink(bed, '"sw1"[2]', LINK_DOWN)
    out = direct(bed, "snmpbulkwalk", NLM_NOTIFICATION_ID)
    assert out.returncode == 0, out.stderr
    logged = [line.split(" = OID: ")[-1] for line in out.stdout.splitlines()]
    assert LINK_DOWN in logged, out.stdout


def test_the_active_alarm_table_as_through_snmpd(bed):
    """ibsnmpdAlarmTable in direct mode: a link down has its row, named by
    both ends, until it is back."""
    active = ".1.3.6.1.4.1.8072.9999.9999.117.1.9.1.0"
    desc = ".1.3.6.1.4.1.8072.9999.9999.117.1.9.3.1.9"

    def count():
        v = parse_varbinds(direct(bed, "snmpget", active).stdout).get(active, ("", ""))[1]
        return int(v) if v.isdigit() else -1
    assert wait_for(lambda: count() == 0, seconds=30)
    bed.simfabric("sim", 'Unlink "sw1"[3]')
    try:
        assert wait_for(lambda: count() == 1, seconds=60)
        rows = parse_varbinds(direct(bed, "snmpbulkwalk", desc).stdout)
        assert [v.strip('"') for _, v in rows.values()] == ["sw1 port 3 <-> hca3 port 1"], rows
    finally:
        bed.simfabric("sim", 'ReLink "sw1"[3]')
    assert wait_for(lambda: count() == 0, seconds=60)


def run_alone(tmp_path, conf, *args):
    path = tmp_path / "ibsnmpd.conf"
    path.write_text(conf)
    return subprocess.run([ibsnmpd_bin(), "-f", "-Le", "-c", str(path)] + list(args),
                          capture_output=True, text=True, env=snmp_env(), timeout=60)


def test_refuses_to_serve_without_access_control(tmp_path):
    # -a on the command line
    out = run_alone(tmp_path, "madTimeout 500\n", "-a", "udp:127.0.0.1:1")
    assert out.returncode == 1
    assert "without access control: refusing to start" in out.stderr
    # agentaddress in the file
    out = run_alone(tmp_path, "agentaddress udp:127.0.0.1:1\n")
    assert out.returncode == 1
    assert "without access control: refusing to start" in out.stderr
    # with a community it goes on (and stops at the missing HCA of this machine)
    out = run_alone(tmp_path, "agentaddress udp:127.0.0.1:0\nrocommunity public 127.0.0.1\n")
    assert "refusing" not in out.stderr
    assert out.returncode == 2, out.stderr


def test_clients_that_do_not_read_hold_nothing_up():
    """Direct mode on TCP too, and /metrics: a client that sends requests
    and never reads their answers, and scrapers that never read theirs, on
    the 612-node fat tree. Every write to them that would wait is refused
    instead (ibsnmpdWritesRefused) and the main loop goes on: a manager's
    GETs on UDP, timed from send to answer once the client's socket is full,
    are all answered within the second."""
    import socket
    import time
    from simfabric.burst import free_tcp_port
    from simfabric.manager import GET, _ber, _ber_int, _ber_oid, timed_requests

    tcp, http = free_tcp_port(), free_tcp_port()
    b = start_testbed(topology="fattree-612.net", node="h1-1", direct=True, extra_conf=[
        "agentaddress tcp:127.0.0.1:%d" % tcp, "prometheusListen 127.0.0.1:%d" % http])
    deaf = []
    try:
        pm_table = PM_XMIT_OCTETS[:-3]
        assert wait_for(lambda: len(parse_varbinds(direct(b, "snmpbulkwalk", pm_table).stdout))
                        > 1000, seconds=120)
        refused = ".1.3.6.1.4.1.8072.9999.9999.117.1.11.3.0"

        def writes_refused():
            v = parse_varbinds(direct(b, "snmpget", refused).stdout).get(refused, ("", ""))[1]
            return int(v) if v.isdigit() else None
        assert writes_refused() == 0
        # the SNMP client: GETBULKs of the counters table (about 5 KB an
        # answer), read by nobody, until its answers find no room
        s = socket.create_connection(("127.0.0.1", tcp))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deaf.append(s)
        vbs = _ber(0x30, _ber(0x30, _ber_oid(pm_table) + b"\x05\x00"))
        sent = 0
        while sent < 6000 and not (writes_refused() or 0):  # None: no answer
            for k in range(sent, sent + 200):
                pdu = _ber(0xa5, _ber_int(k + 1) + _ber_int(0) + _ber_int(60) + vbs)
                s.sendall(_ber(0x30, _ber_int(1) + _ber(0x04, b"public") + pdu))
            sent += 200
        assert wait_for(lambda: (writes_refused() or 0) > 0, seconds=60), sent
        # three scrapers of /metrics (megabytes each) that read nothing
        for _ in range(3):
            h = socket.create_connection(("127.0.0.1", http))
            h.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            h.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
            deaf.append(h)
        time.sleep(3)  # what the client sent is answered, or found no room
        end = time.monotonic() + 10
        gets = timed_requests(b.env["SNMP_DIRECT_TARGET"], [NODE_TYPE],
                              lambda: time.monotonic() >= end, timeout=1.0, command=GET)
        assert gets and all(took is not None for _, took in gets), \
            [took for _, took in gets if took is None]
        assert max(took for _, took in gets) < 1.0, gets
        assert "the main loop has not come round" not in b.log("ibsnmpd.log")
    finally:
        for s in deaf:
            s.close()
        stop_testbed(b)
