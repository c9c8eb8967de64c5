"""The simulator's console changes the topology as a fabric changes: a new
host cabled to a free port, a new switch with a host behind it, a cable
moved to another switch (fabricsim's Add and two-port Link, in the style of
ibsim's Link), links down and up. After each, ibnetdiscover shows the
change, and ibsnmpd (told by trap 128, the link sweep reading the switch)
serves it without a discovery, by probes around the ports that changed:
every link up in its link table is one ibnetdiscover shows, and every one
ibnetdiscover shows is there; its nodes and LIDs are ibnetdiscover's, and
what a restarted ibsnmpd serves."""
import random
import time

import pytest

from conftest import generated, links, node_guids, start_testbed, stop_testbed, wait_for

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
PORT = MIB + "1.5.1.1."   # ibsnmpdFabricPortEntry
NODE = MIB + "1.6.1.1."   # ibsnmpdNodeEntry
FOLLOWED = "subnet changed:"


@pytest.fixture(scope="module")
def bed():
    # 14 hosts on radix-8 switches: leaf-1-4 has two free ports (3 and 4)
    b = start_testbed(big={"hosts": 14, "radix": 8},
                      extra_conf=["cacheLifetime fabricPorts 2", "notificationLimit 100 60"])
    try:
        yield b
    finally:
        stop_testbed(b)


def column(bed, entry, n):
    """{index: value} of column n of a table's entry"""
    prefix = entry + "%d." % n
    return {oid[len(prefix):]: v.strip('"') for oid, (_, v) in bed.walk(prefix[:-1]).items()}


def served_links(bed):
    """{(node, port): (remote node, remote port)} of the links up in the table"""
    desc, state, rdesc, rport = (column(bed, PORT, n) for n in (3, 6, 16, 17))
    # a row that came between the columns' walks is read at the next try
    return {(desc[i], int(i.rsplit(".", 1)[1])): (rdesc[i], int(rport[i]))
            for i in state if state[i] == "4" and rdesc.get(i) and i in desc and i in rport}


def served_nodes(bed):
    """{node GUID: (LID, context)} of the nodes ibsnmpd says it reaches"""
    lid, context, reachable = (column(bed, NODE, n) for n in (4, 6, 7))
    return {int.from_bytes(bytes(int(x) for x in i.split(".")), "big"): (int(lid[i]),
                                                                         context.get(i))
            for i in reachable if reachable[i] == "1" and i in lid}


def discovered_nodes(bed):
    """{node GUID: LID} as ibnetdiscover sees them"""
    return {guid: lid for guid, lid in node_guids(bed).values()}


def follows(bed, expect):
    theirs = links(bed)
    assert all(theirs.get(a) == b and theirs.get(b) == a for a, b in expect), theirs
    assert wait_for(lambda: served_links(bed) == links(bed), seconds=60), \
        (sorted(set(served_links(bed).items()) ^ set(links(bed).items())))


def test_a_new_host_a_new_switch_and_a_moved_cable(bed):
    assert wait_for(lambda: served_links(bed) == links(bed), seconds=60)
    bed.simfabric("sim", 'Add ca "host-new" 1')
    bed.simfabric("sim", 'Link "leaf-1-4"[3] "host-new"[1]')
    follows(bed, [(("leaf-1-4", 3), ("host-new", 1))])
    bed.simfabric("sim", 'Add switch "leaf-new" 8')
    bed.simfabric("sim", 'Add ca "host-x" 1')
    bed.simfabric("sim", 'Link "leaf-new"[1] "host-x"[1]')
    bed.simfabric("sim", 'Link "leaf-new"[5] "leaf-1-4"[4]')
    follows(bed, [(("leaf-new", 1), ("host-x", 1)), (("leaf-new", 5), ("leaf-1-4", 4))])
    # host-13's cable from leaf-1-4 port 1 to leaf-new port 2
    bed.simfabric("sim", 'Link "leaf-new"[2] "host-13"[1]')
    follows(bed, [(("leaf-new", 2), ("host-13", 1))])
    assert ("leaf-1-4", 1) not in links(bed)
    # followed by probes, not by discoveries of the whole subnet
    log = open(bed.path("ibsnmpd.log")).read()
    assert log.count(FOLLOWED) >= 3, log
    assert "rediscovering the subnet" not in log, log


