"""Every node of the subnet as an SNMP device: one context per node
(ib-<node GUID>) with the system group, IF-MIB and SMA-MIB of that node, and
IBSNMPD-MIB::ibsnmpdNodeTable in the default context; on the 612-node fat
tree, checked against ibnetdiscover, smpquery, perfquery and ibroute on the
same fabric, through the bed's SNMPv3 user (SNMP_V3_ARGS of simfabric)."""
import os
import re

import pytest

from conftest import (fields, links, node_guids, parse_varbinds, start_testbed, stop_testbed,
                      tool_path, wait_for)

NODE_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.6.1.1."
PRODUCTS = ".1.3.6.1.4.1.8072.9999.9999.117.3."
SYS = ".1.3.6.1.2.1.1."
IF_NUMBER = ".1.3.6.1.2.1.2.1.0"
IF_ENTRY = ".1.3.6.1.2.1.2.2.1."
IFX_ENTRY = ".1.3.6.1.2.1.31.1.1.1."
SMA_NODE_TYPE = ".1.3.6.1.3.117.3.1.1.4.0"
LFT_PORT = ".1.3.6.1.3.117.3.1.9.1.1.2"  # ibSmaLinForwEgressPort
SMA_PORT_ENTRY = ".1.3.6.1.3.117.3.1.5.1.1."  # ibSmaPortInfoEntry
SMA_STATE = {"Down": 2, "Initialize": 3, "Armed": 4, "Active": 5}
SMA_PHYS = {"Sleep": 2, "Polling": 3, "Disabled": 4, "LinkUp": 6}
OPER = {"Active": 1, "ActDefer": 1, "Initialize": 5, "Init": 5, "Armed": 5, "Down": 2}
LANES = {"1X": 1, "4X": 4, "8X": 8, "12X": 12, "2X": 2}
LANE_MBPS = {"2.5": 2500, "5.0": 5000, "10.0": 10000}
HOLD_S = 20


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(topology="fattree-612.net", node="h1-1",
                      preload=tool_path("sim_issm_shim.so", "SIM_ISSM_SHIM"),
                      extra_conf=["cacheLifetime fabricPorts 10",
                                  "cacheLifetime pmCounters 5",
                                  "nodeContextHold %d" % HOLD_S,
                                  "nodeContextIdle 30",
                                  "nodeContextTypes switch ca router"],
                      debug="ibsnmpd:nodes")
    try:
        assert wait_for(lambda: "node contexts: 612 registered" in b.log("ibsnmpd.log"),
                        seconds=90), b.log("ibsnmpd.log")
        yield b
    finally:
        stop_testbed(b)


def ctx(guid):
    return "ib-%016x" % guid


def v3_get(bed, context, *oids):
    out = bed.v3("snmpget", context, *oids)
    assert out.returncode == 0, out.stderr
    return {k: v[1] for k, v in parse_varbinds(out.stdout).items()}


def column(walked, entry, col):
    """{last index arc: value} of one column of a walk."""
    prefix = entry + "%d." % col
    return {int(k[len(prefix):]): v[1] for k, v in walked.items() if k.startswith(prefix)}


def portinfo(bed, lid, port):
    return fields(bed.run_on_node("smpquery", "portinfo", str(lid), str(port)))


peers = links  # {(node, port): (peer, peer port)} of ibnetdiscover


def test_node_table_lists_every_node_and_its_context(bed):
    guids = node_guids(bed)
    walked = bed.walk(NODE_TABLE[:-1])

    def col(c):
        prefix = NODE_TABLE + "%d." % c
        return {int.from_bytes(bytes(int(x) for x in k[len(prefix):].split(".")), "big"): v[1]
                for k, v in walked.items() if k.startswith(prefix)}
    desc, typ, lid, context, reach = col(2), col(3), col(4), col(6), col(7)
    assert len(desc) == len(guids) == 612
    for name, (guid, their_lid) in guids.items():
        assert desc[guid].strip('"') == name
        assert context[guid].strip('"') == ctx(guid)
        assert reach[guid] == "1"
        if their_lid is not None:
            assert int(lid[guid]) == their_lid
        assert typ[guid] == ("2" if name.startswith(("leaf", "spine")) else "1")


