"""The routing checks (ibsnmpdRouting) on fabricsim's three-level fat tree,
against infiniband-diags run through the simulator: ibroute for the
switches' tables (the LIDs per port), ibtracert for chosen pairs' paths and
hop counts. Each check stays quiet on the clean fabric and finds the fault
the simulator's console makes (Lft): an entry unassigned, sent to the wrong
host, a loop, a credit loop, uplinks unbalanced; and clears when the table
is as the model routes it again. The subnet checks, after each link sweep,
against smpquery's PortInfo: a LID claimed by a second port, a link below
the MTU or VLs both ends can, an end stuck in Init (PortInfo); and the SMs
against sminfo: a standby, a second master, a master whose ActCount stops,
a takeover (ibsnmpdMasterSmChanged) whose ports still follow the old master
(the simulator's Sm); and the cabling against a reference dump ibnetdiscover
made of the clean fabric, a cable moved (Link) as ibnetdiscover sees it."""
import os
import re
import subprocess
import tempfile
import time
import urllib.request

import pytest

from conftest import generated, notifications, start_testbed, stop_testbed, wait_for, TRAP_OID
from prometheus_server import free_port
from simfabric.routes import LOOP, Routes

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
ROUTING = MIB + "1.12."
RUNS = ROUTING + "8.0"
CA_PAIRS, CA_PAIRS_REACHED = ROUTING + "9.0", ROUTING + "10.0"
CHECK_STATUS = ROUTING + "11.1.3."       # .check
CHECK_OFFENDERS = ROUTING + "11.1.4."
OFFENDER = ROUTING + "12.1."             # .column.check.n
LOAD_LIDS = ROUTING + "13.1.3."          # .guid(8).port
HOP_PAIRS = ROUTING + "14.1.2."          # .hops
ALARM_DESC = MIB + "1.9.3.1.9"
MADS = ROUTING + "7.0"
FAILED, PASSED = MIB + "0.19", MIB + "0.20"
REACH, HOPS, UPDOWN, CREDIT, BALANCE, DUPLICATES, LINKS, SM, CABLING = range(1, 10)
CHECKS = (REACH, HOPS, UPDOWN, CREDIT, BALANCE, DUPLICATES, LINKS, SM, CABLING)
SMS = ROUTING + "15.1."                  # .column.guid(8)
PREVIOUS_MASTER = ROUTING + "16.0"
PUBLISHED = ROUTING + "17.0"             # ibsnmpdRouteTablesPublications
ALARMS_CHANGED = MIB + "1.9.2.0"         # ibsnmpdAlarmsLastChange
MASTER_CHANGED = MIB + "0.21"
HOSTS = 96


@pytest.fixture(scope="module")
def bed():
    # 96 hosts on radix-16 switches: 12 leaves in 2 pods, 16 spines, 8 cores
    port = free_port()
    b = start_testbed(big={"hosts": HOSTS, "radix": 16}, debug="ibsnmpd:route",
                      extra_conf=["routingCheckInterval 3", "routingSettle 1",
                                  "cacheLifetime fabricPorts 2", "routingSmStall 6",
                                  "expectedTopology {dir}/plan.net",
                                  "notificationLimit 0 60",
                                  "prometheusListen 127.0.0.1:%d" % port])
    b.metrics_url = "http://127.0.0.1:%d/metrics?collect[]=routing" % port
    try:
        # the operator's reference dump of the clean fabric, as ibnetdiscover makes it
        with open(b.path("plan.net"), "w") as f:
            f.write(b.run_on_node("ibnetdiscover", timeout=120))
        yield b
    finally:
        stop_testbed(b)


@pytest.fixture(scope="module")
def fabric(bed):
    """(nodes {name: (type, guid, nports, lid)}, ports {(a, b): [a's ports to b]})
    from what fabricsim generated"""
    nodes, links = generated(bed)
    ports = {}
    for link in links:
        (a, pa), (b, pb) = sorted(link)
        ports.setdefault((a, b), []).append(pa)
        ports.setdefault((b, a), []).append(pb)
    for v in ports.values():
        v.sort()
    return nodes, ports


def num(value):
    """the number in a value as net-snmp prints it ("deadEndWrongNode(5)", "8")"""
    return int(re.findall(r"\d+", value)[-1])


def runs(bed):
    """ibsnmpdRoutingRuns; 0 before the first run has published (no instance
    yet: the bed is up before its first discovery)"""
    value = bed.get(RUNS)[RUNS][1]
    return 0 if value.startswith("No Such") else num(value)


def next_run(bed):
    """Waits for a run that read the tables after now: two runs on."""
    first = runs(bed)
    assert wait_for(lambda: runs(bed) >= first + 2, seconds=120), "no routing run"


def statuses(bed):
    rows = bed.walk_whole(CHECK_STATUS[:-1], PUBLISHED)
    return {int(k.rsplit(".", 1)[1]): num(v[1]) for k, v in rows.items()}


