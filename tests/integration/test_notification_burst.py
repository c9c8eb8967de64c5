"""A burst of notifications made on purpose, through the real snmpd: a rail
dead and 192 modules pulled out at once on a rail bed of 64 servers (912
nodes, 400 switch contexts), about a thousand notifications of five
families (IB traps, links, modules, entities, alarms) within a few seconds,
no notification limit (tests/simfabric/burst.py has the bed and the
burst). Before ibsnmpd paced its AgentX writes, a burst of a few hundred
in one pass deadlocked it with snmpd: each blocked writing to the other
for good.

What must hold, while a manager GETs and walks through snmpd:
- every GET answered, every walk complete (snmpget's and snmpbulkwalk's
  one-second timeout, one retry as managers do); every GET timed to the
  microsecond answered within a second of snmpd's own sysUpTime sent with
  it: on a loaded machine (CI's test-all, six beds beside a compile) snmpd
  itself can take a second to answer, and that second is not ibsnmpd's;
- every notification ibsnmpd sent (its /metrics, by family) is in
  snmptrapd's log, none dropped, none left waiting or unanswered;
- ibsnmpd's main loop never took a second for a pass
  (ibsnmpdLoopLongestPass, its watchdog's figure; no stall logged)."""
from simfabric import burst  # on the path conftest.py sets


def test_a_burst_of_a_thousand_notifications_blocks_nothing_and_loses_nothing():
    r = burst.run_burst(progress=print)
    burst.print_result(r)
    assert not r["reports"], "sanitizer reports from ibsnmpd:\n" + "\n".join(r["reports"])
    assert r["ibsnmpd_alive"], r
    assert r["settled"], r  # everything went out, and nothing waits
    # the burst: about a thousand, of five families
    assert r["sent_total"] >= 900, r
    for family in ("ib_trap", "link", "vitals", "entity", "alarm"):
        assert r["sent"][family] > 0, (family, r)
    # none lost: each in snmptrapd's log
    assert r["logged"] == r["sent"], r
    assert r["dropped"] == 0 and r["queued"] == 0 and r["in_flight"] == 0, r
    assert r["unanswered"] == 0, r
    # the manager: every GET answered, every walk whole
    assert r["gets_answered"] == r["gets_sent"] > 0, r
    assert r["walks_complete"] == r["walks_started"] > 0, r
    assert r["timed_answered"] == r["timed_gets"] > 0, r
    # each within a second of snmpd's own answer sent at the same moment
    assert r["peer_answered"] == r["timed_gets"], r
    assert r["timed_excess_ms"] < 1000, r
    # the main loop came round every second at least
    assert r["longest_pass_ms"] is not None and r["longest_pass_ms"] < 1000, r
    assert r["stalls"] == 0, r