def test_far_leaf_switch_as_a_device(bed):
    guids = node_guids(bed)
    guid, lid = guids["leaf24"]
    got = v3_get(bed, ctx(guid), SYS + "1.0", SYS + "2.0", SYS + "5.0", SYS + "3.0", IF_NUMBER)
    assert "leaf24" in got[SYS + "1.0"] and "switch" in got[SYS + "1.0"]
    assert got[SYS + "2.0"] == PRODUCTS + "1"
    assert got[SYS + "5.0"].strip('"') == "leaf24"
    assert int(got[IF_NUMBER]) == 36
    ifs = bed.v3_walk(ctx(guid), IF_ENTRY[:-1])
    ifx = bed.v3_walk(ctx(guid), IFX_ENTRY[:-1])
    oper, speed, alias = column(ifs, IF_ENTRY, 8), column(ifx, IFX_ENTRY, 15), \
        column(ifx, IFX_ENTRY, 18)
    assert sorted(oper) == list(range(1, 37))
    assert column(ifs, IF_ENTRY, 3) == {p: "199" for p in range(1, 37)}
    cabled = peers(bed)
    for port in range(1, 37):
        theirs = portinfo(bed, lid, port)
        assert int(oper[port]) == OPER[theirs["LinkState"]], port
        if theirs["LinkState"] == "Active":
            want = LANES[theirs["LinkWidthActive"]] * \
                LANE_MBPS[theirs["LinkSpeedActive"].split()[0]]
            assert int(speed[port]) == want, port
            peer = cabled[("leaf24", port)]
            assert alias[port].strip('"') == "%s port %d" % peer
        else:
            assert int(speed[port]) == 0 and alias[port] in ('""', "")


def test_far_ca_counters_and_links(bed):
    guids = node_guids(bed)
    guid, lid = guids["h20-5"]
    got = v3_get(bed, ctx(guid), SYS + "2.0", SYS + "5.0", IF_NUMBER, IF_ENTRY + "8.1",
                 IFX_ENTRY + "18.1", IFX_ENTRY + "15.1")
    assert got[SYS + "2.0"] == PRODUCTS + "2"
    assert got[SYS + "5.0"].strip('"') == "h20-5"
    assert int(got[IF_NUMBER]) == 1
    theirs = portinfo(bed, lid, 1)
    assert int(got[IF_ENTRY + "8.1"]) == OPER[theirs["LinkState"]]
    assert got[IFX_ENTRY + "18.1"].strip('"') == "%s port %d" % peers(bed)[("h20-5", 1)]
    bed.simfabric("sim", 'PerformanceSet "h20-5"[1] PortCountersExtended.PortXmitData='
                  '123456789012')
    ext = fields(bed.run_on_node("perfquery", "-x", str(lid), "1"))
    words = int(ext["PortXmitData"])
    assert words >= 123456789012

    def octets():
        v = v3_get(bed, ctx(guid), IFX_ENTRY + "10.1")[IFX_ENTRY + "10.1"]
        return int(v) if v.isdigit() else -1
    assert wait_for(lambda: octets() >= words * 4, seconds=60), octets()
    # the sweep reads it again later: no more than what the node counts since
    ext = fields(bed.run_on_node("perfquery", "-x", str(lid), "1"))
    assert words * 4 <= octets() <= int(ext["PortXmitData"]) * 4


def test_lft_in_the_switch_context_equals_ibroute(bed):
    guids = node_guids(bed)
    guid, lid = guids["spine7"]
    # a cold context: its SMA-MIB is read from the first request on
    out = bed.v3("snmpget", ctx(guid), SMA_NODE_TYPE)
    assert out.returncode == 0, out.stderr

    def lft():
        return {int(k.rsplit(".", 1)[1]): int(v[1].split()[0])
                for k, v in bed.v3_walk(ctx(guid), LFT_PORT).items()}
    assert wait_for(lambda: len(lft()) > 600, seconds=60)
    expect = {}
    for line in bed.run_on_node("ibroute", str(lid)).splitlines():
        m = re.match(r"^0x([0-9a-f]{4}) (\d{3}) :", line)
        if m:
            expect[int(m.group(1), 16)] = int(m.group(2))
    got = {k: v for k, v in lft().items() if v != 255}
    assert got == expect and len(expect) > 600
    assert v3_get(bed, ctx(guid), SMA_NODE_TYPE)[SMA_NODE_TYPE] == "2"  # switch(2)


