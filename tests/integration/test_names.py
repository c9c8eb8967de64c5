"""Names operators recognise (nodeNameMap): on fabricsim with real fabrics'
descriptions (every spine "Quantum-2 Mellanox Technologies", hosts "host-N
mlx5_0") and the bed's node-name map naming the leaves, the names ibsnmpd
serves in its node and link tables, the node contexts (system group,
IF-MIB, LLDP-MIB, ENTITY-MIB as SNMP::Info reads them), the notifications
and /metrics are the names ibnetdiscover and iblinkinfo print with
--node-name-map on the same map, told apart where those tools print one name
for several nodes; a renamed node follows the map's file without a SIGHUP
and keeps its counters; a bad line changes nothing and is named. On ibsim's
bed, with opensm's SA, ibqueryerrors --node-name-map prints the names of
the counter table."""
import os
import re
import time
import urllib.request

import pytest

from conftest import (TRAP_OID, generated, guid_index, notifications, start_testbed,
                      stop_testbed, wait_for)
from prometheus_server import free_port

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
NODE_NAME = MIB + "1.6.1.1.10"        # ibsnmpdNodeName
NODE_DESC = MIB + "1.6.1.1.2"         # ibsnmpdNodeDescription
LINK = MIB + "1.5.1.1."               # ibsnmpdFabricPortEntry
PM_NAME = MIB + "1.3.1.1.3"           # ibsnmpdPmNodeDescription
LINK_DOWN = MIB + "0.1"               # ibsnmpdLinkDown
SYS_NAME = ".1.3.6.1.2.1.1.5.0"
IF_DESCR = ".1.3.6.1.2.1.2.2.1.2"
LLDP_REM_SYS_NAME = ".1.0.8802.1.1.2.1.4.1.1.9"


def by_guid(walked, root):
    """{GUID: value} of a table indexed by a node GUID (8 sub-identifiers)"""
    res = {}
    for oid, (_, value) in walked.items():
        arcs = [int(a) for a in oid[len(root) + 1:].split(".")]
        res[int.from_bytes(bytes(arcs[:8]), "big")] = value.strip('"')
    return res


def tool_names(bed, map_path):
    """{GUID: name} as ibnetdiscover --node-name-map prints them"""
    res = {}
    text = bed.run_on_node("ibnetdiscover", "--node-name-map", map_path)
    for line in text.splitlines():
        m = re.match(r'^(?:Switch|Ca)\s+\d+\s+"[HS]-([0-9a-f]+)"\s+# "(.*?)"(?: base port| lid|$)',
                     line)
        if m:
            res[int(m.group(1), 16)] = m.group(2)
    return res


def told_apart(theirs):
    """{GUID: the name ibsnmpd is to serve}: the tools' name, with the GUID's
    last three octets where they print one name for several nodes"""
    count = {}
    for name in theirs.values():
        count[name] = count.get(name, 0) + 1
    return {guid: name if count[name] == 1 else "%s [%06x]" % (name, guid & 0xffffff)
            for guid, name in theirs.items()}


def metrics(bed):
    with urllib.request.urlopen(bed.metrics_url, timeout=30) as r:
        return r.read().decode()


@pytest.fixture(scope="module")
def bed():
    port = free_port()
    b = start_testbed(big={"hosts": 16, "radix": 8, "names": "real"},
                      extra_conf=["cacheLifetime fabricPorts 2", "cacheLifetime pmCounters 2",
                                  "nodeContextTypes switch", "notificationLimit 100 60",
                                  "prometheusListen 127.0.0.1:%d" % port])
    b.metrics_url = "http://127.0.0.1:%d/metrics" % port
    try:
        assert wait_for(lambda: "node contexts: 8 registered" in b.log("ibsnmpd.log"),
                        seconds=90), b.log("ibsnmpd.log")
        yield b
    finally:
        stop_testbed(b)