def offenders(bed, check):
    """[{column: value}] of a check's offenders, from a walk of one
    publication of the table (TestBed.walk_whole)"""
    res = {}
    for oid, (_, value) in bed.walk_whole(OFFENDER[:-1], PUBLISHED).items():
        column, c, n = map(int, oid[len(OFFENDER):].split("."))
        if c == check:
            res.setdefault(n, {})[column] = value.strip('"')
    return [res[n] for n in sorted(res)]


def alarm_words(bed):
    """every active alarm's description, from a walk of one publication"""
    return [v[1] for v in bed.walk_whole(ALARM_DESC, ALARMS_CHANGED).values()]


def sim(bed, command):
    bed.simfabric("sim", command)


def restore(bed, *switches):
    for s in switches:
        sim(bed, 'Lft "%s" auto' % s)
    next_run(bed)
    assert statuses(bed) == {k: 1 for k in CHECKS}


def ibroute(bed, lid):
    """{destination LID: out port} of a switch, as ibroute reads its table"""
    out = bed.run_on_node("ibroute", str(lid), timeout=120)
    return {int(m.group(1), 16): int(m.group(2))
            for m in re.finditer(r"^(0x[0-9a-f]+) (\d+) :", out, re.M)}


def trace(bed, src, dst):
    """the nodes ibtracert's route from LID src to LID dst passes"""
    out = bed.run_on_node("ibtracert", str(src), str(dst), timeout=60)
    return re.findall(r'^\[\d+\] -> \w+ port \{0x[0-9a-f]+\}\[\d+\] lid [\d-]+ "([^"]+)"', out,
                      re.M)


def no_route(bed, src, dst):
    """ibtracert from LID src to LID dst fails as it does for a dead end
    (exit 255, "Bad forwarding table entry ... lid entry DST is PORT"), and
    for nothing else: (DST, PORT) as it says them"""
    out = subprocess.run(bed.command("ibtracert", str(src), str(dst)), capture_output=True,
                         text=True, timeout=60)
    said = out.stdout + out.stderr
    assert out.returncode == 255 and "can't find a route" in said, (out.returncode, said)
    m = re.search(r"Bad forwarding table entry found at: node .* lid entry (\d+) is (\d+)", said)
    assert m, said
    return int(m.group(1)), int(m.group(2))


def hex_guid(value):
    return int(value.replace("Hex-STRING:", "").replace(" ", ""), 16)


def reach_served(bed):
    """{(kind, switch GUID, LID): count} of ibsnmpd's reachability offenders"""
    return {(num(o[2]), hex_guid(o[3]), num(o[5])): num(o[6]) for o in offenders(bed, REACH)}


def reach_as_dump_fts_has_it(bed):
    """(want, got, routes): {(kind, switch GUID, LID): count} of every
    switch to every CA's LID as the switches' tables read by dump_fts route
    them (simfabric.routes), loops by LID alone (GUID None); the same of
    ibsnmpd's offenders; the routes"""
    routes = Routes(bed)
    want = {(k, routes.guid(at) if at else None, lid): n
            for (k, at, lid), n in routes.reach_failures().items()}
    got = {(k, None if k == LOOP else g, lid): n for (k, g, lid), n in reach_served(bed).items()}
    return want, got, routes


def metrics(bed):
    with urllib.request.urlopen(bed.metrics_url, timeout=30) as r:
        return r.read().decode()


def guid_index(guid):
    return ".".join(str(b) for b in guid.to_bytes(8, "big"))


def unbalanced_by_check_lft_balance(bed):
    """the switches infiniband-diags' check_lft_balance calls unbalanced
    (its input: dump_fts's tables with their destinations, and an
    ibnetdiscover cache of the fabric); (names, its output). With -e, its
    heuristic for a leaf (half the ports down to hosts, a LID each, half
    up): without it every leaf is "unbalanced", its host ports against its
    uplinks, since its test of a port cabled to a host compares the
    hosts' names as numbers."""
    with tempfile.TemporaryDirectory(prefix="ibsnmpd-lft.") as d:
        lfts, cache = os.path.join(d, "lfts"), os.path.join(d, "fabric.cache")
        with open(lfts, "w") as f:
            f.write(bed.run_on_node("dump_fts", timeout=120))
        bed.run_on_node("ibnetdiscover", "--cache", cache, timeout=120)
        out = subprocess.run(["check_lft_balance", "-e", "-l", lfts, "-i", cache],
                             capture_output=True, text=True, timeout=120)
    names = set(re.findall(r"^Unbalanced Switch Port Usage: (.*), 0x[0-9a-f]+$", out.stdout,
                           re.M))
    return names, out.stdout + out.stderr


