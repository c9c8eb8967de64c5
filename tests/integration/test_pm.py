"""64-bit counters of every port of the subnet (IBSNMPD-MIB ibsnmpdPmPortTable),
compared with perfquery, ibqueryerrors and ibnetdiscover on the same fabric.
The simulator counts its own MAD traffic, so data counters move between two
reads: they are compared against values set with PerformanceSet."""
import re
import time

import pytest

from conftest import guid_index, fields, node_guids, start_testbed, stop_testbed, wait_for

PM = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1"
QUICK = ["cacheLifetime pmCounters 2"]


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca2", extra_conf=QUICK)
    yield b
    stop_testbed(b)


def pm_table(bed):
    """{(guid, port): {column: value}}"""
    rows = {}
    for name, (typ, val) in bed.walk(PM).items():
        sub = [int(x) for x in name[len(PM) + 1:].split(".")]
        col, guid, port = sub[0], int.from_bytes(bytes(sub[1:9]), "big"), sub[9]
        rows.setdefault((guid, port), {})[col] = val
    return rows




def read_after(bed, moment):
    """The table once a sweep that started after `moment` has been served."""
    def fresh():
        rows = pm_table(bed)
        return rows and all(int(r.get(24, "0")) > moment for r in rows.values()
                            if r.get(25) == "2")
    assert wait_for(fresh)
    return pm_table(bed)


def test_every_discovered_port_has_a_row(bed):
    text = bed.run_on_node("ibnetdiscover", "-p")
    expect = set()
    for line in text.splitlines():
        # "SW     1     1 0x0000000000200000 4x SDR - CA     2    1 0x0000000000100003 ( 'sw1' - 'hca1' )"
        m = re.match(r"^(SW|CA)\s+(\d+)\s+(\d+)\s+(0x[0-9a-f]+)", line)
        if m:
            expect.add((m.group(1), int(m.group(3))))
    rows = pm_table(bed)
    assert wait_for(lambda: len(pm_table(bed)) >= len(expect))
    rows = pm_table(bed)
    descs = {r[3].strip('"') for r in rows.values()}
    assert {"sw1", "hca1", "hca2", "hca3"} <= descs
    # switch: every port 1..8; CAs: their linked ports
    sw_ports = sorted(p for (g, p), r in rows.items() if r[3] == '"sw1"')
    assert sw_ports == list(range(1, 9))


def test_counters_set_in_the_simulator_show_for_the_right_port(bed):
    guids = node_guids(bed)
    hca1_guid, hca1_lid = guids["hca1"]
    sw_guid, sw_lid = guids["sw1"]
    bed.simfabric("sim", 'PerformanceSet "hca1"[1] PortCounters.SymbolErrorCounter=7')
    bed.simfabric("sim", 'PerformanceSet "hca1"[1] PortCounters.LinkDownedCounter=3')
    bed.simfabric("sim", 'PerformanceSet "sw1"[2] PortCountersExtended.PortXmitData=123456789012')
    moment = int(time.time())
    rows = read_after(bed, moment)
    ref = fields(bed.run_on_node("perfquery", str(hca1_lid), "1"))
    assert int(ref["SymbolErrorCounter"]) == 7
    row = rows[(hca1_guid, 1)]
    assert int(row[9]) == 7 and int(row[11]) == 3
    assert int(row[11]) == int(ref["LinkDownedCounter"])
    # every error counter of that port as perfquery shows it
    for col, name in ((10, "LinkErrorRecoveryCounter"), (12, "PortRcvErrors"),
                      (13, "PortRcvRemotePhysicalErrors"), (14, "PortRcvSwitchRelayErrors"),
                      (15, "PortXmitDiscards"), (16, "PortXmitConstraintErrors"),
                      (17, "PortRcvConstraintErrors"), (18, "LocalLinkIntegrityErrors"),
                      (19, "ExcessiveBufferOverrunErrors"), (20, "VL15Dropped")):
        assert int(row[col]) == int(ref[name]), name
    # 64-bit data counter in octets, read from PortCountersExtended
    sw_row = rows[(sw_guid, 2)]
    octets = int(sw_row[5])
    assert octets % 4 == 0
    assert 123456789012 * 4 <= octets < (123456789012 + 10 ** 6) * 4
    assert sw_row[22] == "1"  # extended
    ext = fields(bed.run_on_node("perfquery", "-x", str(sw_lid), "2"))
    assert octets <= int(ext["PortXmitData"]) * 4  # perfquery read later