def test_the_node_and_link_tables_name_nodes_as_the_tools_do(bed):
    map_path = bed.env["SIMFABRIC_NODE_NAME_MAP"]
    theirs = tool_names(bed, map_path)
    nodes, _ = generated(bed)
    assert len(theirs) == len(nodes) == 24
    # the fabric is one of identical switch descriptions
    descs = by_guid(bed.walk(NODE_DESC), NODE_DESC)
    assert sorted(set(d for g, d in descs.items() if nodes_type(nodes, g) == "switch")) == \
        ["Quantum-2 Mellanox Technologies"]
    want = told_apart(theirs)
    assert wait_for(lambda: by_guid(bed.walk(NODE_NAME), NODE_NAME) == want, seconds=30), \
        (by_guid(bed.walk(NODE_NAME), NODE_NAME), want)
    assert len(set(want.values())) == len(want)
    # the link table's ends: what iblinkinfo prints at each end of each link
    text = bed.run_on_node("iblinkinfo", "--node-name-map", map_path, "--switches-only")
    seen = 0
    current = None
    names = by_guid(bed.walk(LINK + "3"), LINK + "3")
    for line in text.splitlines():
        m = re.match(r"^Switch: 0x([0-9a-f]+) (.*):$", line)
        if m:
            current = int(m.group(1), 16)
            assert theirs[current] == m.group(2)
            continue
        m = re.match(r"^\s+\d+\s+(\d+)\[.*==>\s+\d+\s+(\d+)\[.*\] \"(.*)\" \( \)$", line)
        if m and current:
            port = int(m.group(1))
            index = "%s.%d" % (guid_index(current), port)
            remote = bed.get(LINK + "16." + index)[LINK + "16." + index][1].strip('"')
            remote_guid = int(bed.get(LINK + "15." + index, hex_strings=True)
                              [LINK + "15." + index][1].replace(" ", "").replace('"', ""), 16)
            assert theirs[remote_guid] == m.group(3)
            assert remote == want[remote_guid], (line, remote)
            seen += 1
    _, cables = generated(bed)
    assert seen == sum(1 for c in cables for name, _ in c if nodes[name][0] == "switch")
    assert names[current] == want[current]
    # the counter table's node column too
    pm = by_guid(bed.walk(PM_NAME), PM_NAME)
    assert pm and all(pm[g] == want[g] for g in pm)


def nodes_type(nodes, guid):
    return next(t for t, g, _, _ in nodes.values() if g == guid)


def test_contexts_and_snmp_info_show_the_names(bed):
    from test_nms_map import snmp_info
    theirs = tool_names(bed, bed.env["SIMFABRIC_NODE_NAME_MAP"])
    want = told_apart(theirs)
    nodes, _ = generated(bed)
    spines = [g for n, (t, g, _, _) in nodes.items() if n.startswith("spine-")]
    leaf = nodes["leaf-1-1"][1]
    for guid in (leaf, spines[0]):
        context = "ib-%016x" % guid
        assert bed.v3_walk(context, SYS_NAME)[SYS_NAME][1].strip('"') == want[guid]
        descrs = [v.strip('"') for _, v in bed.v3_walk(context, IF_DESCR).values()]
        assert descrs[0].startswith("%s port 1 (InfiniBand switch" % want[guid])
        # each neighbour by the name it has here and in its own context
        remote = [v.strip('"') for _, v in bed.v3_walk(context, LLDP_REM_SYS_NAME).values()]
        assert remote and all(r in want.values() for r in remote)
        got = snmp_info(bed, guid)
        assert got["name"] == want[guid]
        assert sorted(got["c_platform"]) and all(
            got["c_port"][k].split(" port ")[0] in want.values() for k in got["c_port"])
    # no two devices share a name on this fabric of identical switches
    names = [snmp_info(bed, g)["name"] for g in spines]
    assert len(set(names)) == len(spines)


def test_notifications_and_metrics_name_the_nodes(bed):
    want = told_apart(tool_names(bed, bed.env["SIMFABRIC_NODE_NAME_MAP"]))
    nodes, _ = generated(bed)
    text = metrics(bed)
    labels = {}
    for m in re.finditer(r'node_guid="0x([0-9a-f]+)",node="([^"]*)"', text):
        labels.setdefault(int(m.group(1), 16), set()).add(m.group(2))
    assert {g: next(iter(v)) for g, v in labels.items()} == \
        {g: want[g] for g in labels}
    assert all(len(v) == 1 for v in labels.values())
    before = len(notifications(bed))
    bed.simfabric("sim", 'Unlink "host-5"')
    try:
        assert wait_for(lambda: any(n.get(TRAP_OID) == LINK_DOWN
                                    for n in notifications(bed)[before:]), seconds=60)
        down = [n for n in notifications(bed)[before:] if n.get(TRAP_OID) == LINK_DOWN]
        values = [v for n in down for v in n.values()]
        assert "leaf-1-2" in values and "host-5 mlx5_0" in values, down
    finally:
        bed.simfabric("sim", 'ReLink "host-5"')