def test_clean_fabric_passes_every_check(bed, fabric):
    nodes, ports = fabric
    assert wait_for(lambda: runs(bed) >= 1, seconds=120)
    # the subnet checks after the first link sweep
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=60), statuses(bed)
    got = bed.get(CA_PAIRS, CA_PAIRS_REACHED)
    assert num(got[CA_PAIRS][1]) == HOSTS * (HOSTS - 1)
    assert num(got[CA_PAIRS_REACHED][1]) == HOSTS * (HOSTS - 1)
    # hop counts as ibtracert finds them: a leaf's own hosts, a pod's, the other pod's
    hist = {int(k.rsplit(".", 1)[1]): num(v[1]) for k, v in bed.walk_whole(HOP_PAIRS[:-1], PUBLISHED).items()}
    lid = {name: n[3] for name, n in nodes.items()}
    for dst in ("host-2", "host-20", "host-90"):
        hops = len(trace(bed, lid["host-1"], lid[dst]))
        assert hist.get(hops, 0) > 0, (dst, hops, hist)
    assert sum(hist.values()) == HOSTS * (HOSTS - 1)
    assert set(hist) == {2, 4, 6}, hist  # leaf, pod, core
    # the LIDs per port of a leaf, as ibroute reads its table
    leaf = nodes["leaf-1-1"]
    table = ibroute(bed, leaf[3])
    ca_lids = {n[3] for n in nodes.values() if n[0] == "ca"}
    per_port = {}
    for dlid, port in table.items():
        if dlid in ca_lids:
            per_port[port] = per_port.get(port, 0) + 1
    served = {int(k.rsplit(".", 1)[1]): num(v[1])
              for k, v in bed.walk_whole(LOAD_LIDS + guid_index(leaf[1]), PUBLISHED).items()}
    assert set(per_port) <= set(served)
    assert served == {p: per_port.get(p, 0) for p in served}
    assert sum(served.values()) == len(ca_lids)
    # infiniband-diags' own account agrees: every switch reaches every CA's
    # LID (dump_fts over all pairs), every CA pair by a shortest route that
    # does not go down then up, no switch unbalanced (check_lft_balance)
    routes = Routes(bed)
    assert routes.reach_failures() == {} and routes.hop_offenders() == {}
    assert routes.credit_loops() == []
    unbalanced, said = unbalanced_by_check_lft_balance(bed)
    assert unbalanced == set(), said
    assert ibidsverify(bed) == []  # no LID or GUID twice


def test_each_publication_of_the_tables_moves_their_stamp(bed, fabric):
    """ibsnmpdRouteTablesPublications is how a walk of the tables is told whole
    (TestBed.walk_whole): it moves with every publication, a routing run's
    (ibsnmpdRoutingRuns) and the subnet checks' after a link sweep."""
    def stamp():
        return num(bed.get(PUBLISHED)[PUBLISHED][1])

    assert wait_for(lambda: runs(bed) >= 1, seconds=120)
    first, run = stamp(), runs(bed)
    assert wait_for(lambda: runs(bed) > run, seconds=60)
    assert stamp() > first
    # the subnet checks alone (every 2 s, after each link sweep) between runs
    seen = {stamp() for _ in range(12) if not time.sleep(0.5)}
    assert len(seen) >= 2, seen


def test_an_unassigned_entry_is_a_dead_end_named_until_restored(bed, fabric):
    nodes, _ = fabric
    lid = nodes["host-90"][3]
    before = len(notifications(bed))
    sim(bed, 'Lft "leaf-1-1" %d none' % lid)
    next_run(bed)
    assert lid not in ibroute(bed, nodes["leaf-1-1"][3])  # the switch agrees
    assert no_route(bed, nodes["host-1"][3], lid) == (lid, 255)
    # every switch to every CA's LID, as dump_fts reads the tables
    want, got, _ = reach_as_dump_fts_has_it(bed)
    assert want == {(1, nodes["leaf-1-1"][1], lid): 1}, want  # deadEndUnassigned
    assert got == want, (got, want)
    assert statuses(bed)[REACH] == 2
    o = offenders(bed, REACH)
    assert len(o) == 1
    assert "switch leaf-1-1 has no port for LID %d (host-90 port 1)" % lid in o[0][7]
    assert num(o[0][5]) == lid
    alarms = alarm_words(bed)
    assert any("routing check reachability failed" in a for a in alarms), alarms
    assert any("leaf-1-1 has no port for LID %d" % lid in a for a in alarms), alarms
    failed = [n for n in notifications(bed)[before:] if n.get(TRAP_OID) == FAILED]
    assert any(v == "reachability" for n in failed for v in n.values()), failed
    # 8 hosts of leaf-1-1 cannot reach host-90
    reached = num(bed.get(CA_PAIRS_REACHED)[CA_PAIRS_REACHED][1])
    assert reached == HOSTS * (HOSTS - 1) - 8
    text = metrics(bed)
    assert 'infiniband_routing_check_failed{check="reachability"} 1' in text, text
    assert 'infiniband_routing_check_offenders{check="reachability"} 1' in text
    assert "infiniband_routing_ca_pairs_unreached 8" in text
    before = len(notifications(bed))
    restore(bed, "leaf-1-1")
    assert not any("routing check" in a for a in alarm_words(bed))
    assert wait_for(lambda: any(n.get(TRAP_OID) == PASSED
                                for n in notifications(bed)[before:]), seconds=30)