def test_clearing_counters_moves_the_discontinuity_time(bed):
    guids = node_guids(bed)
    guid, lid = guids["hca3"]
    bed.simfabric("sim", 'PerformanceSet "hca3"[1] PortCounters.SymbolErrorCounter=9')
    rows = read_after(bed, int(time.time()))
    before = int(rows[(guid, 1)][23])
    assert int(rows[(guid, 1)][9]) == 9
    time.sleep(1.1)
    bed.run_on_node("perfquery", "-R", str(lid), "1")  # someone else clears them
    moment = int(time.time())
    rows = read_after(bed, moment)
    assert int(rows[(guid, 1)][9]) == 0
    assert int(rows[(guid, 1)][23]) >= moment > before


def test_a_node_dropping_mads_goes_stale_and_the_others_stay_fresh(bed):
    guids = node_guids(bed)
    hca3, _ = guids["hca3"]
    hca1, _ = guids["hca1"]
    bed.simfabric("sim", 'Error "hca3"[1] 100')
    try:
        assert wait_for(lambda: pm_table(bed)[(hca3, 1)][25] == "1")
        moment = int(time.time())
        assert wait_for(lambda: int(pm_table(bed)[(hca1, 1)][24]) > moment)
        rows = pm_table(bed)
        assert rows[(hca1, 1)][25] == "2"
        assert int(rows[(hca3, 1)][24]) <= moment  # last values kept, with their time
    finally:
        bed.simfabric("sim", 'Error "hca3"[1] 0')
    assert wait_for(lambda: pm_table(bed)[(hca3, 1)][25] == "2")


IQE_NAMES = {9: "SymbolErrorCounter", 10: "LinkErrorRecoveryCounter", 11: "LinkDownedCounter",
             12: "PortRcvErrors", 13: "PortRcvRemotePhysicalErrors",
             14: "PortRcvSwitchRelayErrors", 15: "PortXmitDiscards",
             16: "PortXmitConstraintErrors", 17: "PortRcvConstraintErrors",
             18: "LocalLinkIntegrityErrors", 19: "ExcessiveBufferOverrunErrors",
             20: "VL15Dropped"}


def ibqueryerrors(bed):
    """{(node description, port): {counter: value}} and the ports checked."""
    # ibqueryerrors exits 1 when it found errors, which is what this test makes
    text = bed.run_on_node("ibqueryerrors", ok_codes=(0, 1))
    res, node = {}, None
    for line in text.splitlines():
        m = re.match(r'^Errors for .*"([^"]+)"$', line)
        if m:
            node = m.group(1)
            continue
        m = re.match(r"^\s+GUID 0x[0-9a-f]+ port (\d+): \[(.*)\]$", line)
        if m and node:
            res[(node, int(m.group(1)))] = {
                k: int(v) for k, v in re.findall(r"(\w+) == (\d+)", m.group(2))}
    checked = int(re.search(r"(\d+) ports checked", text).group(1))
    return res, checked


def test_fat_tree_every_port_against_ibqueryerrors():
    """612 nodes, 1,872 ports: every port has a row, and the error counters
    set on ports all over the fabric read as ibqueryerrors reads them."""
    # no node contexts: they are test_contexts' subject, and under ASan their
    # 12,240 AgentX registrations at the first discovery held up this walk
    bed = start_testbed(topology="fattree-612.net", node="h1-1",
                        extra_conf=list(QUICK) + ["nodeContextTypes none"])
    try:
        settings = [("leaf3", 7, "SymbolErrorCounter", 111), ("spine2", 24, "PortRcvErrors", 222),
                    ("h2-5", 1, "LinkDownedCounter", 200), ("leaf24", 36, "PortXmitDiscards", 333),
                    ("h24-24", 1, "SymbolErrorCounter", 4444), ("spine12", 1,
                                                                "LinkErrorRecoveryCounter", 250)]
        for node, port, counter, value in settings:
            bed.simfabric("sim", 'PerformanceSet "%s"[%d] PortCounters.%s=%d'
                          % (node, port, counter, value))
        rows = read_after(bed, int(time.time()))
        theirs, checked = ibqueryerrors(bed)
        assert len(rows) == checked == 1872
        ours = {}
        for (guid, port), r in rows.items():
            ours[(r[3].strip('"'), port)] = {IQE_NAMES[c]: int(r[c]) for c in IQE_NAMES}
        for node, port, counter, value in settings:
            assert theirs[(node, port)][counter] == value
        for key, counters in theirs.items():
            for name, value in counters.items():
                if name in ours[key]:
                    assert ours[key][name] == value, (key, name)
    finally:
        stop_testbed(bed)


