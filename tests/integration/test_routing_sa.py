"""routingSource sa: the routing checks read the SM's copy of the switches'
forwarding tables (the SA's LinearForwardingTableRecords, through the
discovery helper) and compare a sample of it with the switches by SMP. On
fabricsim, whose SA answers the SM's routes while its console (Lft)
changes a switch's own table: every table read, the LIDs per port the same
as ibroute reads from the switches, every check passed, the SMPs the
sample's alone; a switch's table changed is caught by the sample and named,
and clears. (ibsim with opensm cannot serve it: opensm leaves RMPP to the
kernel, and libumad2sim hands on the first segment of a table alone, as
saquery sees too.)"""
import re

from conftest import generated, start_testbed, stop_testbed, wait_for

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
ROUTING = MIB + "1.12."
SOURCE, SWITCHES, SWITCHES_READ, MADS, RUNS = (ROUTING + "%d.0" % n for n in (1, 5, 6, 7, 8))
CHECK_STATUS = ROUTING + "11.1.3."
OFFENDER = ROUTING + "12.1."
PUBLISHED = ROUTING + "17.0"  # ibsnmpdRouteTablesPublications: a walk of one publication
LOAD_LIDS = ROUTING + "13.1.3."
TABLE_NOT_SMS = 30


def num(value):
    return int(re.findall(r"\d+", value)[-1])


def value(bed, oid):
    v = bed.get(oid)[oid][1]
    return None if v.startswith("No Such") else num(v)


def statuses(bed):
    return {int(k.rsplit(".", 1)[1]): num(v[1]) for k, v in bed.walk_whole(CHECK_STATUS[:-1], PUBLISHED).items()}


def offenders(bed, check):
    res = {}
    for oid, (_, v) in bed.walk_whole(OFFENDER[:-1], PUBLISHED).items():
        column, c, n = map(int, oid[len(OFFENDER):].split("."))
        if c == check:
            res.setdefault(n, {})[column] = v.strip('"')
    return [res[n] for n in sorted(res)]


def sa_lft(bed, switch_lid):
    """{LID: port} of a switch's table as the SA keeps it (saquery LFTR)"""
    out = bed.run_on_node("saquery", "LFTR", str(switch_lid), timeout=60)
    return {int(lid): int(port) for lid, port in re.findall(r"^\s+(\d+)\t(\d+)$", out, re.M)}


def next_runs(bed, n=2):
    first = value(bed, RUNS) or 0
    assert wait_for(lambda: (value(bed, RUNS) or 0) >= first + n, seconds=120), "no run"


def guid_index(guid):
    return ".".join(str(b) for b in guid.to_bytes(8, "big"))


def test_the_sas_copy_is_what_ibroute_reads_from_the_switches():
    bed = start_testbed(big={"hosts": 32, "radix": 8},
                        extra_conf=["routingSource sa", "routingCheckInterval 3",
                                    "routingSettle 1"])
    try:
        nodes, _ = generated(bed)
        switches = sum(1 for n in nodes.values() if n[0] == "switch")
        assert wait_for(lambda: (value(bed, RUNS) or 0) >= 2, seconds=120)
        assert value(bed, SOURCE) == 2  # sa
        assert value(bed, SWITCHES) == switches and value(bed, SWITCHES_READ) == switches
        # the sample: one block (LIDs 0-63: all of them here) of each switch, by
        # SMP, and the SL2VL tables of a sixteenth of the switches
        links = generated(bed)[1]
        to_switches = sum(1 for link in links for name, _ in link
                          if nodes[name][0] == "switch" and
                          all(nodes[n][0] == "switch" for n, _ in link))
        assert switches <= value(bed, MADS) <= switches + to_switches
        assert {k: v for k, v in statuses(bed).items() if k <= 5} == {k: 1 for k in range(1, 6)}
        # a leaf's CA LIDs per port, as ibroute reads them from the switch
        _, guid, _, lid = nodes["leaf-1-2"]
        cas = {n[3] for n in nodes.values() if n[0] == "ca"}
        per_port = {}
        for d, p in re.findall(r"^(0x[0-9a-f]+) (\d+) :",
                               bed.run_on_node("ibroute", str(lid), timeout=60), re.M):
            if int(d, 16) in cas:
                per_port[int(p)] = per_port.get(int(p), 0) + 1
        served = {int(k.rsplit(".", 1)[1]): num(v[1])
                  for k, v in bed.walk_whole(LOAD_LIDS + guid_index(guid), PUBLISHED).items()}
        assert sum(served.values()) == len(cas)
        assert served == {p: per_port.get(p, 0) for p in served}, (served, per_port)
    finally:
        stop_testbed(bed)


def test_a_switch_whose_table_is_not_the_sms_is_caught_by_the_sample():
    bed = start_testbed(big={"hosts": 32, "radix": 8},
                        extra_conf=["routingSource sa", "routingCheckInterval 3",
                                    "routingSettle 1"])
    try:
        assert wait_for(lambda: (value(bed, RUNS) or 0) >= 1, seconds=120)
        assert value(bed, SOURCE) == 2
        assert wait_for(lambda: statuses(bed).get(1) == 1, seconds=60)
        # leaf-1-1 forgets host-5 (its SA copy still has it)
        bed.simfabric("sim", 'Lft "leaf-1-1" 5 none')
        next_runs(bed)
        # the SM's port for LID 5 on leaf-1-1, as saquery reads the SA's copy
        sms_port = sa_lft(bed, generated(bed)[0]["leaf-1-1"][3])[5]
        assert sms_port not in (0, 255)
        o = [x for x in offenders(bed, 1) if num(x[2]) == TABLE_NOT_SMS]
        assert len(o) == 1, offenders(bed, 1)
        assert o[0][7] == ("switch leaf-1-1's table is not the SM's: 1 of LIDs 0-63 differ "
                           "(LID 5: port 255, the SM's %d)" % sms_port), o
        # and the checks ran on what the switch has: the dead end too
        assert any("leaf-1-1 has no port for LID 5" in x[7] for x in offenders(bed, 1))
        bed.simfabric("sim", 'Lft "leaf-1-1" auto')
        next_runs(bed)
        assert statuses(bed).get(1) == 1, offenders(bed, 1)
    finally:
        stop_testbed(bed)