def test_a_port_to_another_host_is_named(bed, fabric):
    nodes, ports = fabric
    lid = nodes["host-2"][3]
    wrong = ports[("leaf-1-1", "host-3")][0]
    sim(bed, 'Lft "leaf-1-1" %d %d' % (lid, wrong))
    next_run(bed)
    assert ibroute(bed, nodes["leaf-1-1"][3])[lid] == wrong
    # host-2 is on leaf-1-1: no switch reaches it (every route ends there)
    want, got, routes = reach_as_dump_fts_has_it(bed)
    assert want == {(5, nodes["leaf-1-1"][1], lid): len(routes.switches)}, want
    assert got == want, (got, want)
    o = offenders(bed, REACH)
    assert num(o[0][2]) == 5, o  # deadEndWrongNode
    assert "sends LID %d (host-2 port 1) out of port %d to host-3" % (lid, wrong) in o[0][7]
    restore(bed, "leaf-1-1")


def test_a_loop_is_found(bed, fabric):
    nodes, ports = fabric
    lid = nodes["host-90"][3]
    up = ports[("leaf-1-1", "spine-1-1")][0]
    down = ports[("spine-1-1", "leaf-1-1")][0]
    sim(bed, 'Lft "leaf-1-1" %d %d' % (lid, up))
    sim(bed, 'Lft "spine-1-1" %d %d' % (lid, down))
    next_run(bed)
    assert ibroute(bed, nodes["spine-1-1"][3])[lid] == down
    # every switch whose route to host-90 ends in the loop, as dump_fts
    # reads the tables; the switch ibsnmpd names is in the loop
    want, got, routes = reach_as_dump_fts_has_it(bed)
    assert set(want) == {(LOOP, None, lid)}, want
    assert got == want, (got, want)
    o = offenders(bed, REACH)
    assert [num(x[2]) for x in o] == [6], o  # loop
    members = routes.loop_members("leaf-1-1", lid)
    assert members == {"leaf-1-1", "spine-1-1"}, members
    assert hex_guid(o[0][3]) in {routes.guid(m) for m in members}, o
    assert "loop through switch" in o[0][7] and "host-90" in o[0][7]
    restore(bed, "leaf-1-1", "spine-1-1")


def test_a_credit_loop_is_found(bed, fabric):
    """Two LIDs of leaf-1-3, routed A > s1 > B > s2 and B > s2 > A > s1: the
    links A>s1, s1>B, B>s2, s2>A depend on each other in a circle."""
    nodes, ports = fabric
    A, B, s1, s2 = "leaf-1-1", "leaf-1-2", "spine-1-1", "spine-1-2"
    d1, d2 = nodes["host-17"][3], nodes["host-18"][3]
    p = {(a, b): ports[(a, b)][0] for a, b in ((A, s1), (s1, B), (B, s2), (s2, A))}
    for sw, d, to in ((A, d1, s1), (s1, d1, B), (B, d1, s2),
                      (B, d2, s2), (s2, d2, A), (A, d2, s1)):
        sim(bed, 'Lft "%s" %d %d' % (sw, d, p[(sw, to)]))
    next_run(bed)
    # ibtracert sees the route from A's host to d1 pass B
    assert trace(bed, nodes["host-1"][3], d1)[:4] == [A, s1, B, s2]
    # the channel dependencies of every CA pair's route as dump_fts reads
    # the tables: one cycle, those four links
    routes = Routes(bed)
    loops = routes.credit_loops()
    assert loops == [{(a, p[(a, b)]) for a, b in p}], loops
    assert statuses(bed)[CREDIT] == 2
    o = offenders(bed, CREDIT)
    assert len(o) == 1 and "credit loop of %d links" % len(loops[0]) in o[0][7], o
    assert num(o[0][6]) == len(loops[0]), o  # links in the loop
    assert hex_guid(o[0][3]) in {routes.guid(a) for a, _ in loops[0]}, o
    for sw in (A, B, s1, s2):
        assert sw in o[0][7]
    assert statuses(bed)[UPDOWN] == 2 and statuses(bed)[HOPS] == 2
    # and the hops, as over all pairs
    assert {(num(x[5]), num(x[6])) for x in offenders(bed, HOPS)} == \
        {(lid, n) for lid, (n, _) in routes.hop_offenders().items() if n}
    restore(bed, A, B, s1, s2)


