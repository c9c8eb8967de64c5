"""fabricsim, the project's simulator of big fabrics, checked against
infiniband-diags run through it (scripts/simfabric up --big): the topology
ibnetdiscover finds is the one generated, smpquery and perfquery read the
model (speeds, widths, counters set from the console and moving with time),
Unlink/ReLink take links down and up for iblinkinfo and for ibsnmpd."""
import re
import time

import pytest

from conftest import generated, start_testbed, stop_testbed, wait_for

FABRIC_PORT_STATE = ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1.1.6"  # ibsnmpdFabricPortState


def discovered(bed):
    """The same, from ibnetdiscover's output."""
    nodes, links, node = {}, set(), None
    for line in bed.run_on_node("ibnetdiscover", timeout=300).splitlines():
        m = re.match(r'^(Switch|Ca)\s+(\d+)\s+"[HS]-([0-9a-f]+)"\s+# "([^"]+)"(.*)', line)
        if m:
            node = m.group(4)
            lid = re.search(r"lid (\d+)", m.group(5))
            nodes[node] = ("switch" if m.group(1) == "Switch" else "ca", int(m.group(3), 16),
                           int(m.group(2)), int(lid.group(1)) if lid else None)
            continue
        m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[HS]-[0-9a-f]+"\[(\d+)\]'
                     r'(?:\([0-9a-f]+\))?\s+#[^"]*"([^"]+)"', line)
        if m and node:
            links.add(frozenset([(node, int(m.group(1))), (m.group(3), int(m.group(2)))]))
    return nodes, links


@pytest.fixture(scope="module")
def bed():
    # 96 hosts on radix-16 switches: 12 leaves in 2 pods, 16 spines, 8 cores
    b = start_testbed(big={"hosts": 96, "radix": 16},
                      extra_conf=["cacheLifetime pmCounters 3", "madTimeout 300"])
    try:
        yield b
    finally:
        stop_testbed(b)


def test_ibnetdiscover_finds_the_generated_fabric(bed):
    nodes, links = generated(bed)
    found_nodes, found_links = discovered(bed)
    assert len(nodes) == 96 + 12 + 16 + 8
    assert found_links == links
    assert set(found_nodes) == set(nodes)
    for name, (kind, guid, nports, lid) in nodes.items():
        f_kind, f_guid, f_nports, f_lid = found_nodes[name]
        assert (f_kind, f_guid, f_nports) == (kind, guid, nports), name
        if kind == "switch":
            assert f_lid == lid, name


def test_smpquery_reads_the_model(bed):
    nodes, _ = generated(bed)
    kind, guid, nports, lid = nodes["leaf-2-3"]
    info = bed.run_on_node("smpquery", "nodeinfo", str(lid))
    assert re.search(r"NodeType:\.*Switch", info)
    assert re.search(r"NumPorts:\.*16\b", info)
    assert re.search(r"VendorId:\.*0x0002c9", info)
    assert re.search(r"DevId:\.*0xd2f2", info)
    assert re.search(r"Guid:\.*0x%016x" % guid, info)
    port = bed.run_on_node("smpquery", "portinfo", str(lid), "1")
    assert re.search(r"LinkWidthActive:\.*4X", port)
    assert re.search(r"LinkSpeedExtActive:\.*106.25 Gbps", port)  # NDR
    assert re.search(r"LinkState:\.*Active", port)
    host = nodes["host-17"]
    assert re.search(r"Lid:\.*%d\b" % host[3],
                     bed.run_on_node("smpquery", "portinfo", str(host[3]), "1"))


def test_saquery_reads_a_path_record(bed):
    """The SA's PathRecord between two hosts (what ibsnmpd asks of a sample
    of paths for the credit-loop check): their LIDs, SL 0 as OpenSM's ftree,
    updn and minhop give every path; none for a LID nobody has."""
    nodes, _ = generated(bed)
    a, b = nodes["host-3"][3], nodes["host-17"][3]
    out = bed.run_on_node("saquery", "PR", "--slid", str(a), "--dlid", str(b))
    fields = dict(re.findall(r"^\s*(\w+)\.+(\S+)$", out, re.M))
    assert (int(fields["slid"]), int(fields["dlid"]), int(fields["sl"], 16)) == (a, b, 0), out
    out = bed.run_on_node("saquery", "PR", "--slid", str(a), "--dlid", "49000",
                          ok_codes=tuple(range(256)))
    assert "PathRecord dump" not in out, out


