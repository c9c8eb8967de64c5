"""The simulated fabric as it comes (scripts/simfabric up with no option, what
scripts/demo and a new user start): IB traps 128-131, 144, 145 and 256-259
reach snmptrapd, and a partition
created over SNMP is applied by the bed's opensm, checked with smpquery on the
ports. The other integration tests start their beds with --minimal and
configure what they test."""
import pytest

from conftest import (TRAP_OID, guid_index, node_guids, notified_on_unlink, notifications,
                      port_pkeys, start_testbed, stop_testbed, wait_for)
from test_traps import CASES, inject

PART = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.1.1"
MEMBER = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.2.1"
CREATE_AND_GO, DESTROY = "4", "6"
LINK_STATE_CHANGE = ".1.3.6.1.3.117.3.2.1"  # ibSmaPortLinkStateChange (trap 128)


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca1", minimal=False)
    try:
        yield b
    finally:
        stop_testbed(b)


def test_the_bed_sets_traps_and_partitions_up(bed):
    conf = bed.log("ibsnmpd.conf")
    for line in ("saKey 0x1", "osmLogFile %s/opensm.log" % bed.dir,
                 "partitionFile %s/partitions.conf" % bed.dir,
                 "opensmPidFile %s/opensm.pid" % bed.dir):
        assert line in conf.splitlines()
    # the IsSM shim is preloaded: ibsnmpd's trap subscriptions are taken
    assert wait_for(lambda: "subscribed to trap 128" in bed.log("ibsnmpd.log"), seconds=60)


def test_a_link_taken_down_gives_a_trap_in_snmptrapd(bed):
    assert wait_for(lambda: "subscribed to trap 128" in bed.log("ibsnmpd.log"), seconds=60)
    assert notified_on_unlink(bed, '"hca3"[1]', LINK_STATE_CHANGE)


@pytest.mark.parametrize("trap,args,number", [c[:3] for c in CASES],
                         ids=[str(c[0]) for c in CASES])
def test_every_trap_reaches_snmptrapd(bed, trap, args, number):
    """Traps 129-131, 144, 145 and 256-259 from a node of the fabric (the
    injector on hca3, through opensm) arrive as their SMA-MIB notification."""
    assert wait_for(lambda: "subscribed to trap 259" in bed.log("ibsnmpd.log"), seconds=60)
    before = len(notifications(bed))
    inject(bed, str(trap), *args)
    oid = ".1.3.6.1.3.117.3.2.%d" % number
    assert wait_for(lambda: any(n.get(TRAP_OID) == oid for n in notifications(bed)[before:]),
                    seconds=60)


def test_a_partition_created_over_snmp_is_applied_on_the_ports(bed):
    guids = node_guids(bed)
    (g1, lid1), (g2, lid2) = guids["hca1"], guids["hca2"]
    pkey = 0x0456
    out = bed.snmp("snmpset", "%s.10.%d" % (PART, pkey), "i", CREATE_AND_GO,
                   "%s.2.%d" % (PART, pkey), "s", "demo",
                   "%s.4.%d.%s" % (MEMBER, pkey, guid_index(g1 + 1)), "i", CREATE_AND_GO,
                   "%s.2.%d.%s" % (MEMBER, pkey, guid_index(g1 + 1)), "i", "1",
                   "%s.4.%d.%s" % (MEMBER, pkey, guid_index(g2 + 1)), "i", CREATE_AND_GO,
                   "%s.2.%d.%s" % (MEMBER, pkey, guid_index(g2 + 1)), "i", "1",
                   community=bed.env["SNMP_RW_COMMUNITY"])
    assert out.returncode == 0, out.stderr
    try:
        assert wait_for(lambda: port_pkeys(bed, lid1).get(pkey) is True and
                        port_pkeys(bed, lid2).get(pkey) is True, seconds=60)
    finally:
        bed.snmp("snmpset", "%s.10.%d" % (PART, pkey), "i", DESTROY,
                 community=bed.env["SNMP_RW_COMMUNITY"])
    assert wait_for(lambda: pkey not in port_pkeys(bed, lid1), seconds=60)