def test_switch_context_port_info_is_the_fabric_sweeps(bed):
    """SMA-MIB's port table in a switch's context equals smpquery portinfo; its
    ports 1..36 are the fabric sweep's PortInfo (no second SMP), port 0 alone
    is read for it."""
    guids = node_guids(bed)
    guid, lid = guids["spine5"]
    bed.v3("snmpget", ctx(guid), SMA_NODE_TYPE)  # a cold context: starts its reads
    said = "%s: SMA port info: PortInfo of 37 ports, 36 of them read elsewhere" % ctx(guid)
    assert wait_for(lambda: said in bed.log("ibsnmpd.log"), seconds=60)

    def rows():
        walked = bed.v3_walk(ctx(guid), SMA_PORT_ENTRY[:-1])
        return {c: column(walked, SMA_PORT_ENTRY, c) for c in (6, 7)}
    assert wait_for(lambda: len(rows()[6]) == 36, seconds=30)
    got = rows()
    for port in range(1, 37):
        theirs = portinfo(bed, lid, port)
        assert int(got[6][port]) == SMA_STATE[theirs["LinkState"]], port
        assert int(got[7][port]) == SMA_PHYS[theirs["PhysLinkState"]], port


def test_interface_gets_send_no_smp_and_sma_mib_is_read_while_asked(bed):
    guids = node_guids(bed)
    guid, _ = guids["spine11"]
    asked = "%s: SMA-MIB asked" % ctx(guid)
    got = v3_get(bed, ctx(guid), SYS + "3.0", IF_ENTRY + "8.5", IFX_ENTRY + "6.5",
                 IFX_ENTRY + "10.5")
    assert got[IFX_ENTRY + "6.5"].isdigit()
    assert asked not in bed.log("ibsnmpd.log")
    # cold: no instance yet, and no wait; then read
    assert "No Such" in v3_get(bed, ctx(guid), SMA_NODE_TYPE)[SMA_NODE_TYPE]
    assert asked in bed.log("ibsnmpd.log")
    assert wait_for(lambda: v3_get(bed, ctx(guid), SMA_NODE_TYPE)[SMA_NODE_TYPE] == "2",
                    seconds=30)
    # not asked for nodeContextIdle (30 s here): dropped
    dropped = "%s: SMA-MIB not asked for a while, dropped" % ctx(guid)
    assert wait_for(lambda: dropped in bed.log("ibsnmpd.log"), seconds=60)
    assert "No Such" in v3_get(bed, ctx(guid), SMA_NODE_TYPE)[SMA_NODE_TYPE]


def test_unreachable_node_keeps_its_context_for_the_hold_time(bed):
    guids = node_guids(bed)
    guid, _ = guids["h23-7"]
    reach = NODE_TABLE + "7." + ".".join(str(b) for b in guid.to_bytes(8, "big"))
    assert v3_get(bed, ctx(guid), IF_ENTRY + "8.1")[IF_ENTRY + "8.1"] == "1"
    bed.simfabric("sim", 'Unlink "h23-7"[1]')
    try:
        assert wait_for(lambda: bed.get(reach)[reach][1] == "2", seconds=60)
        # still served, stale: its interface down
        got = v3_get(bed, ctx(guid), SYS + "5.0", IF_ENTRY + "8.1")
        assert got[SYS + "5.0"].strip('"') == "h23-7" and got[IF_ENTRY + "8.1"] == "2"

        def gone():
            out = bed.v3("snmpget", ctx(guid), SYS + "5.0")
            return out.returncode != 0 or "h23-7" not in out.stdout
        assert wait_for(gone, seconds=HOLD_S + 60)
        assert wait_for(lambda: "No Such" in bed.get(reach)[reach][1], seconds=30)
    finally:
        bed.simfabric("sim", 'ReLink "h23-7"[1]')
    # back after the rediscovery its link's trap 128 brings
    assert wait_for(lambda: bed.v3("snmpget", ctx(guid), SYS + "5.0").returncode == 0 and
                    "h23-7" in bed.v3("snmpget", ctx(guid), SYS + "5.0").stdout, seconds=90)