def test_a_longer_route_is_named_as_ibtracert_counts_its_hops(bed, fabric):
    """The spine that leaf-1-1 sends host-20's LID to sends it down to
    another leaf of the pod, which sends it up by another spine: the CA
    pairs whose route passes that spine reach host-20 by a longer route
    than the shortest, down then up. How many, from dump_fts's tables over
    all pairs; how long, from ibtracert's path of one of them."""
    nodes, ports = fabric
    dest, lid = "host-20", nodes["host-20"][3]
    routes = Routes(bed)
    target = routes.leaf_of(dest)
    spine = routes.peer[("leaf-1-1", routes.lft["leaf-1-1"][lid])][0]
    detour = next(leaf for leaf in routes.switches
                  if leaf.startswith("leaf-1-") and leaf not in (target, "leaf-1-1"))
    other = next(s for s in routes.switches if s.startswith("spine-1-") and s != spine)
    sim(bed, 'Lft "%s" %d %d' % (detour, lid, ports[(detour, other)][0]))
    sim(bed, 'Lft "%s" %d %d' % (spine, lid, ports[(spine, detour)][0]))
    next_run(bed)
    routes = Routes(bed)
    assert routes.reach_failures() == {}
    hops = routes.hop_offenders()
    assert set(hops) == {lid}, hops
    longer, down_up = hops[lid]
    assert longer > 0 and down_up == longer, hops
    # one such pair as ibtracert finds its route: the switches dump_fts's
    # tables give, two more than the shortest
    src, switch_hops, shortest = next((c, n, m) for c, n, m, _ in routes.ca_pairs(dest)
                                      if n > m)
    path = trace(bed, nodes[src][3], lid)
    assert path[-1] == dest and spine in path and detour in path, path
    assert len(path) - 2 == switch_hops == shortest + 2, (path, switch_hops, shortest)
    assert statuses(bed)[HOPS] == 2 and statuses(bed)[UPDOWN] == 2
    assert statuses(bed)[REACH] == 1 and statuses(bed)[CREDIT] == 1
    o = offenders(bed, HOPS)
    assert [(num(x[2]), num(x[5]), num(x[6])) for x in o] == [(7, lid, longer)], o  # notMinHop
    m = re.search(r"e\.g\. from switch (\S+): (\d+) switch hops, shortest (\d+)", o[0][7])
    assert m, o
    example = [(n, sh) for c, n, sh, _ in routes.ca_pairs(dest) if routes.leaf_of(c) == m.group(1)]
    assert example and (int(m.group(2)), int(m.group(3))) == example[0], (o, example)
    o = offenders(bed, UPDOWN)
    assert [(num(x[2]), num(x[5]), num(x[6])) for x in o] == [(8, lid, down_up)], o  # downUp
    restore(bed, spine, detour)


def test_unbalanced_uplinks_are_found(bed, fabric):
    nodes, ports = fabric
    leaf = nodes["leaf-1-1"]
    table = ibroute(bed, leaf[3])
    ups = sorted(p for (a, b), ps in ports.items() if a == "leaf-1-1" and b.startswith("spine")
                 for p in ps)
    # every remote host's LID that leaves by the second uplink leaves by the first
    moved = [d for d, port in table.items() if port == ups[1] and d <= HOSTS]
    for d in moved:
        sim(bed, 'Lft "leaf-1-1" %d %d' % (d, ups[0]))
    next_run(bed)
    counts = {}
    for d, port in ibroute(bed, leaf[3]).items():
        if d <= HOSTS:
            counts[port] = counts.get(port, 0) + 1
    # check_lft_balance calls leaf-1-1 unbalanced, and that switch alone
    unbalanced, said = unbalanced_by_check_lft_balance(bed)
    assert unbalanced == {"leaf-1-1"}, said
    o = offenders(bed, BALANCE)
    assert statuses(bed)[BALANCE] == 2 and len(o) == 1, o
    assert hex_guid(o[0][3]) == leaf[1], o
    assert num(o[0][4]) == ups[0]
    assert num(o[0][6]) == counts[ups[0]] - counts.get(ups[1], 0)
    assert "port %d carries %d CA LIDs" % (ups[0], counts[ups[0]]) in o[0][7]
    restore(bed, "leaf-1-1")


def test_a_hosts_link_down_and_back_reads_its_leaf_and_its_lid_block(bed, fabric):
    """A link down or back is a topology patch: the leaf's table is read
    again whole; when the host is back, on every other switch the block of
    its LID (the SM routes it again; gone, it is no destination)."""
    nodes, _ = fabric
    switches = sum(1 for n in nodes.values() if n[0] == "switch")
    top = max(n[3] for n in nodes.values())
    blocks = top // 64 + 1
    # a whole read: every block, and every switch-to-switch port's SL2VL
    assert wait_for(lambda: num(bed.get(MADS)[MADS][1]) ==
                    switches * blocks + sl2vl_reads(fabric), seconds=60)
    # every read's SMPs from the log (-D ibsnmpd:route): a periodic read
    # every 3 s may publish before a poller sees the partial one served
    start = bed.log_size()
    bed.simfabric("sim", 'Unlink "host-5"')
    try:
        assert wait_for(lambda: blocks in read_smps(bed, start), seconds=60), \
            read_smps(bed, start)
        # every check passes but the cabling's: host-5 is planned
        assert wait_for(lambda: {k: v for k, v in statuses(bed).items() if k != CABLING} ==
                        {k: 1 for k in CHECKS if k != CABLING}, seconds=30), statuses(bed)
        assert 'infiniband_routing_check_failed{check="reachability"} 0' in metrics(bed)
    finally:
        start = bed.log_size()
        bed.simfabric("sim", 'ReLink "host-5"')
    assert wait_for(lambda: blocks + switches - 1 in read_smps(bed, start), seconds=60), \
        read_smps(bed, start)
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=30), statuses(bed)


