"""Every fault of the test-bed package's faults.py (bench/faults.py prints
its figures), each held a short while (snmpd stopped for 10 s:
test_faults.py stops it for 30), in three groups of faults on a fat-tree
test bed each while a manager polls and traps flow (bench/README.md has a
longer run). What must hold for each fault:

- it is over: ibsnmpd answers again, a trap sent after the fault arrives, and
  what the fault touched is right again (faults.py says what);
- no trap sent after the recovery is lost; and with snmpd stopped (SIGTERM, as
  a package upgrade does), none sent while it was away either;
- ibsnmpd answers every GET throughout, unless the fault is in snmpd itself
  (killed, stopped): no request waits on the fabric;
- the log says what happened in a few lines, not one per MAD or per retry
  (50 SIGHUPs: two lines each, "re-reading" and net-snmp's warning that its
  AgentX session is open already)."""
import pytest

from simfabric import faults  # on the path conftest.py sets

MASTER_FAULTS = ("snmpd-sigkill", "snmpd-sigstop", "snmpd-outage")

# With its own port's link down, every area that reads beyond it says once
# that it cannot (the SMA, the discovery, the counter sweep, the trap
# subscriptions), and which of them says it depends on which periodic work
# falls inside the fault (pmDiscoveryInterval 10, the subscriptions' round,
# the counters' sweep): a count of kinds is the machine's pace, not the
# log's. What may be said, numbers folded (faults.kinds); anything else fails.
OWN_LINK_DOWN_SAYS = (
    "the local port's link is Down (was Active): nothing beyond it can be read until it is back",
    "the local port's link is Active again",
    "subnet discovery saw the local node only (its link is down?); keeping the previous node "
    "list of # nodes",
    "subnet discovered: # nodes, # ports in # s",
    "counter sweep: # of # nodes do not answer (",
    "counter sweep: every node answers again",
    "the SM at LID # does not answer; subscribing to traps again when it is master",
    "trap #: the SA at LID # does not answer; trying again in # s",
    "subscribed to trap # with the SA at LID #",
)

# Three groups, each on a bed of its own, so that pytest-xdist (test-all runs
# this file with -n 3) holds them side by side: the fabric and the files; the
# master agent and the SM; the discovery helper.
GROUPS = {
    "fabric-and-files": ("mad-loss-30%-own-port", "mad-loss-100%-far-leaf", "own-link-down",
                         "partition-file-fifo", "partition-file-replaced"),
    "master-and-sm": ("snmpd-sigkill", "snmpd-sigstop", "snmpd-outage", "sm-failover",
                      "sighup-x50-in-sweeps"),
    "discovery-helper": ("discovery-helper-hangs", "discovery-helper-dies"),
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_fault_ends_and_loses_no_trap_after_it(group):
    results, reports = faults.run(hold=6, stop_hold=10, only=GROUPS[group], progress=print)
    faults.print_table(results)
    assert not reports, "sanitizer reports from ibsnmpd:\n" + "\n".join(reports)
    assert sorted(r["fault"] for r in results) == sorted(GROUPS[group])
    for r in results:
        name = r["fault"]
        assert r["recovery_s"] is not None, name
        assert r["traps_sent_after"] > 0 and r["traps_lost_after"] == 0, "%r" % (r,)
        if name not in MASTER_FAULTS:
            assert r["gets_answered"] == r["gets_sent"], r
        if name == "snmpd-outage":  # kept while snmpd was away, sent when it was back
            assert r["traps_sent_during"] > 0 and r["traps_lost_during"] == 0, r
        if name == "sighup-x50-in-sweeps":  # per signal: ours, and net-snmp's re-open warning
            assert len(r["log_kinds"]) <= 4 and r["log_lines"] <= 2 * 50 + 5, r
        elif name == "own-link-down":
            said = [k for k in r["log_kinds"] if not k.startswith(OWN_LINK_DOWN_SAYS)]
            assert said == [] and r["log_lines"] <= 40, "%r" % (r,)
        else:
            assert len(r["log_kinds"]) <= 8 and r["log_lines"] <= 40, r


def test_the_groups_cover_every_fault():
    names = [f[0] for f in faults.faults(6, 10)]
    grouped = [n for g in GROUPS.values() for n in g]
    assert len(names) == 12 and sorted(names) == sorted(grouped)