# ---- IB-PM-MIB (the draft's tables) ------------------------------------------

DRAFT_COUNTERS = ".1.3.6.1.3.117.1.4.1"
DRAFT_CPI = ".1.3.6.1.3.117.1.1.1"


def snmpset(bed, *args):
    return bed.snmp("snmpset", *args, community=bed.env["SNMP_RW_COMMUNITY"])


def test_draft_counters_follow_port_select_and_match_perfquery(bed):
    guids = node_guids(bed)
    sw, sw_lid = guids["sw1"]
    bed.simfabric("sim", 'PerformanceSet "sw1"[2] PortCounters.SymbolErrorCounter=21')
    bed.simfabric("sim", 'PerformanceSet "sw1"[3] PortCounters.SymbolErrorCounter=31')
    read_after(bed, int(time.time()))
    idx = guid_index(sw)
    for port, value in ((2, 21), (3, 31)):
        out = snmpset(bed, "%s.2.%s" % (DRAFT_COUNTERS, idx), "i", str(port))
        assert out.returncode == 0, out.stderr
        got = bed.get("%s.3.%s" % (DRAFT_COUNTERS, idx), "%s.5.%s" % (DRAFT_COUNTERS, idx))
        ref = fields(bed.run_on_node("perfquery", str(sw_lid), str(port)))
        assert int(got["%s.3.%s" % (DRAFT_COUNTERS, idx)][1]) == int(ref["SymbolErrorCounter"]) \
            == value
        assert int(got["%s.5.%s" % (DRAFT_COUNTERS, idx)][1]) == int(ref["LinkDownedCounter"])
    cpi = bed.get("%s.1.%s" % (DRAFT_CPI, idx), "%s.2.%s" % (DRAFT_CPI, idx), hex_strings=True)
    assert cpi["%s.1.%s" % (DRAFT_CPI, idx)][1].replace(" ", "") == "%016X" % sw


def test_set_to_zero_clears_the_counter_on_the_node(bed):
    guids = node_guids(bed)
    guid, lid = guids["hca1"]
    bed.simfabric("sim", 'PerformanceSet "hca1"[1] PortCounters.PortRcvErrors=77')
    rows = read_after(bed, int(time.time()))
    before = int(rows[(guid, 1)][23])
    assert int(rows[(guid, 1)][12]) == 77
    time.sleep(1.1)
    out = snmpset(bed, "%s.6.%s" % (DRAFT_COUNTERS, guid_index(guid)), "i", "0")
    assert out.returncode == 0, out.stderr
    assert int(fields(bed.run_on_node("perfquery", str(lid), "1"))["PortRcvErrors"]) == 0
    moment = int(time.time())
    rows = read_after(bed, moment)
    assert int(rows[(guid, 1)][12]) == 0
    assert int(rows[(guid, 1)][23]) > before