def sl2vl_reads(fabric):
    """the SL2VL tables a whole read asks for: each switch's ports cabled
    to a switch, when it has two or more"""
    nodes, ports = fabric
    total = 0
    for name, node in nodes.items():
        if node[0] == "switch":
            n = sum(len(v) for (a, b), v in ports.items() if a == name and nodes[b][0] == "switch")
            total += n if n > 1 else 0
    return total


def read_smps(bed, offset):
    """the SMPs of each routing read the log says ended since offset"""
    return [int(m.group(1)) for line in bed.log_since(offset) for m in re.finditer(
        r"checked \d+ switches \(\d+ read\) to \d+ LIDs: read [\d.]+ s, (\d+) SMPs", line)]


def portinfo(bed, lid, port):
    """{field: value} of a port's PortInfo, as smpquery reads it"""
    out = bed.run_on_node("smpquery", "portinfo", str(lid), str(port), timeout=60)
    return dict(re.findall(r"^(\w+):\.+(.*)$", out, re.M))


def ibidsverify(bed):
    """what infiniband-diags' ibidsverify finds wrong with the LIDs and
    GUIDs, a line each ("LID 3 already defined for NodeGUID 0x...").
    It reads ibnetdiscover's output from a cache file of its own in
    /var/cache/infiniband-diags, named for the CA and port it is given:
    written here from ibnetdiscover through the simulator, under a name of
    this process's (beds side by side would share the default one)."""
    name = "ibsnmpd-test-%d" % os.getpid()
    path = "/var/cache/infiniband-diags/ibnetdiscover-%s-1.topology" % name
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(bed.run_on_node("ibnetdiscover", "-g", timeout=120))
    try:
        out = subprocess.run(["ibidsverify", "-C", name, "-P", "1"], capture_output=True,
                             text=True, timeout=120)
    finally:
        os.unlink(path)
    found = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    assert (out.returncode != 0) == bool(found), (out.returncode, out.stdout, out.stderr)
    return found


def subnet_failed(bed, check, since):
    """the ibsnmpdRouteCheckFailed notifications of a subnet check since then"""
    name = {DUPLICATES: "duplicates", LINKS: "links"}[check]
    return [n for n in notifications(bed)[since:]
            if n.get(TRAP_OID) == FAILED and name in n.values()]