def counters(bed, lid, port, *flags):
    out = bed.run_on_node("perfquery", *flags, str(lid), str(port))
    return {k: int(v) for k, v in re.findall(r"^(\w+):\.*(\d+)$", out, re.M)}


def test_perfquery_reads_counters_set_from_the_console_and_moving(bed):
    nodes, _ = generated(bed)
    lid = nodes["spine-1-4"][3]
    bed.simfabric("sim", 'PerformanceSet "spine-1-4"[5] PortCounters.SymbolErrorCounter=7')
    bed.simfabric("sim", 'PerformanceSet "spine-1-4"[5] PortCounters.PortRcvErrors=3')
    assert wait_for(lambda: counters(bed, lid, 5)["SymbolErrorCounter"] == 7, seconds=10)
    assert counters(bed, lid, 5)["PortRcvErrors"] == 3
    assert counters(bed, lid, 6)["SymbolErrorCounter"] == 0
    first = counters(bed, lid, 5, "-x")["PortXmitData"]
    time.sleep(0.5)
    second = counters(bed, lid, 5, "-x")["PortXmitData"]
    assert second > first  # traffic moves the data counters
    bed.simfabric("sim", 'PerformanceSet "spine-1-4"[5] PortCountersExtended.PortXmitData=1000')
    assert wait_for(lambda: counters(bed, lid, 5, "-x")["PortXmitData"] < second, seconds=10)
    # perfquery -R clears them, as on hardware
    bed.run_on_node("perfquery", "-R", str(lid), "5")
    assert counters(bed, lid, 5)["SymbolErrorCounter"] == 0
    errors = bed.run_on_node("ibqueryerrors", "--skip-sl", timeout=120)
    assert "ports checked" in errors


def test_unlink_and_relink_for_iblinkinfo_and_ibsnmpd(bed):
    nodes, _ = generated(bed)
    lid = nodes["leaf-1-2"][3]

    def state(port):
        out = bed.run_on_node("smpquery", "portinfo", str(lid), str(port))
        return re.search(r"LinkState:\.*(\w+)", out).group(1)

    downed = counters(bed, lid, 11)["LinkDownedCounter"]
    assert wait_for(lambda: "subnet discovered" in bed.log("ibsnmpd.log"), seconds=60)
    bed.simfabric("sim", 'Unlink "leaf-1-2"[11]')
    assert wait_for(lambda: state(11) == "Down", seconds=10)
    assert counters(bed, lid, 11)["LinkDownedCounter"] == downed + 1
    info = bed.run_on_node("iblinkinfo", "-l", timeout=120)
    line = [l for l in info.splitlines() if re.search(r'"\s*leaf-1-2"\s+\d+\s+11\[', l)]
    assert line and "Down" in line[0], info[:2000]
    bed.simfabric("sim", 'ReLink "leaf-1-2"[11]')
    assert wait_for(lambda: state(11) == "Active", seconds=10)


def test_ibsnmpd_discovers_the_whole_fabric(bed):
    nodes, links = generated(bed)
    assert wait_for(lambda: "subnet discovered" in bed.log("ibsnmpd.log"), seconds=60)
    m = re.search(r"subnet discovered: (\d+) nodes", bed.log("ibsnmpd.log"))
    assert int(m.group(1)) == len(nodes)
    # ibsnmpd's link table has a row for every port of the fabric
    ports = sum(n[2] for n in nodes.values())
    assert wait_for(lambda: len(bed.walk(FABRIC_PORT_STATE)) == ports, seconds=60)


