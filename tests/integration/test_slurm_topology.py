"""Slurm's topology.conf kept by ibsnmpd (slurmTopologyFile), read by Slurm's
own controller: Debian's slurmctld and munged beside an ibsim fat tree
(opensm its SM), a slurm.conf with the fabric's hosts at 127.0.0.1 and
TopologyPlugin=topology/tree. `scontrol show topology` must list each host
under the leaf ibnetdiscover shows it cabled to, and slurmctld must log no
topology error. Then, each checked the same way after slurmReloadCommand
(`scontrol reconfigure`): a host's link down leaves the file as it was (it
follows the cabling); a cable moved to another leaf moves the host; a new
leaf with hosts, cabled to the spines, comes in with them. One host of the
fabric is left out of slurm.conf (slurmNodes): it is not in the file, so
slurmctld has no "Invalid hostnames" to say. On fabricsim's rail layout
(each server an adapter on each of 8 rails): Slurm sees each server under
one switch, the servers grouped as the simulator's own account of its
cables groups them (the same leaves, one switch), and says nothing wrong."""
import os
import re
import subprocess
import sys

import pytest

from conftest import TOP, ibsnmpd_bin, snmp_env, start_testbed, stop_testbed, tool_path, \
    wait_for

from simfabric import generated, slurm as slurm_bed

needs_slurm = pytest.mark.skipif(not slurm_bed.installed(),
                                 reason="slurmctld, munge and slurm-client are not installed "
                                        "(scripts/install-deps installs them)")

REFRESHES = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1.5.22"  # ibsnmpdCacheRefreshes, slurmTopology
SLURM = ".1.3.6.1.4.1.8072.9999.9999.117.1.13."  # IBSNMPD-MIB::ibsnmpdSlurm
SWITCH = SLURM + "5.1."  # ibsnmpdSlurmSwitchEntry
MEMBER = SLURM + "6.1."  # ibsnmpdSlurmMemberEntry
LEAVES, SPINES, PER_LEAF = 4, 2, 4
LEFT_OUT = "h4-4"  # a host of the fabric Slurm does not know


def fabric_text():
    """gen-fattree's two-level tree, and leaf5 with its two hosts, cabled to
    no spine yet (the new leaf)."""
    text = subprocess.run([sys.executable, os.path.join(TOP, "tests", "topologies",
                                                        "gen-fattree.py"),
                           str(LEAVES), str(SPINES), str(PER_LEAF)],
                          capture_output=True, text=True, check=True).stdout
    text += 'Switch\t36 "leaf5"\n[1]\t"h5-1"[1]\n[2]\t"h5-2"[1]\n\n'
    text += 'Hca\t1 "h5-1"\n[1]\t"leaf5"[1]\n\nHca\t1 "h5-2"\n[1]\t"leaf5"[2]\n'
    return text


def cabled_leaf(bed):
    """{host: the switch ibnetdiscover shows its adapter cabled to}"""
    out = bed.run_on_node("ibnetdiscover", timeout=120)
    leaf = {}
    for block in out.split("\n\n"):
        m = re.search(r'^Switch\s.*# "([^"]+)"', block, re.M)
        if not m:
            continue
        for host in re.findall(r'^\[\d+\]\S*\s+"H-[0-9a-f]+"\[\d+\]\S*\s+# "([^"]+)"', block,
                               re.M):
            leaf[host.split()[0]] = m.group(1)
    return leaf


def refreshes(bed):
    got = bed.get(REFRESHES)[REFRESHES][1]
    return int(got) if got.isdigit() else -1


def snmp_tree(bed):
    """{switch: (level, {what is under it})} as ibsnmpd serves the tree"""
    cols = {}
    for oid, (_, value) in bed.walk(SWITCH[:-1]).items():
        column, index = oid[len(SWITCH):].split(".", 1)
        cols.setdefault(index, {})[int(column)] = value.strip('"')
    names = {i: (c[2], int(c[3])) for i, c in cols.items()}
    tree = {name: (level, set()) for name, level in names.values()}
    for oid, (_, value) in bed.walk(MEMBER[:-1]).items():
        column, sw, _ = oid[len(MEMBER):].split(".")
        if column == "2":
            tree[names[sw][0]][1].add(value.strip('"'))
    return tree


def slurm_agrees(bed, slurm, expected):
    """Slurm's tree (after the reload ibsnmpd ran) places every host as
    expected ({host: leaf})."""
    return slurm.leaf_of() == expected