def test_every_context_registered_again_after_snmpd_restarts(bed):
    guids = node_guids(bed)
    leaf = guids["leaf24"][0]
    # and the v2c way of conf/snmpd.conf.contexts: a community mapped to a context
    with open(os.path.join(bed.dir, "snmpd.conf"), "a") as f:
        f.write("view leafView included .1.3.6.1.2.1\n"
                "com2sec -Cn %s leafSec 127.0.0.1 leaf24-community\n"
                "group leafGroup v2c leafSec\n"
                "access leafGroup %s v2c noauth exact leafView none none\n"
                % (ctx(leaf), ctx(leaf)))
    log_before = len(bed.log("ibsnmpd.log"))
    bed.simfabric("stop", "snmpd")
    bed.simfabric("start", "snmpd")
    switches = [g for name, (g, _) in guids.items() if name.startswith(("leaf", "spine"))]

    def all_back():
        return all(bed.v3("snmpget", ctx(g), SYS + "5.0").returncode == 0 for g in switches)
    assert wait_for(all_back, seconds=60)
    # registered again a slice a pass (not all at once by net-snmp), each once:
    # snmpd refused none as a duplicate
    log = bed.log("ibsnmpd.log")[log_before:]
    assert re.search(r"^node contexts: %d registered" % len(guids), log, re.M), log[-2000:]
    assert "registering pdu failed" not in log, log[-2000:]
    for name in ("h1-1", "h12-3", "h24-24"):
        g = guids[name][0]
        assert v3_get(bed, ctx(g), SYS + "5.0")[SYS + "5.0"].strip('"') == name
    out = bed.snmp("snmpget", SYS + "5.0", IF_NUMBER, community="leaf24-community")
    assert out.returncode == 0, out.stderr
    got = parse_varbinds(out.stdout)
    assert got[SYS + "5.0"][1].strip('"') == "leaf24" and got[IF_NUMBER][1] == "36"
    # the default community still reads the default context
    assert bed.get(SYS + "5.0")[SYS + "5.0"][1].strip('"').startswith("simfabric-")


NS_MODULE_NAME = ".1.3.6.1.4.1.8072.1.2.1.1.4."  # NET-SNMP-AGENT-MIB::nsModuleName


def test_each_context_is_two_agentx_registrations(bed):
    """snmpd's own registry (nsModuleTable, indexed by context, registration
    point, priority) holds two registrations of ibsnmpd per context: internet
    (1.3.6.1), under which it answers mib-2, SMA-MIB and ibsnmpdPortExtTable,
    and lldpMIB (1.0.8802.1.1.2); the context's roots 0, 1 and 2 are
    snmpd's own (1 is why LLDP-MIB cannot join internet's)."""
    out = bed.snmp("snmpbulkwalk", NS_MODULE_NAME[:-1], timeout=5)
    assert out.returncode == 0, out.stderr
    points = {}
    for name in parse_varbinds(out.stdout):
        arcs = [int(a) for a in name[len(NS_MODULE_NAME):].split(".")]
        context = "".join(chr(a) for a in arcs[1:1 + arcs[0]])
        rest = arcs[1 + arcs[0]:]
        points.setdefault(context, []).append(".".join(map(str, rest[1:1 + rest[0]])))
    contexts = {c: p for c, p in points.items() if c.startswith("ib-")}
    assert len(contexts) == 612
    for c, p in contexts.items():
        assert sorted(x for x in p if x not in ("0", "1", "2")) == ["1.0.8802.1.1.2",
                                                                    "1.3.6.1"], (c, p)
