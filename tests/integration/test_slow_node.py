"""A slow or lossy node is not a changed fabric (tests/simfabric/slow.py):
on fabricsim's fat tree of 96 hosts, leaf-1-2's management processor loses
30% of the MADs to it, answers 500 ms +/- 200 ms late, answers at most 200
MADs a second, and then the whole simulator stops 3 s of every 10 s, each
for HOLD seconds; meanwhile one of the leaf's hosts has its link taken down
and brought back.

What must hold for each fault, against snmptrapd's log and the simulator:
- the simulator's own account says nothing changed (its console's Ports:
  every cabled port of the leaf up, before the host's link goes down);
- no notification but the host's link down and up, each told once
  (ibsnmpdLinkDown, ibsnmpdLinkUp naming it), the SM's traps 128 of the
  leaf, and "node not answering" (ibsnmpdNodeUnreachable, cleared) for a
  node whose silence lasted; no link, entity, LLDP, module, sensor or
  routing notification;
- no alarm row but "node not answering";
- answers 500 ms late, the leaf's counters are read fresh in 9 sweeps of
  10 at least (each node is given the time it takes: madTimeout is the
  least, not the most).
The counters are swept every 3 s here (15 s by default) so that a fault of
HOLD seconds spans ten sweeps; bench/slow_node.py runs the same with the
defaults on 2,000 hosts, five minutes a fault."""
import time

import pytest

from conftest import TRAP_OID, generated, notifications, start_testbed, stop_testbed, wait_for
from simfabric import slow  # on the path conftest.py sets

HOLD = 30
CONF = ["cacheLifetime pmCounters 3",
        # the host's link goes down and up once a fault: four times in the
        # run is a link flapping at the defaults (more than 3 in 10 minutes)
        "flapThreshold 7 1"]


@pytest.fixture(scope="module")
def results():
    checked = {}

    def unchanged(bed, name):
        """the simulator's word, once the fault is made: every cabled port
        of the leaf up (its console's own account: iblinkinfo through a
        leaf that loses 30% of its MADs took more than two minutes)"""
        checked[name] = sorted(p for p, (up, peer) in slow.sim_ports(bed, slow.LEAF).items()
                               if peer and not up)
    res, reports = slow.run(hosts=96, radix=16, hold=HOLD, conf=CONF, progress=print,
                            check=unchanged)
    slow.print_results(res)
    assert not reports, "sanitizer reports from ibsnmpd:\n" + "\n".join(reports)
    return {r["fault"]: r for r in res}, checked


@pytest.mark.parametrize("fault", list(slow.FAULTS))
def test_a_slow_or_lossy_leaf_changes_nothing_but_what_changed(results, fault):
    by_fault, unchanged = results
    r = by_fault[fault]
    assert unchanged[fault] == [], unchanged[fault]  # the simulator: nothing changed
    assert slow.false_notifications(r) == {}, r
    assert set(r["alarms_came"]) <= {"ibsnmpdNodeUnreachable"}, r
    # the real change, told once each way
    assert r["link_downs_told"] == 1 and r["link_ups_told"] == 1, r
    if fault == "delay-500ms":
        shares = r["fresh_shares"]
        assert len(shares) >= 5, r
        assert sum(1 for s in shares if s == 1) >= 0.9 * len(shares), r


def test_a_trap_whose_read_was_lost_is_read_again():
    """The SM's trap 128 of a leaf comes while the leaf answers no MAD (its
    management processor loses them all for 4 s): the leaf is read again
    once it answers (fabric_sweep.c: 1, 2, 4, 8, 16 s after), so the host's
    link down is told, though no periodic sweep comes (fabricPorts 600 s)
    and the topology's own discovery does not either (pmDiscoveryInterval
    600 s). The change is the simulator's word (its console's Ports), told
    by snmptrapd's log."""
    b = start_testbed(big={"hosts": 16, "radix": 8}, minimal=False,
                      extra_conf=["cacheLifetime fabricPorts 600", "pmDiscoveryInterval 600"])
    try:
        nodes, links = generated(b)
        host = sorted((n for link in links for n, p in link
                       if n.startswith("host-") and any(m == slow.LEAF for m, _ in link)),
                      key=lambda h: int(h.split("-")[1]))[0]
        port = next(p for link in links for n, p in link if n == slow.LEAF and
                    any(m == host for m, _ in link))
        assert slow.quiet(b, 5, 120)  # start-up's notifications gone out
        names = slow.notification_names()
        since = len(notifications(b))
        b.sim('Loss "%s" 100' % slow.LEAF)
        b.sim('Unlink "%s"' % host)
        time.sleep(4)  # the trap came; the leaf's read 1 s after it went unanswered
        b.sim('Loss "%s" 0' % slow.LEAF)
        assert slow.sim_ports(b, slow.LEAF)[port][0] is False  # the simulator: down

        def told(kind):
            return [n for n in notifications(b)[since:]
                    if names.get(n.get(TRAP_OID, "")) == kind and
                    any(host in v for v in n.values())]
        assert wait_for(lambda: told("ibsnmpdLinkDown"), seconds=60), \
            ("the link down was not told", b.log("ibsnmpd.log")[-3000:])
        b.sim('ReLink "%s"' % host)
        assert wait_for(lambda: told("ibsnmpdLinkUp"), seconds=60)
        assert slow.sim_ports(b, slow.LEAF)[port][0] is True
        assert len(told("ibsnmpdLinkDown")) == 1 and len(told("ibsnmpdLinkUp")) == 1
    finally:
        stop_testbed(b)
