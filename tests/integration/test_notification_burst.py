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
  own defaults: a second to answer, five retries), an answer with an
  error status (snmpd's genErr when its subagent is late) being none;
- ibsnmpd's answers against snmpd's own: every 0.05 s a GET of ibsnmpd's
  objects and one of snmpd's sysUpTime, sent together on one socket, each
  timed to the microsecond (manager.paired_requests). How much later
  ibsnmpd's came is what ibsnmpd cost, the machine's load taken out: at
  the 99th percentile under MAX_EXCESS_P99_MS, at most under
  MAX_EXCESS_MS (a manager with net-snmp's default one-second timeout
  never sends again); unanswered in five seconds counts five seconds;
- every notification ibsnmpd sent (its /metrics, by family) is in
  snmptrapd's log, none dropped, none left waiting or unanswered;
- ibsnmpd's main loop never blocked: no pass slept more than
  MAX_SLEEP_MS (ibsnmpdLoopLongestSleep: a pass's time neither on a core
  nor waiting for one, the MAD device's included: a write to snmpd, a
  file, a MAD sent), and none was a stall (ibsnmpdLoopStalls, loopWatchdog
  1). Its wall time (ibsnmpdLoopLongestPass) and its longest work
  (ibsnmpdLoopLongestWork) are printed: the first adds the wait for a
  core, which is the machine's; the second is issue 58's (snapshots built
  whole on the main thread: 142 ms at most here, alone).

It runs alone in ctest (RUN_SERIAL): what it measures is ibsnmpd's."""
from simfabric import burst  # on the path conftest.py sets

# measured alone here (2 cores, 2026-12-07): the 99th percentile 70 ms, at
# most 146 ms (the longest pass's work: 142 ms); a loop that blocks or
# works a second in one go exceeds them
MAX_EXCESS_P99_MS, MAX_EXCESS_MS, MAX_SLEEP_MS = 250, 1000, 250


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
    assert r["peer_answered"] == r["timed_gets"], r
    # ibsnmpd's answers against snmpd's own on the same socket
    assert r["timed_excess_p99_ms"] < MAX_EXCESS_P99_MS, r
    assert r["timed_excess_ms"] < MAX_EXCESS_MS, r
    # the main loop: never blocked, never stalled
    assert r["longest_sleep_ms"] is not None and r["longest_sleep_ms"] < MAX_SLEEP_MS, r
    assert r["stalls"] == 0, r
