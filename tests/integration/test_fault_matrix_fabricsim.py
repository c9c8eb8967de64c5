"""The fault matrix's faults on fabricsim beds (faults.py: run_protected,
run_fabric_changes), beside test_fault_matrix.py's on ibsim: a fabric
protected by M_Key under an ibsnmpd without the key (ibsim has no M_Key),
and on the rail layout a rail dead and a storm of links. In the plain
build's run (the ibsim matrix is the sanitizer build's): what must hold is
as there, and for the protected fabric ibsnmpd's own count of the M_Key
violations it caused equals the simulator's counters."""
from simfabric import faults  # on the path conftest.py sets


def test_a_protected_fabric_without_the_key():
    """fabricsim (ibsim has no M_Key): the fabric protected under an ibsnmpd
    without the key, then not: GETs answered throughout, traps flowing, the
    links fresh again after; the violations it caused are those of the SMPs
    in flight when the key came (at most madMaxPerDestination, 4, at a node)
    and its own port's one question."""
    results, reports = faults.run_protected(hold=6, progress=print)
    faults.print_table(results)
    assert not reports, "sanitizer reports from ibsnmpd:\n" + "\n".join(reports)
    (r,) = results
    assert r["recovery_s"] is not None, r
    assert r["gets_answered"] == r["gets_sent"], r
    assert r["traps_sent_after"] > 0 and r["traps_lost_after"] == 0, "%r" % (r,)
    assert r["traps_lost_during"] == 0, r  # traps are GMPs: no key needed
    assert r["mkey_violations_max_node"] <= 5, r
    assert r["mkey_violations_counted"] == r["mkey_violations"], r  # its own account
    # the guard's two lines, the discoveries from the SA and by SMP, the local
    # SMA's refresh failing and working again, the trap subscriptions: a few
    # kinds more than a fault of the ibsim matrix, each once or twice
    assert len(r["log_kinds"]) <= 10 and r["log_lines"] <= 40, r


def test_a_rail_dead_and_a_storm_of_links():
    """fabricsim's rail layout: a rail dead (its switches, every server's
    HCA on it), then alive; 64 HCAs' links down within a second, then up:
    ibsnmpd serves each while it holds (the rail's ports stale, the storm's
    links down), GETs answered throughout, traps flowing; and after, what
    the simulator answers is what ibsnmpd serves: every link iblinkinfo
    shows active is active in ibsnmpd's link table, and sample ports'
    counters, set while the fault held, read as perfquery reads them
    (faults.fabric_change_faults)."""
    results, reports = faults.run_fabric_changes(hold=6, progress=print)
    faults.print_table(results)
    assert not reports, "sanitizer reports from ibsnmpd:\n" + "\n".join(reports)
    assert [r["fault"] for r in results] == ["dead-rail", "link-storm-64-hcas"]
    for r in results:
        assert r["reported_s"] is not None, r  # ibsnmpd served the fault
        assert r["recovery_s"] is not None, r
        assert r["gets_answered"] == r["gets_sent"], r
        assert r["traps_sent_after"] > 0 and r["traps_lost_after"] == 0, "%r" % (r,)
        # (the periodic "subnet discovered" lines grow with the recovery's
        # time, which a loaded machine stretches: left out of the count)
        assert len(r["log_kinds"]) <= 8, r
        assert sum(n for kind, n in r["log_kinds"].items()
                   if not kind.startswith("subnet discovered:")) <= 40, r