def test_bad_sets_are_refused_and_send_nothing():
    """A bed that sends no MAD of its own during the test (its groups never
    refresh, no SM watch of the trap subscriber, which asks SMInfo every
    2 s): ibsnmpdMadsSent must not move across refused SETs."""
    bed = start_testbed(node="hca2", extra_conf=["trapSubscribe no"] + [
        "cacheLifetime %s 3600" % g for g in (
            "pmCounters", "portInfo", "smInfo", "nodeInfo", "switchInfo", "pKeyTable",
            "linearForwarding", "multicastForwarding", "fabricPorts")])
    try:
        guids = node_guids(bed)
        guid, lid = guids["hca3"]
        bed.simfabric("sim", 'PerformanceSet "hca3"[1] PortCounters.SymbolErrorCounter=5')
        bed.simfabric("sim", 'PerformanceSet "hca3"[1] PortCounters.PortXmitDiscards=6')
        idx = guid_index(guid)
        assert wait_for(lambda: bed.walk(DRAFT_COUNTERS + ".3"))
        sent = STATS_SENT

        def settled():
            # what follows the first discovery (the link sweep, a context's
            # first reads) is over when nothing is in flight and a second
            # passes without a MAD
            first = bed.get(sent, IN_FLIGHT)
            time.sleep(1)
            return first[IN_FLIGHT][1] == "0" and bed.get(sent)[sent][1] == first[sent][1]
        assert wait_for(settled, seconds=60)
        before = bed.get(sent)[sent][1]
        cases = [
            (("%s.3.%s" % (DRAFT_COUNTERS, idx), "i", "5"), "wrongValue"),
            (("%s.3.%s" % (DRAFT_COUNTERS, idx), "s", "0"), "wrongType"),
            (("%s.2.%s" % (DRAFT_COUNTERS, idx), "i", "9"), "inconsistentValue"),
            (("%s.2.%s" % (DRAFT_COUNTERS, idx), "i", "300"), "wrongValue"),
            (("%s.1.%s" % (DRAFT_COUNTERS, idx), "i", "0"), "notWritable"),
            (("%s.3.0.0.0.0.0.0.0.1" % DRAFT_COUNTERS, "i", "0"), "noCreation"),
            # all or nothing: a good clear with a bad one clears nothing
            (("%s.9.%s" % (DRAFT_COUNTERS, idx), "i", "0",
              "%s.3.%s" % (DRAFT_COUNTERS, idx), "i", "1"), "wrongValue"),
        ]
        for args, error in cases:
            out = snmpset(bed, *args)
            assert out.returncode != 0 and error in out.stderr, (args, out.stderr)
        assert bed.get(sent)[sent][1] == before
        ref = fields(bed.run_on_node("perfquery", str(lid), "1"))
        assert int(ref["SymbolErrorCounter"]) == 5 and int(ref["PortXmitDiscards"]) == 6
    finally:
        stop_testbed(bed)


STATS_SENT = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.1.0"
IN_FLIGHT = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.5.0"


def test_a_new_master_sm_triggers_a_rediscovery():
    """opensm stopped and started on another node: the local port's
    MasterSMLID changes (as smpquery shows), ibsnmpd rediscovers the subnet
    and keeps serving every port."""
    bed = start_testbed(node="hca1", extra_conf=["cacheLifetime portInfo 2"])
    try:
        guids = node_guids(bed)
        assert wait_for(lambda: bed.log("ibsnmpd.log").count("subnet discovered") == 1)
        bed.simfabric("stop", "opensm")
        bed.simfabric("start", "opensm", "--node", "hca2")
        new_lid = guids["hca2"][1]
        assert wait_for(lambda: int(fields(bed.run_on_node("smpquery", "-D", "portinfo", "0",
                                                           "1"))["SMLid"]) == new_lid)
        assert wait_for(lambda: "master SM moved from LID %d to LID %d: rediscovering the subnet"
                        % (guids["sw1"][1], new_lid) in bed.log("ibsnmpd.log"))
        assert wait_for(lambda: bed.log("ibsnmpd.log").count("subnet discovered") == 2)
        assert wait_for(lambda: len(pm_table(bed)) == 11)  # 8 switch ports, 3 CA ports
    finally:
        stop_testbed(bed)


def test_integrity_and_overrun_counters_rising_give_traps_129_and_130(bed):
    """No opensm log configured: a LocalLinkIntegrityErrors or
    ExcessiveBufferOverrunErrors increase seen by a sweep is that threshold
    event, sent as ibSmaLinkIntegrityThresReached / ibSmaExcessBuffOverrunThres
    with the port's LID (as ibnetdiscover shows) and port number."""
    guid, lid = node_guids(bed)["hca3"]
    read_after(bed, int(time.time()))  # a baseline for the counters
    before = bed.log("traps.log").count(".1.3.6.1.6.3.1.1.4.1.0")
    bed.simfabric("sim", 'PerformanceSet "hca3"[1] PortCounters.LocalLinkIntegrityErrors=3')
    bed.simfabric("sim", 'PerformanceSet "hca3"[1] PortCounters.ExcessiveBufferOverrunErrors=2')

    def notified(number):
        lines = [l for l in bed.log("traps.log").splitlines()
                 if ".1.3.6.1.6.3.1.1.4.1.0" in l][before:]
        return [l for l in lines if "OID: .1.3.6.1.3.117.3.2.%d\t" % number in l + "\t"]
    for number in (2, 3):
        assert wait_for(lambda: notified(number))
        line = notified(number)[0]
        assert ".1.3.6.1.3.117.3.1.1.14.0 = INTEGER: %d" % lid in line
        assert ".1.3.6.1.3.117.3.1.1.15.0 = INTEGER: 1" in line


