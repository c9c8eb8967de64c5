"""IB traps to SMA-MIB notifications, through the real chain: the fabric
(ibsim, a trap injector attached to hca3) -> opensm -> ibsnmpd -> snmpd ->
snmptrapd, whose log is read here.

The simulator hands SA Reports only to IsSM clients: ibsnmpd runs with
tests/tools/sim_issm_shim.c preloaded (a test-only workaround). Traps 129-131
come from opensm's log, as on an SM host (osmLogFile)."""
import os
import re
import signal
import time

import pytest

from conftest import (TRAP_OID, node_guids, notifications, start_testbed, stop_testbed,
                      tool_path, wait_for)

NOTIFY = ".1.3.6.1.3.117.3.2."        # ibSmaNotifications.N
NODE = ".1.3.6.1.3.117.3.1.1."        # ibSmaNodeInfo.N.0
TRAPS = ".1.3.6.1.4.1.8072.9999.9999.117.1.4."  # ibsnmpdTraps.N.0

OBJ = {"lid": 14, "port": 15, "method": 16, "attrid": 17, "attrmod": 18, "key": 19,
       "lid2": 20, "sl": 21, "qp1": 22, "qp2": 23, "gid1": 24, "gid2": 25, "capmask": 26,
       "swlid": 27, "valid": 28, "sysguid": 6}


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca1", preload=tool_path("sim_issm_shim.so", "SIM_ISSM_SHIM"),
                      extra_conf=["saKey 0x1", "osmLogFile {dir}/opensm.log",
                                  "trapResubscribeInterval 2", "notificationLimit 1000 60"])
    try:
        assert wait_for(lambda: "subscribed to trap 259" in b.log("ibsnmpd.log"), seconds=60)
        yield b
    finally:
        stop_testbed(b)


def wait_notification(bed, number, after, match=lambda n: True):
    """The first notification ibSmaNotifications.number (after the first
    `after` of the log) that satisfies match."""
    found = []

    def seen():
        found[:] = [n for n in notifications(bed)[after:]
                    if n.get(TRAP_OID) == ".1.3.6.1.3.117.3.2.%d" % number and match(n)]
        return found
    assert wait_for(seen, seconds=60), "no ibSmaNotifications.%d in %s" % (
        number, notifications(bed)[after:])
    return found[0]


def value(n, obj):
    return n[NODE + "%d.0" % OBJ[obj]]


def hexval(n, obj):
    return value(n, obj).replace(" ", "").upper()


def inject(bed, *args):
    return bed.run_on_node(tool_path("sim-trap-injector", "SIM_TRAP_INJECTOR"), *args,
                           node="hca3")


def test_link_state_change_from_the_simulator(bed):
    """Unlink / ReLink a port: the switch's trap 128 arrives as
    ibSmaPortLinkStateChange with the switch's LID (as ibnetdiscover shows),
    and the topology follows it for the counters (hca2 gone, then back)."""
    sw_lid = node_guids(bed)["sw1"][1]
    for command, nodes in (('Unlink "hca2"[1]', 3), ('ReLink "hca2"[1]', 4)):
        before = len(notifications(bed))
        topology = re.compile(r"^subnet (?:discovered|changed):.* %d nodes," % nodes, re.M)
        seen = len(topology.findall(bed.log("ibsnmpd.log")))
        bed.simfabric("sim", command)
        n = wait_notification(bed, 1, before)
        assert int(value(n, "lid")) == sw_lid
        assert wait_for(lambda: len(topology.findall(bed.log("ibsnmpd.log"))) > seen)


# (trap, injector fields, notification, {object: expected value})
CASES = [
    (129, ["lid=4", "port=1"], 2, {"lid": "4", "port": "1"}),
    (130, ["lid=4", "port=1"], 3, {"lid": "4", "port": "1"}),
    (131, ["lid=4", "port=1"], 4, {"lid": "4", "port": "1"}),
    (144, ["lid=4", "capmask=0x0251a04a"], 5, {"lid": "4", "capmask": "0251A04A"}),
    (145, ["lid=4", "sysguid=0xabcdef0123456789"], 6,
     {"lid": "4", "sysguid": "ABCDEF0123456789"}),
    # the M_Key is a secret: zeros unless exposeKeys
    (256, ["lid=4", "method=2", "attrid=0x15", "attrmod=7", "key=0x1122334455667788"], 7,
     {"key": "0000000000000000", "lid": "4", "method": "2", "attrid": "21", "attrmod": "7"}),
    (257, ["lid1=4", "lid2=2", "key=0x8001", "sl=3", "qp1=0x123", "qp2=0x456",
           "gid1=fe800000000000000000000000100005", "gid2=fe800000000000000000000000100001"],
     8, {"key": "0000000000008001", "lid": "4", "lid2": "2", "sl": "3", "qp1": "291",
         "qp2": "1110", "gid1": "FE800000000000000000000000100005",
         "gid2": "FE800000000000000000000000100001"}),
    (258, ["lid1=4", "lid2=2", "key=0x80010000", "sl=9", "qp1=0xabcdef", "qp2=1"], 9,
     {"key": "0000000080010000", "lid": "4", "lid2": "2", "sl": "9", "qp1": "11259375",
      "qp2": "1", "gid1": "0" * 32, "gid2": "0" * 32}),
    (259, ["valid=0x00ff", "lid1=4", "lid2=2", "key=0x8002", "sl=5", "qp1=7", "qp2=8",
           "swlid=1", "port=3", "gid1=fe800000000000000000000000100005"], 10,
     {"key": "0000000000008002", "lid": "4", "lid2": "2", "sl": "5", "qp1": "7", "qp2": "8",
      "swlid": "1", "valid": "00FF", "gid1": "FE800000000000000000000000100005",
      "gid2": "0" * 32}),
]