def bed_for_slurm(sl, conf, **bed_args):
    """A bed whose ibsnmpd keeps sl's file (conf), runs sl's reload after a
    write and serves the file on a listener of its own (bed.http); sl's
    controller started once the file is there. Yields (bed, sl); the bed
    (and sl's services) stopped after."""
    http = slurm_bed.free_tcp_port()
    bed = start_testbed(extra_conf=conf + ["slurmReloadCommand %s" % sl.reload_command(),
                                           "slurmSettle 1",
                                           "prometheusListen 127.0.0.1:%d" % http],
                        **bed_args)
    bed.http = http
    try:
        assert wait_for(lambda: os.path.exists(sl.topology_file), seconds=120), \
            bed.log("ibsnmpd.log")[-3000:]
        sl.start(bed)
        yield bed, sl
    finally:
        stop_testbed(bed)


@pytest.fixture(scope="module")
@needs_slurm
def beds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("slurm")
    net = directory / "fattree-slurm.net"
    net.write_text(fabric_text())
    hosts = "h[1-3]-[1-4],h4-[1-3],h5-[1-2]"
    sl = slurm_bed.Slurm(str(directory), hosts)
    yield from bed_for_slurm(sl, ["slurmTopologyFile %s" % sl.topology_file,
                                  "slurmNodes %s" % sl.conf, "cacheLifetime fabricPorts 5"],
                             topology=str(net), node="h1-1",
                             preload=tool_path("sim_issm_shim.so", "SIM_ISSM_SHIM"))


@needs_slurm
def test_slurm_reads_the_tree_as_the_fabric_is_cabled(beds):
    bed, sl = beds
    expected = {h: l for h, l in cabled_leaf(bed).items() if h != LEFT_OUT}
    assert len(expected) == LEAVES * PER_LEAF - 1
    assert slurm_agrees(bed, sl, expected), (sl.topology(), expected)
    tree = sl.topology()
    for s in range(1, SPINES + 1):
        level, hosts, switches = tree["spine%d" % s]
        assert level == 1 and switches == {"leaf%d" % l for l in range(1, LEAVES + 1)}
        assert hosts == set(expected)
    assert LEFT_OUT not in open(sl.topology_file).read()
    # served over SNMP as Slurm read it: hosts under the leaves, leaves under the spines
    served = snmp_tree(bed)
    assert served == {name: (level, hosts if level == 0 else switches)
                      for name, (level, hosts, switches) in tree.items()}, (served, tree)
    left_out = SLURM + "3.0"
    assert bed.get(left_out)[left_out][1] == "1"
    # the hosts of the leaf not cabled yet: in slurm.conf, under no switch
    # (Slurm says so, at each reading of its files: at its start, and at
    # the reconfiguration ibsnmpd asked when it wrote); nothing else
    assert {re.sub(r"^\S+ ", "", e) for e in sl.topology_errors()} == {
        "error: WARNING: switches lack access to 2 nodes: h5-[1-2]"}, sl.topology_errors()
    assert "slurm topology: %s written" % sl.topology_file in bed.log("ibsnmpd.log")