# ---- ibsnmpdPmErrorDetailTable ---------------------------------------------

DETAIL = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.2.1"
RCVERR = ["PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors",
          "PortDLIDMappingErrors", "PortVLMappingErrors", "PortLoopingErrors"]
XMTDISC = ["PortInactiveDiscards", "PortNeighborMTUDiscards", "PortSwLifetimeLimitDiscards",
           "PortSwHOQLifetimeLimitDiscards"]
# ibsim's console names (PortMalformedPacketErrors where perfquery says ...Pkt...)
SIM_NAME = {"PortMalformedPktErrors": "PortMalformedPacketErrors"}


def test_error_details_match_perfquery(bed):
    """The details are read where PortRcvErrors / PortXmitDiscards are not 0:
    set on sw1 port 3 with PerformanceSet, they read as perfquery --rcverr and
    --xmtdisc read them; a port without errors shows zeros."""
    sw, sw_lid = node_guids(bed)["sw1"]
    sets = [("PortCounters", "PortRcvErrors", 40), ("PortCounters", "PortXmitDiscards", 30)]
    sets += [("PortRcvErrorDetails", SIM_NAME.get(n, n), 11 + i) for i, n in enumerate(RCVERR)]
    sets += [("PortXmitDiscardDetails", n, 21 + i) for i, n in enumerate(XMTDISC)]
    sets[-1] = ("PortXmitDiscardDetails", XMTDISC[-1], 65535)
    for attr, name, value in sets:
        bed.simfabric("sim", 'PerformanceSet "sw1"[3] %s.%s=%d' % (attr, name, value))
    theirs = fields(bed.run_on_node("perfquery", "--rcverr", str(sw_lid), "3"))
    theirs.update(fields(bed.run_on_node("perfquery", "--xmtdisc", str(sw_lid), "3")))
    want = [int(theirs[n]) for n in RCVERR + XMTDISC]
    assert want[0] == 11 and want[-1] == 65535
    idx = ".".join(str(b) for b in sw.to_bytes(8, "big")) + ".3"

    def ours():
        got = bed.get(*("%s.%d.%s" % (DETAIL, c, idx) for c in range(1, 12)))
        return [int(v[1]) if v[1].isdigit() else None for v in got.values()]
    assert wait_for(lambda: ours()[:10] == want, seconds=60), (ours(), want)
    assert ours()[10] == 2  # not stale
    clean = bed.get(*("%s.%d.%s" % (DETAIL, c, idx[:-1] + "5") for c in range(1, 11)))
    assert [v[1] for v in clean.values()] == ["0"] * 10


def max_in_flight_per_lid(log):
    """From the MAD debug lines: the most requests in flight at once to each
    LID (sent, until answered or timed out)."""
    lid_of, now, most = {}, {}, {}
    for line in log.splitlines():
        m = re.search(r"sent class \S+ attr \S+ mod \S+ tid (0x[0-9a-f]+) to lid (\d+)", line)
        if m:
            lid_of[m.group(1)] = lid = int(m.group(2))
            now[lid] = now.get(lid, 0) + 1
            most[lid] = max(most.get(lid, 0), now[lid])
            continue
        m = re.search(r"(?:answer to tid|tid) (0x[0-9a-f]+)(?: timed out|$)", line)
        if m and m.group(1) in lid_of:
            now[lid_of.pop(m.group(1))] -= 1
    return most


def test_a_destination_gets_no_more_than_its_share_of_the_window():
    """madMaxPerDestination 2: however many of a switch's ports a sweep reads,
    at most two MADs are in flight to its LID, and two are (the window is
    used); the sweep reads every port all the same."""
    b = start_testbed(node="hca2", debug="ibsnmpd:mad",
                      extra_conf=QUICK + ["madMaxPerDestination 2", "madMaxOutstanding 64",
                                          "nodeContextTypes none"])
    try:
        sw_lid = node_guids(b)["sw1"][1]
        # sw1's ports 1..8 and the three CAs' ports, all fresh
        assert wait_for(lambda: len(pm_table(b)) == 11 and
                        all(r[25] == "2" for r in pm_table(b).values()), seconds=60)
        most = max_in_flight_per_lid(b.log("ibsnmpd.log"))
        assert most[sw_lid] == 2, most
        assert all(n <= 2 for lid, n in most.items() if lid), most
    finally:
        stop_testbed(b)