@pytest.fixture(scope="module")
def bed_random():
    b = start_testbed(big={"hosts": 24, "radix": 8},
                      extra_conf=["cacheLifetime fabricPorts 2", "notificationLimit 100 60"])
    try:
        yield b
    finally:
        stop_testbed(b)


def test_a_random_sequence_of_changes_then_a_restart(bed_random):
    """200 changes at random (links down and up, cables moved, hosts added),
    up to two tenths of a second apart: then the served topology is
    ibnetdiscover's (every link, node and LID), followed without a
    discovery, and a restarted ibsnmpd serves the same."""
    bed = bed_random
    nodes, cables = generated(bed)
    assert wait_for(lambda: served_links(bed) == links(bed), seconds=60)
    at = {}   # host -> its leaf port; up or down
    for a, b in (tuple(c) for c in cables):
        for x, y in ((a, b), (b, a)):
            if x[0].startswith("host-") and y[0].startswith("leaf-"):
                at[x[0]] = y
    leaves = sorted(n for n in nodes if n.startswith("leaf-"))
    used = set(at.values())
    free = [(leaf, p) for leaf in leaves for p in range(1, nodes[leaf][2] // 2 + 1)
            if (leaf, p) not in used]
    up = {h: True for h in at if h != "host-1"}   # host-1 runs ibsnmpd
    rnd = random.Random(37)
    added = changes = 0
    while changes < 200:
        kind = rnd.choice(["down", "up", "move", "add"] if free else ["down", "up"])
        host = rnd.choice(sorted(up))
        changes += 1
        if kind == "down" and up[host]:
            bed.simfabric("sim", 'Unlink "%s"' % host)
            up[host] = False
        elif kind in ("up", "down") and not up[host]:
            bed.simfabric("sim", 'ReLink "%s"' % host)
            up[host] = True
        elif kind == "move" and free:
            to = free.pop(rnd.randrange(len(free)))
            bed.simfabric("sim", 'Link "%s"[%d] "%s"[1]' % (to[0], to[1], host))
            free.append(at[host])
            at[host] = to
            up[host] = True
        elif kind == "add" and free:
            added += 1
            name = "host-r%d" % added
            to = free.pop(rnd.randrange(len(free)))
            bed.simfabric("sim", 'Add ca "%s" 1' % name)
            bed.simfabric("sim", 'Link "%s"[%d] "%s"[1]' % (to[0], to[1], name))
            at[name] = to
            up[name] = True
        else:
            changes -= 1
            continue
        time.sleep(rnd.uniform(0, 0.2))
    assert wait_for(lambda: served_links(bed) == links(bed), seconds=90), \
        sorted(set(served_links(bed).items()) ^ set(links(bed).items()))
    theirs = discovered_nodes(bed)
    assert wait_for(lambda: {g: v[0] for g, v in served_nodes(bed).items()} == theirs,
                    seconds=30), (served_nodes(bed), theirs)
    log = open(bed.path("ibsnmpd.log")).read()
    assert log.count(FOLLOWED) >= 10, log
    assert "rediscovering the subnet" not in log, log
    before_links, before_nodes = served_links(bed), served_nodes(bed)
    # what ibsnmpd serves after a restart (one discovery): the same
    bed.stop("ibsnmpd")
    bed.start("ibsnmpd")
    assert wait_for(lambda: served_nodes(bed) == before_nodes, seconds=60), \
        (served_nodes(bed), before_nodes)
    assert wait_for(lambda: served_links(bed) == before_links, seconds=60)