def test_a_renamed_node_follows_the_map_and_keeps_its_counters(bed):
    map_path = bed.env["SIMFABRIC_NODE_NAME_MAP"]
    nodes, _ = generated(bed)
    leaf = nodes["leaf-1-1"][1]
    counter = re.compile(r'^infiniband_port_transmit_bytes_total\{node_guid="0x%016x",'
                         r'node="([^"]*)",port="5"\} (\d+)' % leaf, re.M)
    first = counter.search(metrics(bed))
    assert first and first.group(1) == "leaf-1-1"
    with open(map_path) as f:
        text = f.read()
    # a bad line: the map is not used, the names stay, the line is named
    with open(map_path, "w") as f:
        f.write(text + "leaf-9 0x1\n")
    line = len(text.splitlines()) + 1
    assert wait_for(lambda: "%s:%d: a line must start with a node GUID" % (map_path, line)
                    in bed.log("ibsnmpd.log"), seconds=30)
    assert by_guid(bed.walk(NODE_NAME), NODE_NAME)[leaf] == "leaf-1-1"
    # renamed in the file: followed without a SIGHUP (the file is watched)
    with open(map_path, "w") as f:
        f.write(text.replace('"leaf-1-1"', '"rack12-leaf-a"'))
    assert wait_for(lambda: by_guid(bed.walk(NODE_NAME), NODE_NAME)[leaf] == "rack12-leaf-a",
                    seconds=30)
    assert tool_names(bed, map_path)[leaf] == "rack12-leaf-a"
    assert bed.v3_walk("ib-%016x" % leaf, SYS_NAME)[SYS_NAME][1].strip('"') == "rack12-leaf-a"
    assert wait_for(lambda: counter.search(metrics(bed)).group(1) == "rack12-leaf-a", seconds=30)
    # the same counter: its value went on (node_guid is the series' identity)
    assert int(counter.search(metrics(bed)).group(2)) >= int(first.group(2))
    # and back on SIGHUP
    with open(map_path, "w") as f:
        f.write(text)
    os.kill(bed.pid_of("ibsnmpd"), 1)
    assert wait_for(lambda: by_guid(bed.walk(NODE_NAME), NODE_NAME)[leaf] == "leaf-1-1",
                    seconds=30)


def test_ibqueryerrors_prints_the_names_of_the_counter_table():
    """ibsim's bed, opensm's SA: ibqueryerrors names the nodes with errors
    as the map does, and so does the counter table; the map is given after
    ibsnmpd started (its file appears)."""
    b = start_testbed(extra_conf=["cacheLifetime pmCounters 2", "nodeNameMap {dir}/node-map"])
    try:
        guids = {}
        for line in b.run_on_node("ibnetdiscover").splitlines():
            m = re.match(r'^(?:Switch|Ca)\s+\d+\s+"[HS]-([0-9a-f]+)"\s+# "([^"]*)"', line)
            if m:
                guids[m.group(2)] = int(m.group(1), 16)
        path = os.path.join(b.dir, "node-map")
        with open(path, "w") as f:
            f.write('0x%016x "edge-switch-7"\n0x%016x "login-2"\n'
                    % (guids["sw1"], guids["hca2"]))
        b.simfabric("sim", 'PerformanceSet "sw1"[2] PortCounters.SymbolErrorCounter=77')
        b.simfabric("sim", 'PerformanceSet "hca2"[1] PortCounters.SymbolErrorCounter=78')
        text = b.run_on_node("ibqueryerrors", "--node-name-map", path, ok_codes=(0, 1))
        assert '"edge-switch-7"' in text and '"login-2"' in text, text
        pm = by_guid(b.walk(PM_NAME), PM_NAME)
        assert wait_for(lambda: by_guid(b.walk(PM_NAME), PM_NAME).get(guids["sw1"]) ==
                        "edge-switch-7", seconds=30), pm
        pm = by_guid(b.walk(PM_NAME), PM_NAME)
        assert pm[guids["hca2"]] == "login-2"
        assert pm[guids["hca1"]] == "hca1"
    finally:
        stop_testbed(b)