def test_subnet_checks_find_what_smpquery_shows(bed, fabric):
    nodes, ports = fabric
    lid = {name: n[3] for name, n in nodes.items()}
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=60), statuses(bed)
    since = len(notifications(bed))
    # host-5 claims host-3's LID
    sim(bed, 'PortInfo "host-5"[1] LID %d' % lid["host-3"])
    try:
        assert portinfo(bed, lid["host-5"], 1)["Lid"] == str(lid["host-3"])
        # infiniband-diags' ibidsverify finds that LID twice, and nothing else
        assert ibidsverify(bed) in (["LID %d already defined for NodeGUID 0x%016x" % (
            lid["host-3"], nodes[n][1])] for n in ("host-3", "host-5"))
        assert wait_for(lambda: statuses(bed)[DUPLICATES] == 2, seconds=60)
        o = offenders(bed, DUPLICATES)
        assert [num(x[2]) for x in o] == [12], o  # duplicateLid
        assert o[0][7] == "LID %d is both host-3 port 1's and host-5 port 1's" % lid["host-3"], o
        assert num(o[0][5]) == lid["host-3"]
        assert wait_for(lambda: subnet_failed(bed, DUPLICATES, since), seconds=30)
        alarms = alarm_words(bed)
        assert any("subnet check duplicates failed: 1 offender" in a for a in alarms), alarms
        assert 'infiniband_routing_check_failed{check="duplicates"} 1' in metrics(bed)
    finally:
        sim(bed, 'PortInfo "host-5"[1] LID auto')
    # the sweeps read host-5 at the LID it claimed: host-3 answers there,
    # and nothing changes until a discovery reads it by directed route; a
    # flap of its link does (the probe behind the port that came back)
    sim(bed, 'Unlink "host-5"')
    assert wait_for(lambda: statuses(bed)[DUPLICATES] == 1, seconds=60)
    sim(bed, 'ReLink "host-5"')
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=60), statuses(bed)
    assert not any("subnet check" in a for a in alarm_words(bed))
    # a leaf's uplink at MTU 2048, a host's link at 4 VLs, a host's end
    # left in Init: smpquery shows each, both ends able to do more
    up = ports[("leaf-1-1", "spine-1-1")][0]
    far = ports[("spine-1-1", "leaf-1-1")][0]
    faults = ['PortInfo "leaf-1-1"[%d] NeighborMTU 2048' % up,
              'PortInfo "host-7"[1] OperVLs 4', 'PortInfo "host-9"[1] PortState Init']
    for command in faults:
        sim(bed, command)
    try:
        mine, theirs = portinfo(bed, lid["leaf-1-1"], up), portinfo(bed, lid["spine-1-1"], far)
        assert mine["NeighborMTU"] == "2048" and mine["MtuCap"] == theirs["MtuCap"] == "4096"
        h7 = portinfo(bed, lid["host-7"], 1)
        assert h7["OperVLs"] == "VL0-3" and h7["VLCap"] == "VL0-7"
        assert portinfo(bed, lid["host-9"], 1)["LinkState"] == "Initialize"
        assert wait_for(lambda: len(offenders(bed, LINKS)) == 3, seconds=60), \
            offenders(bed, LINKS)
        words = sorted(x[7] for x in offenders(bed, LINKS))
        assert any(w.startswith("leaf-1-1 port %d <-> spine-1-1 port %d runs MTU 2048 "
                                "(leaf-1-1's end), both ends can 4096" % (up, far))
                   for w in words), words
        assert any(w.startswith("host-7 port 1 <-> ") and
                   w.endswith("runs 4 data VLs (host-7's end), both ends can 8")
                   for w in words), words
        assert any(w.startswith("host-9 port 1 <-> ") and "host-9's end has been Init for" in w
                   for w in words), words
        assert statuses(bed)[LINKS] == 2
        assert wait_for(lambda: subnet_failed(bed, LINKS, since), seconds=30)
        assert 'infiniband_routing_check_offenders{check="links"} 3' in metrics(bed)
    finally:
        for command in faults:
            sim(bed, command.rsplit(" ", 1)[0] + " auto")
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=60), statuses(bed)


def sm_table(bed):
    """{name: {column: value}} of ibsnmpdRouteSmTable"""
    rows = {}
    for oid, (_, value) in bed.walk_whole(SMS[:-1], PUBLISHED).items():
        column, index = oid[len(SMS):].split(".", 1)
        rows.setdefault(index, {})[int(column)] = value.strip('"')
    return {r[2]: r for r in rows.values()}


def sminfo(bed, lid):
    """(guid, activity, priority, state) as sminfo reads an SM's SMInfo"""
    out = bed.run_on_node("sminfo", str(lid), timeout=60)
    m = re.search(r"sm guid (0x[0-9a-f]+), activity count (\d+) priority (\d+) state (\d+)", out)
    return int(m.group(1), 16), int(m.group(2)), int(m.group(3)), int(m.group(4))


def sm_kinds(bed):
    return sorted(num(x[2]) for x in offenders(bed, SM))