@pytest.mark.parametrize("trap,args,number,expect", CASES, ids=[str(c[0]) for c in CASES])
def test_injected_trap_arrives_with_every_varbind(bed, trap, args, number, expect):
    before = len(notifications(bed))
    inject(bed, str(trap), *args)
    n = wait_notification(bed, number, before)
    hexobjs = ("key", "gid1", "gid2", "capmask", "valid", "sysguid")
    got = {o: (hexval(n, o) if o in hexobjs else value(n, o)) for o in expect}
    assert got == expect
    # exactly the notification's OBJECTS: sysUpTime, snmpTrapOID and those
    assert len(n) == 2 + len(expect)


def test_killed_and_restarted_subscriber_gets_each_trap_once(bed):
    """ibsnmpd killed (it could not unsubscribe) and started again: its new
    subscriptions are the same records for the SA, each trap is notified
    once."""
    pid = int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read())
    os.kill(pid, signal.SIGKILL)

    def gone():
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True
    assert wait_for(gone)
    bed.simfabric("start", "ibsnmpd")
    subscriptions = TRAPS + "6.0"

    def subscribed():
        out = bed.snmp("snmpget", subscriptions)
        return out.returncode == 0 and out.stdout.strip().endswith(": 10")
    assert wait_for(subscribed, seconds=60)  # (-Lf starts the log file anew)
    before = len(notifications(bed))
    inject(bed, "258", "lid1=4", "lid2=3", "key=0x1234", "qp1=5", "qp2=6")
    wait_notification(bed, 9, before, lambda n: value(n, "lid2") == "3")
    time.sleep(2)
    again = [n for n in notifications(bed)[before:] if n.get(TRAP_OID, "").endswith(".2.9")]
    assert len(again) == 1


def test_retransmitted_report_is_answered_but_notified_once(bed):
    """A Report sent twice with one TID (as an SA retransmits when it missed
    the ReportResp) gives one notification; ibsnmpdReportsRepeated counts the
    second."""
    lid = node_guids(bed)["hca1"][1]
    repeated = TRAPS + "4.0"
    base = int(bed.get(repeated)[repeated][1])
    before = len(notifications(bed))
    for _ in range(2):
        inject(bed, "-R", str(lid), "-t", "0x4242", "145", "lid=4", "sysguid=0x4242")
    wait_notification(bed, 6, before, lambda n: hexval(n, "sysguid") == "0000000000004242")
    assert wait_for(lambda: int(bed.get(repeated)[repeated][1]) == base + 1)
    time.sleep(1)
    assert len([n for n in notifications(bed)[before:]
                if n.get(TRAP_OID, "").endswith(".2.6")]) == 1


def test_malformed_report_is_dropped_with_a_log_line(bed):
    lid = node_guids(bed)["hca1"][1]
    malformed = TRAPS + "5.0"
    base = int(bed.get(malformed)[malformed][1])
    before = len(notifications(bed))
    inject(bed, "-R", str(lid), "-M", "145", "lid=4", "sysguid=0x77")
    assert wait_for(lambda: int(bed.get(malformed)[malformed][1]) == base + 1)
    assert "dropping a malformed Report from LID" in bed.log("ibsnmpd.log")
    time.sleep(1)
    assert len(notifications(bed)) == before