@needs_slurm
def test_the_listener_serves_the_file_as_written(beds):
    """/slurm/topology.conf, for a controller on another host: the file's
    text (read by curl, as such a host would)."""
    bed, sl = beds
    out = subprocess.run(["curl", "-s", "-f", "http://127.0.0.1:%d/slurm/topology.conf"
                          % bed.http], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == open(sl.topology_file).read()


@needs_slurm
def test_a_host_link_down_leaves_the_file_as_it_was(beds):
    bed, sl = beds
    before = open(sl.topology_file).read()
    stat = os.stat(sl.topology_file)
    runs = refreshes(bed)
    bed.simfabric("sim", 'Unlink "h2-3"')
    try:
        assert wait_for(lambda: "h2-3" not in cabled_leaf(bed), seconds=60)
        # the tree was built again after the change (an event, not a pause)
        assert wait_for(lambda: refreshes(bed) > runs, seconds=120), runs
        assert open(sl.topology_file).read() == before
        assert os.stat(sl.topology_file).st_mtime_ns == stat.st_mtime_ns
        assert sl.leaf_of().get("h2-3") == "leaf2"
    finally:
        bed.simfabric("sim", 'ReLink "h2-3"')
    assert wait_for(lambda: cabled_leaf(bed).get("h2-3") == "leaf2", seconds=60)


@needs_slurm
def test_a_cable_moved_moves_the_host(beds):
    bed, sl = beds
    offset = sl.log_size()
    bed.simfabric("sim", 'Unlink "h3-2"[1]')
    bed.simfabric("sim", 'Link "h3-2"[1] "leaf1"[%d]' % (PER_LEAF + SPINES + 1))
    assert wait_for(lambda: cabled_leaf(bed).get("h3-2") == "leaf1", seconds=60)
    expected = {h: l for h, l in cabled_leaf(bed).items() if h != LEFT_OUT}
    assert wait_for(lambda: slurm_agrees(bed, sl, expected), seconds=120), \
        (sl.topology(), expected, open(sl.topology_file).read())
    assert [e for e in sl.topology_errors(offset) if "lack access to 2 nodes: h5-[1-2]" not in e] \
        == [], sl.topology_errors(offset)


@needs_slurm
def test_a_new_leaf_comes_in_with_its_hosts(beds):
    bed, sl = beds
    offset = sl.log_size()
    for s in range(1, SPINES + 1):
        bed.simfabric("sim", 'Link "leaf5"[%d] "spine%d"[%d]' % (PER_LEAF + s, s, LEAVES + 1))
    assert wait_for(lambda: cabled_leaf(bed).get("h5-2") == "leaf5", seconds=90)
    expected = {h: l for h, l in cabled_leaf(bed).items() if h != LEFT_OUT}
    assert wait_for(lambda: slurm_agrees(bed, sl, expected), seconds=120), \
        (sl.topology(), expected, open(sl.topology_file).read())
    assert sl.topology()["spine1"][2] >= {"leaf5"}
    # the reconfiguration that took the new leaf: every host under a switch
    assert sl.reconfigured(offset) >= 1
    assert sl.last_reading_errors(offset) == [], sl.log_text(offset)


def test_bad_lines_name_file_and_line_and_write_nothing(tmp_path):
    """A bad expression, a node list that cannot be read or parsed, a file
    whose directory is not there: each an error naming the configuration's
    file and line, and the daemon does not start (nothing written)."""
    bad_list = tmp_path / "hosts"
    bad_list.write_text("h1 h2\nh[3-\n")
    conf = tmp_path / "ibsnmpd.conf"
    conf.write_text("slurmTopologyFile %s/topology.conf\n"
                    "slurmNodeName ^(a)(b)\n"
                    "slurmNodeName ^([a-\n"
                    "slurmNodes %s/missing\n"
                    "slurmNodes %s\n"
                    "slurmTopologyFile %s/no/such/dir/topology.conf\n"
                    % (tmp_path, tmp_path, bad_list, tmp_path))
    out = subprocess.run([ibsnmpd_bin(), "-f", "-Le", "-c", str(conf), "-x",
                          "unix:%s" % (tmp_path / "no-master.sock")],
                         capture_output=True, text=True, env=snmp_env(), timeout=120)
    err = out.stderr
    assert out.returncode == 1, err
    assert "%s: line 2: Error: slurmNodeName ^(a)(b): expected exactly one group" % conf in err
    assert "%s: line 3: Error: slurmNodeName ^([a-:" % conf in err
    assert "%s: line 4: Error: slurmNodes %s/missing:" % (conf, tmp_path) in err
    assert "%s: line 5: Error: slurmNodes %s: %s:2: 'h[3-': a '[' without its ']'" % (
        conf, bad_list, bad_list) in err
    assert "%s: line 6: Error: slurmTopologyFile %s/no/such/dir/topology.conf: its directory " \
        "is not there or not writable" % (conf, tmp_path) in err
    assert not (tmp_path / "topology.conf").exists()


@needs_slurm
def test_a_rail_optimized_fabric_puts_each_server_under_one_switch(tmp_path):
    servers = 16
    sl = slurm_bed.Slurm(str(tmp_path), "srv-[1-%d]" % servers)
    bed = start_testbed(big={"hosts": servers, "layout": "rail", "radix": 8, "names": "real"},
                        extra_conf=["slurmTopologyFile %s" % sl.topology_file,
                                    "slurmReloadCommand %s" % sl.reload_command(),
                                    "slurmSettle 1"])
    try:
        assert wait_for(lambda: os.path.exists(sl.topology_file), seconds=120), \
            bed.log("ibsnmpd.log")[-3000:]
        sl.start(bed)
        # the simulator's own account: each server's set of leaves
        nodes, cables = generated(bed)
        leaves = {}
        for link in cables:
            (a, _), (b, _) = sorted(link)
            for adapter, switch in ((a, b), (b, a)):
                if adapter.startswith("srv-") and switch.startswith("leaf-"):
                    leaves.setdefault(adapter.rsplit("-hca", 1)[0], set()).add(switch)
        assert len(leaves) == servers and all(len(v) == 8 for v in leaves.values())
        groups = {}
        for server, its in leaves.items():
            groups.setdefault(frozenset(its), set()).add(server)
        want = sorted(sorted(g) for g in groups.values())
        tree = sl.topology()
        level0 = [hosts for level, hosts, _ in tree.values() if level == 0]
        assert sorted(sorted(h) for h in level0) == want, (tree, want)
        # each above them reaches every server
        assert all(hosts == set(leaves) for level, hosts, _ in tree.values() if level == 1)
        assert sl.topology_errors() == [], sl.topology_errors()
    finally:
        stop_testbed(bed)


# ---- topology.yaml, read by a Slurm of 25.05 or later, on fabricsim's rail layout ----

needs_slurm_next = pytest.mark.skipif(
    not slurm_bed.installed(yaml=True),
    reason="Debian unstable's Slurm is not unpacked (scripts/install-deps does it)")
RAIL_SERVERS = 10   # radix 8: three leaves a rail, the last with two free ports
RAIL_KNOWN = 12     # slurm.conf's srv-[1-12]: two servers come with a new unit


def server_of(description):
    m = re.match(r"(srv-\d+)", description)
    return m.group(1) if m else None


def cabled_units(bed):
    """{frozenset of servers} of the servers cabled to the same set of
    switches, as ibnetdiscover shows the cables (by the switches' GUIDs: the
    simulated switches all describe themselves alike)."""
    switches, ca = {}, None
    for line in bed.run_on_node("ibnetdiscover", timeout=120).splitlines():
        m = re.match(r'^Ca\s+\d+\s+"H-[0-9a-f]+"\s+# "([^"]+)"', line)
        if m:
            ca = server_of(m.group(1))
            continue
        if not line.strip():
            ca = None
            continue
        m = re.match(r'^\[\d+\]\S*\s+"S-([0-9a-f]+)"\[', line)
        if m and ca:
            switches.setdefault(ca, set()).add(m.group(1))
    units = {}
    for server, its in switches.items():
        units.setdefault(frozenset(its), set()).add(server)
    return {frozenset(u) for u in units.values()}


def slurm_units(sl):
    """(the hosts of each level-0 switch of Slurm's tree, of each block of its
    block topology), each a set of frozensets"""
    tree = {frozenset(hosts) for level, hosts, _ in sl.topology().values() if level == 0}
    blocks = {frozenset(hosts) for hosts in sl.blocks(SLURM_UNITS).values()}
    return tree, blocks


SLURM_UNITS = "infiniband-units"
# what Slurm says of the two servers slurm.conf names before their unit is
# cabled (no switch, no block reaches them)
NOT_YET_CABLED = {
    "warning: switches lack access to 2 nodes: srv-[11-12]",
    "warning: Blocks lack access to 2 nodes: srv-[11-12]",
    "warning: TOPOLOGY: no switch can reach all nodes through its descendants. If this is "
    "not intentional, fix the topology.conf file."}


def not_yet_cabled(complaints):
    """Slurm's complaints but those of NOT_YET_CABLED"""
    return [e for e in complaints if re.sub(r"^\S+ ", "", e) not in NOT_YET_CABLED]


@pytest.fixture(scope="module")
@needs_slurm_next
def rail(tmp_path_factory):
    directory = tmp_path_factory.mktemp("slurm-next")
    sl = slurm_bed.Slurm(str(directory), "srv-[1-%d]" % RAIL_KNOWN, yaml=True)
    yield from bed_for_slurm(sl, ["slurmTopologyYaml %s" % sl.topology_file,
                                  "slurmNodeName ^(srv-[0-9]+)", "cacheLifetime fabricPorts 2"],
                             big={"hosts": RAIL_SERVERS, "layout": "rail", "radix": 8,
                                  "names": "real"})


@needs_slurm_next
def test_slurm_next_reads_the_units_as_tree_and_blocks(rail):
    """Each unit (the servers cabled to the same leaves, by ibnetdiscover) is
    one leaf of Slurm's tree and one of its blocks; each switch above reaches
    every server; Slurm's only complaint is of the two servers slurm.conf
    names and the fabric has not yet; the listener serves the file."""
    bed, sl = rail
    print(sl.scontrol("show", "topology", SLURM_UNITS))
    want = cabled_units(bed)
    assert len(want) == 3 and sum(len(u) for u in want) == RAIL_SERVERS, want
    assert slurm_units(sl) == (want, want), (slurm_units(sl), want)
    servers = set().union(*want)
    assert all(hosts == servers for level, hosts, _ in sl.topology().values() if level > 0)
    assert not_yet_cabled(sl.topology_errors()) == [], sl.topology_errors()
    out = subprocess.run(["curl", "-s", "-f", "http://127.0.0.1:%d/slurm/topology.yaml"
                          % bed.http], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout == open(sl.topology_file).read(), out.stderr


@needs_slurm_next
def test_slurm_next_a_link_down_leaves_the_yaml_as_it_was(rail):
    bed, sl = rail
    before = open(sl.topology_file).read()
    mtime = os.stat(sl.topology_file).st_mtime_ns
    runs = refreshes(bed)
    bed.simfabric("sim", 'Unlink "srv-3-hca1"')
    try:
        # ibnetdiscover no longer reaches that adapter: srv-3 on 7 leaves
        assert wait_for(lambda: frozenset({"srv-3"}) in cabled_units(bed), seconds=60)
        assert wait_for(lambda: refreshes(bed) > runs, seconds=120), runs
        assert open(sl.topology_file).read() == before
        assert os.stat(sl.topology_file).st_mtime_ns == mtime
    finally:
        bed.simfabric("sim", 'ReLink "srv-3-hca1"')
    assert wait_for(lambda: cabled_units(bed) == slurm_units(sl)[0], seconds=60), \
        (cabled_units(bed), slurm_units(sl))


@needs_slurm_next
def test_slurm_next_a_cable_moved_makes_a_unit_of_its_own(rail):
    """srv-5's rail-1 cable moved to the third leaf of rail 1: its set of
    leaves is its own now, so it is a leaf and a block of its own."""
    bed, sl = rail
    offset = sl.log_size()
    bed.simfabric("sim", 'Link "leaf-r1.1-3"[3] "srv-5-hca1"[1]')
    assert wait_for(lambda: frozenset({"srv-5"}) in cabled_units(bed), seconds=60)
    want = cabled_units(bed)
    assert wait_for(lambda: slurm_units(sl) == (want, want), seconds=120), \
        (slurm_units(sl), want, open(sl.topology_file).read())
    assert sl.reconfigured(offset) >= 1
    assert not_yet_cabled(sl.last_reading_errors(offset)) == [], sl.log_text(offset)


@needs_slurm_next
def test_slurm_next_a_new_unit_comes_in_with_its_servers(rail):
    """A unit added as a fabric grows: a leaf on each of the 8 rails, cabled
    to its rail's spines, and two servers (srv-11, srv-12) with an adapter
    on each of those leaves. Slurm then places them as one leaf and one
    block, and has nothing to say."""
    bed, sl = rail
    offset = sl.log_size()
    for rail_no in range(1, 9):
        leaf = "leaf-r%d.1-new" % rail_no
        bed.simfabric("sim", 'Add switch "%s" 8' % leaf)
        for server in (11, 12):
            hca = "srv-%d-hca%d" % (server, rail_no)
            bed.simfabric("sim", 'Add ca "%s" 1' % hca)
            bed.simfabric("sim", 'Link "%s"[%d] "%s"[1]' % (leaf, server - 10, hca))
        for k in range(1, 5):   # each spine's fourth leaf port is free
            bed.simfabric("sim", 'Link "%s"[%d] "spine-r%d.1-%d"[4]' % (leaf, 4 + k, rail_no, k))
    assert wait_for(lambda: frozenset({"srv-11", "srv-12"}) in cabled_units(bed), seconds=120)
    want = cabled_units(bed)
    assert wait_for(lambda: slurm_units(sl) == (want, want), seconds=120), \
        (slurm_units(sl), want, open(sl.topology_file).read())
    servers = set().union(*want)
    assert len(servers) == RAIL_KNOWN
    assert all(hosts == servers for level, hosts, _ in sl.topology().values() if level > 0)
    assert sl.reconfigured(offset) >= 1
    assert sl.last_reading_errors(offset) == [], sl.log_text(offset)