def test_sm_check_follows_the_sms_as_sminfo_shows_them(bed, fabric):
    nodes, _ = fabric
    lid = {name: n[3] for name, n in nodes.items()}
    NO_STANDBY, SEVERAL, STALLED, DISAGREE = 23, 19, 21, 22
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=60), statuses(bed)
    # fabricsim's SM on host-1, master and alone: said, not failed
    guid1, _, _, state = sminfo(bed, lid["host-1"])
    assert state == 3
    assert sm_kinds(bed) == [NO_STANDBY]
    row = sm_table(bed)["host-1 port 1"]
    assert row[3] == str(lid["host-1"]) and num(row[4]) == 5  # master
    try:
        # a standby of the same priority and a higher GUID: host-1 stays the winner
        sim(bed, 'Sm "host-9" standby 0')
        assert sminfo(bed, lid["host-9"])[3] == 2
        assert wait_for(lambda: sm_kinds(bed) == [] and "host-9 port 1" in sm_table(bed),
                        seconds=30), offenders(bed, SM)
        assert num(sm_table(bed)["host-9 port 1"][4]) == 4  # standby
        text = metrics(bed)
        assert re.search(r'^infiniband_sm_state\{guid="0x[0-9a-f]{16}",node="host-9 port 1",'
                         r'lid="%d"\} 2$' % lid["host-9"], text, re.M), text
        # a second master
        since = len(notifications(bed))
        sim(bed, 'Sm "host-9" master 0')
        assert sminfo(bed, lid["host-9"])[3] == 3
        assert wait_for(lambda: SEVERAL in sm_kinds(bed), seconds=30), offenders(bed, SM)
        assert statuses(bed)[SM] == 2
        assert wait_for(lambda: [n for n in notifications(bed)[since:]
                                 if n.get(TRAP_OID) == FAILED and "sm" in n.values()],
                        seconds=30)
        # the master answers and its ActCount stops (sminfo sees it still)
        sim(bed, 'Sm "host-9" standby 0')
        sim(bed, 'Sm "host-1" freeze')
        still = sminfo(bed, lid["host-1"])[1]
        assert wait_for(lambda: STALLED in sm_kinds(bed), seconds=30), offenders(bed, SM)
        assert sminfo(bed, lid["host-1"])[1] == still
        assert int(sm_table(bed)["host-1 port 1"][7]) >= 6
        sim(bed, 'Sm "host-1" thaw')
        assert wait_for(lambda: sm_kinds(bed) == [], seconds=30), offenders(bed, SM)
        # the standby takes over: told once; the ports still take host-1's
        # LID for their master (the simulator's do not follow)
        since = len(notifications(bed))
        sim(bed, 'Sm "host-1" notactive')
        sim(bed, 'Sm "host-9" master 0')
        assert wait_for(lambda: [n for n in notifications(bed)[since:]
                                 if n.get(TRAP_OID) == MASTER_CHANGED], seconds=30)
        changed = [n for n in notifications(bed)[since:] if n.get(TRAP_OID) == MASTER_CHANGED]
        assert len(changed) == 1
        assert "host-9 port 1" in changed[0].values(), changed
        previous = bed.get(PREVIOUS_MASTER)[PREVIOUS_MASTER][1]
        assert int(previous.replace(" ", "").replace("Hex-STRING:", ""), 16) == guid1, previous
        # once the new master has been so for two sweeps (SMInfo rounds 10 s apart)
        assert wait_for(lambda: DISAGREE in sm_kinds(bed), seconds=60), offenders(bed, SM)
        o = [x for x in offenders(bed, SM) if num(x[2]) == DISAGREE][0]
        assert "take LID %d (host-1 port 1) for the master SM, not host-9 port 1's LID %d" % (
            lid["host-1"], lid["host-9"]) in o[7], o
    finally:
        sim(bed, 'Sm "host-1" thaw')
        sim(bed, 'Sm "host-9" none')
        sim(bed, 'Sm "host-1" master 0')
    assert wait_for(lambda: sm_kinds(bed) == [NO_STANDBY] and statuses(bed)[SM] == 1,
                    seconds=30), offenders(bed, SM)


def test_a_moved_cable_is_named_against_the_plan(bed, fabric):
    nodes, ports = fabric
    leaf3 = next(b for (a, b) in ports if a == "host-3")
    leaf9 = next(b for (a, b) in ports if a == "host-9")
    p3, p9 = ports[(leaf3, "host-3")][0], ports[(leaf9, "host-9")][0]
    assert leaf3 != leaf9
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=60), statuses(bed)
    since = len(notifications(bed))
    # both hosts unplugged, host-3's cable plugged into host-9's port (it
    # comes up: the topology probes behind it)
    sim(bed, 'Unlink "host-3"')
    sim(bed, 'Unlink "host-9"')
    try:
        assert wait_for(lambda: len([x for x in offenders(bed, CABLING)
                                     if num(x[2]) == 25]) == 2, seconds=60), \
            offenders(bed, CABLING)  # both planned and not there
        sim(bed, 'Link "host-3"[1] "%s"[%d]' % (leaf9, p9))
        seen = bed.run_on_node("ibnetdiscover", timeout=120)
        assert re.search(r'^\[1\]\(\w+\)\s+"S-[0-9a-f]+"\[%d\].*"%s"' % (p9, leaf9),
                         seen.split('# "host-3"', 1)[1], re.M), "ibnetdiscover disagrees"
        assert wait_for(lambda: statuses(bed)[CABLING] == 2 and
                        len(offenders(bed, CABLING)) == 3, seconds=60), offenders(bed, CABLING)
        words = sorted(x[7] for x in offenders(bed, CABLING))
        assert words == sorted([
            "host-3 port 1 is cabled to %s port %d, planned %s port %d" % (leaf9, p9, leaf3, p3),
            "%s port %d is cabled to host-3 port 1, planned host-9 port 1" % (leaf9, p9),
            "host-9 (0x%016x) is planned and not in the subnet" % nodes["host-9"][1]]), words
        assert wait_for(lambda: [n for n in notifications(bed)[since:]
                                 if n.get(TRAP_OID) == FAILED and "cabling" in n.values()],
                        seconds=30)
        assert 'infiniband_routing_check_offenders{check="cabling"} 3' in metrics(bed)
    finally:
        sim(bed, 'Unlink "host-3"')
        sim(bed, 'Link "host-3"[1] "%s"[%d]' % (leaf3, p3))
        sim(bed, 'Link "host-9"[1] "%s"[%d]' % (leaf9, p9))
    assert wait_for(lambda: statuses(bed) == {k: 1 for k in CHECKS}, seconds=120), \
        (statuses(bed), offenders(bed, CABLING))