def test_a_dead_leaf_is_one_log_line_and_sweeps_go_on(bed):
    """A leaf that stops answering (perfquery gets nothing from it either):
    its ports fail together once a request to it has failed every retry,
    the counter sweeps go on and end, one log line says so however many
    sweeps see it, one more when it answers again."""
    nodes, _ = generated(bed)
    lid = nodes["leaf-2-1"][3]
    assert wait_for(lambda: "subnet discovered" in bed.log("ibsnmpd.log"), seconds=60)
    silent = re.compile(r"counter sweep: 1 of \d+ nodes do not answer \(leaf-2-1 LID %d\)" % lid)
    refreshes = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1.5"  # ibsnmpdCacheRefreshes

    def pm_refreshes():
        names = bed.walk(".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1.2")
        index = [k.rsplit(".", 1)[1] for k, v in names.items() if v[1] == '"pmCounters"'][0]
        return int(bed.get("%s.%s" % (refreshes, index))["%s.%s" % (refreshes, index)][1])

    bed.simfabric("sim", 'Dead "leaf-2-1"')
    try:
        out = bed.run_on_node("perfquery", "-t", "200", str(lid), "1", ok_codes=range(256))
        assert "PortXmitData" not in out
        assert wait_for(lambda: silent.search(bed.log("ibsnmpd.log")), seconds=60)
        seen = pm_refreshes()
        assert wait_for(lambda: pm_refreshes() >= seen + 2, seconds=60)
        assert len(silent.findall(bed.log("ibsnmpd.log"))) == 1
    finally:
        bed.simfabric("sim", 'Alive "leaf-2-1"')
    assert wait_for(lambda: "counter sweep: every node answers again" in bed.log("ibsnmpd.log"),
                    seconds=60)


def test_dead_by_pattern_takes_every_node_it_matches(bed):
    """Dead "leaf-2-*" (a whole pod's leaves, as bench/dead_nodes.py takes a
    rail): perfquery gets nothing from any of them, the other leaves answer;
    Alive brings them back."""
    nodes, _ = generated(bed)
    leaves = sorted(n for n in nodes if n.startswith("leaf-2-"))
    other = nodes["leaf-1-1"][3]
    assert len(leaves) > 1
    answers = lambda lid: "PortXmitData" in bed.run_on_node(  # noqa: E731
        "perfquery", "-t", "200", str(lid), "1", ok_codes=range(256))
    bed.simfabric("sim", 'Dead "leaf-2-*"')
    try:
        assert wait_for(lambda: not answers(nodes[leaves[0]][3]), seconds=10)
        assert not any(answers(nodes[n][3]) for n in leaves)
        assert answers(other)
    finally:
        bed.simfabric("sim", 'Alive "leaf-2-*"')
    assert wait_for(lambda: answers(nodes[leaves[0]][3]), seconds=10)
    assert all(answers(nodes[n][3]) for n in leaves)


@pytest.mark.parametrize("layout,hosts,expect", [
    ("fattree2", 40, {"switch": 5 + 8, "ca": 40}),
    # 8 rails of 2 leaves (pods of their own), 8 spines each, 32 cores
    ("rail", 12, {"switch": 8 * 2 + 8 * 8 + 32, "ca": 96}),
])
def test_other_layouts(layout, hosts, expect):
    b = start_testbed(big={"hosts": hosts, "radix": 16, "layout": layout}, with_agent=False)
    try:
        nodes, links = generated(b)
        found_nodes, found_links = discovered(b)
        assert found_links == links
        kinds = {}
        for kind, *_ in found_nodes.values():
            kinds[kind] = kinds.get(kind, 0) + 1
        assert kinds == expect
        if layout == "rail":
            # a server's 8 HCAs: one system image, each on a leaf of its own rail
            peers = {}
            for link in links:
                (a, pa), (b_, pb) = sorted(link)
                if a.startswith("leaf-") and b_.startswith("srv-1-"):
                    peers[b_] = a
            assert len(peers) == 8
            assert {p.split("-")[1].split(".")[0] for p in peers.values()} == \
                {"r%d" % r for r in range(1, 9)}
    finally:
        stop_testbed(b)
