"""The simulator's console changes the topology as a fabric changes: a new
host cabled to a free port, a new switch with a host behind it, a cable
moved to another switch (fabricsim's Add and two-port Link, in the style of
ibsim's Link). After each, ibnetdiscover shows the change, and ibsnmpd
(told by trap 128) serves it: every link up in its link table is one
ibnetdiscover shows, and every one ibnetdiscover shows is there."""
import pytest

from conftest import links, start_testbed, stop_testbed, wait_for

PORT = ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1.1."   # ibsnmpdFabricPortEntry


@pytest.fixture(scope="module")
def bed():
    # 14 hosts on radix-8 switches: leaf-1-4 has two free ports (3 and 4)
    b = start_testbed(big={"hosts": 14, "radix": 8},
                      extra_conf=["cacheLifetime fabricPorts 2", "notificationLimit 100 60"])
    try:
        yield b
    finally:
        stop_testbed(b)


def served_links(bed):
    """{(node, port): (remote node, remote port)} of the links up in the table"""
    def column(n):
        prefix = PORT + "%d." % n
        return {oid[len(prefix):]: v.strip('"') for oid, (_, v) in
                bed.walk(prefix[:-1]).items()}
    desc, state, rdesc, rport = column(3), column(6), column(16), column(17)
    # a row that came between the columns' walks is read at the next try
    return {(desc[i], int(i.rsplit(".", 1)[1])): (rdesc[i], int(rport[i]))
            for i in state if state[i] == "4" and rdesc.get(i) and i in desc and i in rport}


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