def test_flapping_source_is_rate_limited(bed):
    """notificationLimit 3 per 60 s: ten traps 144 of one source give three
    notifications, the rest counted as suppressed and logged."""
    conf = os.path.join(bed.dir, "ibsnmpd.conf")
    pid = int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read())
    with open(conf, "a") as f:
        f.write("notificationLimit 3 60\n")
    os.kill(pid, signal.SIGHUP)
    assert wait_for(lambda: bed.log("ibsnmpd.log").count("re-reading the configuration") >= 1)
    suppressed = TRAPS + "3.0"
    base = int(bed.get(suppressed)[suppressed][1])
    before = len(notifications(bed))
    inject(bed, "-n", "10", "-i", "20000", "144", "lid=3", "capmask=0x77")
    assert wait_for(lambda: int(bed.get(suppressed)[suppressed][1]) == base + 7)
    got = [n for n in notifications(bed)[before:] if n.get(TRAP_OID, "").endswith(".2.5")]
    assert len(got) == 3
    assert "more than 3 in 60 s" in bed.log("ibsnmpd.log")
    with open(conf, "a") as f:
        f.write("notificationLimit 1000 60\n")
    os.kill(pid, signal.SIGHUP)


def test_traps_still_arrive_after_opensm_restarts(bed):
    """opensm forgets subscriptions when it restarts; ibsnmpd notices (the SM
    stops answering SMInfo, or its ActCount starts again) and subscribes
    again, without being restarted. (A second IsSM client makes a restarting opensm hang in ibsim:
    the test shim gives IsSM up on SIGUSR2 while opensm starts.)"""
    pid = int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read())
    renewed = bed.log("ibsnmpd.log").count("subscribed to trap 144")
    os.kill(pid, signal.SIGUSR2)
    assert wait_for(lambda: "IsSM given up" in bed.log("ibsnmpd.out"))
    bed.simfabric("stop", "opensm")
    up = bed.log("opensm.log").count("SUBNET UP")
    bed.simfabric("start", "opensm")
    assert wait_for(lambda: bed.log("opensm.log").count("SUBNET UP") > up, seconds=120)
    os.kill(pid, signal.SIGUSR2)
    assert wait_for(lambda: "IsSM taken again" in bed.log("ibsnmpd.out"))
    # seen either as an SM that stopped answering, or (if the restart fell
    # between two checks) as an ActCount that started again
    assert wait_for(lambda: bed.log("ibsnmpd.log").count("subscribed to trap 144") > renewed)

    def arrives():
        before = len(notifications(bed))
        inject(bed, "144", "lid=4", "capmask=0x%08x" % int(time.time()))
        return wait_for(lambda: any(n.get(TRAP_OID, "").endswith(".2.5")
                                    for n in notifications(bed)[before:]), seconds=3)
    assert wait_for(arrives, seconds=60)
    assert int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read()) == pid


def test_trap_statistics(bed):
    got = bed.walk(TRAPS[:-1])
    assert int(got[TRAPS + "1.0"][1]) >= int(got[TRAPS + "2.0"][1]) > 0
    assert int(got[TRAPS + "6.0"][1]) == 10  # every SMA-MIB trap subscribed


def test_class_port_info_is_asked_once_per_discovery_and_again_after_trap_144():
    """A sweep reads PortCounters of every port; each node's PMA ClassPortInfo
    (64-bit counters or not) is asked once after the discovery, not at every
    sweep, and again for a node whose trap 144 says its capabilities changed."""
    b = start_testbed(node="hca1", preload=tool_path("sim_issm_shim.so", "SIM_ISSM_SHIM"),
                      debug="ibsnmpd:mad,ibsnmpd:pm",
                      extra_conf=["saKey 0x1", "cacheLifetime pmCounters 1"])
    try:
        assert wait_for(lambda: "subscribed to trap 144" in b.log("ibsnmpd.log"), seconds=60)

        def sweeps():
            return b.log("ibsnmpd.log").count("ports done")

        def asked():  # PerfMgt (class 0x04) ClassPortInfo (attr 0x0001),
            # less the M_Key guard's own (asked with its PortInfo, mad_guard.c)
            log = b.log("ibsnmpd.log")
            return (log.count("sent class 0x04 attr 0x0001 ") -
                    log.count("M_Key guard: asking this port's PortInfo and PerfMgt"))

        def after_sweeps(n):
            start = sweeps()
            assert wait_for(lambda: sweeps() >= start + n, seconds=60)

        after_sweeps(2)
        first = asked()
        assert first == 4  # sw1 and hca1-3: once each
        after_sweeps(3)
        assert asked() == first
        hca3_lid = node_guids(b)["hca3"][1]
        inject(b, "144", "lid=%d" % hca3_lid, "capmask=0x%08x" % int(time.time()))
        assert wait_for(lambda: asked() == first + 1, seconds=30)
        after_sweeps(3)
        assert asked() == first + 1  # that node only, once
    finally:
        stop_testbed(b)
