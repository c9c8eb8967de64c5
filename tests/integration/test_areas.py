"""The areas stand on the topology, not on each other: with pmEnable no (no
counter sweeps), the link table and every node's context are served all
the same, checked against ibnetdiscover and smpquery on the same fabric;
the counters' tables and cache rows are absent."""
import pytest

from conftest import (fields, guid_index, links, node_guids, start_testbed, stop_testbed,
                      wait_for)

FABRIC_ENTRY = ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1.1."
NODE_ENTRY = ".1.3.6.1.4.1.8072.9999.9999.117.1.6.1.1."
PM_PORT_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.3"
PM_COUNTERS = ".1.3.6.1.3.117.1.4"
CACHE_NAMES = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1.2"
SYS_DESCR = ".1.3.6.1.2.1.1.1.0"
IF_OPER = ".1.3.6.1.2.1.2.2.1.8."
OPER = {"Active": 1, "Down": 2, "Initialize": 5, "Init": 5, "Armed": 5}


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca1", extra_conf=["pmEnable no", "cacheLifetime fabricPorts 5",
                                                  "nodeContextTypes switch ca router"])
    try:
        assert wait_for(lambda: "node contexts: 4 registered" in b.log("ibsnmpd.log"),
                        seconds=60), b.log("ibsnmpd.log")
        yield b
    finally:
        stop_testbed(b)


def test_the_link_table_is_served_without_counter_sweeps(bed):
    nodes = node_guids(bed)
    want = links(bed)
    assert want
    for (desc, port), (peer, peer_port) in want.items():
        guid = nodes[desc][0]
        row = "%s.%d" % (guid_index(guid), port)
        remote_port = FABRIC_ENTRY + "17." + row
        assert wait_for(lambda: bed.get(remote_port)[remote_port][1] == str(peer_port),
                        seconds=30), (desc, port)
        vals = bed.get(FABRIC_ENTRY + "6." + row, FABRIC_ENTRY + "16." + row)
        assert vals[FABRIC_ENTRY + "6." + row][1] == "4"  # linkState active
        assert vals[FABRIC_ENTRY + "16." + row][1].strip('"') == peer


def test_every_node_has_its_context(bed):
    nodes = node_guids(bed)
    contexts = bed.walk(NODE_ENTRY + "6")
    assert sorted(v[1].strip('"') for v in contexts.values()) == \
        sorted("ib-%016x" % g for g, _ in nodes.values())
    sw_guid, sw_lid = nodes["sw1"]
    ctx = "ib-%016x" % sw_guid
    out = bed.v3("snmpget", ctx, SYS_DESCR)
    assert out.returncode == 0, out.stderr
    assert "InfiniBand switch" in out.stdout
    oper = {int(k.rsplit(".", 1)[1]): v[1] for k, v in
            bed.v3_walk(ctx, IF_OPER.rstrip(".")).items()}
    assert len(oper) == 8
    for port in (1, 2, 3, 4):
        state = fields(bed.run_on_node("smpquery", "portinfo", str(sw_lid), str(port)))
        assert oper[port] == str(OPER[state["LinkState"]]), port


def test_the_counters_are_not_there(bed):
    assert bed.walk(PM_PORT_TABLE) == {}
    assert bed.walk(PM_COUNTERS) == {}
    names = [v[1].strip('"') for v in bed.walk(CACHE_NAMES).values()]
    assert "fabricPorts" in names and "nodeInfo" in names
    assert "pmCounters" not in names and "pmSamples" not in names
