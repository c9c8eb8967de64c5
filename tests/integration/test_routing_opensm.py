"""The checks on ibsim with real opensm processes, against infiniband-diags.
The sm check, against sminfo and the SA's SMInfoRecords (saquery SMIR): the
bed's opensm alone (master, said to be alone), a second opensm started on an
adapter (the same priority, a lower GUID: it takes over; both listed,
ibsnmpdMasterSmChanged once), then stopped (the first takes over again: told
again). The routing checks on a two-level fat tree, against ibroute:
opensm's minhop (every check passes), its ftree (balanced, no route down
then up; no route between the spines, as ftree leaves the roots' LIDs out
of each other's tables), an entry a test tool overwrote by SubnSet (a
dead end named, until written back) and two leaf uplinks' LIDs moved to the
other (unbalanced, as ibroute counts them); minhop on a tree ftree refuses,
whose routes go down then up (ibtracert). Apart from test_routing.py so that
ctest runs the two side by side."""
import os
import re
import signal
import subprocess


from conftest import TOP, TRAP_OID, notifications, start_testbed, stop_testbed, wait_for

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
ROUTING = MIB + "1.12."
CHECK_STATUS = ROUTING + "11.1.3."
OFFENDER = ROUTING + "12.1."
SMS = ROUTING + "15.1."
MASTER_CHANGED = MIB + "0.21"
RUNS = ROUTING + "8.0"
PUBLISHED = ROUTING + "17.0"  # ibsnmpdRouteTablesPublications: a walk of one publication
LOAD_LIDS = ROUTING + "13.1.3."
SIM_LFT_SET = os.environ.get("SIM_LFT_SET") or os.path.join(TOP, "build", "tests", "sim-lft-set")
SM, NO_STANDBY = 8, 23
# a standby that notices a silent master within 2 s (opensm's defaults: 10 s, 4 times)
FAST_POLLING = "sminfo_polling_timeout 1000\npolling_retry_number 2\n"


def num(value):
    return int(re.findall(r"\d+", value)[-1])


def sm_table(bed):
    """{name: (lid, state)} of ibsnmpdRouteSmTable (state: SMA-MIB's numbering)"""
    rows = {}
    for oid, (_, value) in bed.walk_whole(SMS[:-1], PUBLISHED).items():
        column, index = oid[len(SMS):].split(".", 1)
        rows.setdefault(index, {})[int(column)] = value.strip('"')
    return {r[2]: (int(r[3]), num(r[4])) for r in rows.values() if 2 in r and 4 in r}


def sm_status(bed):
    value = bed.get(CHECK_STATUS + str(SM))[CHECK_STATUS + str(SM)][1]
    return None if value.startswith("No Such") else num(value)


def sm_kinds(bed):
    kinds = []
    for oid, (_, value) in bed.walk_whole(OFFENDER[:-1], PUBLISHED).items():
        column, check, _ = map(int, oid[len(OFFENDER):].split("."))
        if column == 2 and check == SM:
            kinds.append(num(value))
    return sorted(kinds)


def smir(bed):
    """{lid: state} of the SA's SMInfoRecords (IBA SMState: 2 standby, 3 master)"""
    out = bed.run_on_node("saquery", "SMIR", timeout=60)
    return {int(lid): int(state) for lid, state in
            re.findall(r"LID\.+(\d+).*?SMState\.+(\d+)", out, re.S)}


def master_lid(bed):
    """the master's LID as sminfo finds it; None while no SM answers (an
    opensm starting)"""
    out = bed.run_on_node("sminfo", ok_codes=tuple(range(256)), timeout=60)
    m = re.search(r"sm lid (\d+) .* state 3 SMINFO_MASTER", out)
    return int(m.group(1)) if m else None


def changes(bed, since):
    return [n for n in notifications(bed)[since:] if n.get(TRAP_OID) == MASTER_CHANGED]


def hca3_lid(bed):
    """hca3's LID as ibnetdiscover reads it"""
    return lids_of(bed)["hca3"]


def master_is(bed, lid):
    """sminfo finds the master at lid, and the SA's SMInfoRecords agree
    (that one master)"""
    return master_lid(bed) == lid and 3 in smir(bed).values() and \
        [k for k, v in smir(bed).items() if v == 3] == [lid]


TAKEOVER_BEDS = 3


def test_a_second_opensm_takes_over_and_gives_back(tmp_path):
    """Whether opensm took over is sminfo's and the SA's word (saquery
    SMIR), never ibsnmpd's: once they show the new master, ibsnmpd must
    have told it. Under load, ibsim has dropped the SMInfo SMPs of the two
    opensm processes ("no one to handle pkt: class 0x1, attr 0x20") and the
    second one waited for good in DISCOVERING (libumad2sim gives a send no
    timeout): sminfo then shows no takeover, nothing for ibsnmpd to tell,
    and the whole scenario runs again on a new bed, up to TAKEOVER_BEDS
    beds one after the other; a run where none took over fails."""
    why = []
    for attempt in range(1, TAKEOVER_BEDS + 1):
        done = tmp_path / ("bed-%d" % attempt)
        done.mkdir()
        outcome = takeover_on_a_bed(done)
        if outcome is None:
            return
        why.append(outcome)
        print("bed %d: no takeover, by sminfo and saquery SMIR: %s" % (attempt, outcome))
    assert False, "opensm took over on none of %d beds: %s" % (TAKEOVER_BEDS, why)


def takeover_on_a_bed(tmp_path):
    """The takeover and the give-back on a bed of its own: None when they
    happened (and ibsnmpd told each), else why opensm did not take over
    (asserts fail the test where ibsnmpd is wrong)."""
    bed = start_testbed(topology="switch-3ca.net",
                        extra_conf=["cacheLifetime fabricPorts 2", "notificationLimit 0 60"])
    try:
        # the bed's opensm, polling fast when it is standby
        bed.stop("opensm")
        with open(bed.path("opensm.conf"), "a") as f:
            f.write(FAST_POLLING)
        bed.start_service("opensm")
        assert wait_for(lambda: master_lid(bed) == 1, seconds=60)  # sw1's, as the bed has it
        assert wait_for(lambda: sm_table(bed).get("sw1", (0, 0))[1] == 5, seconds=60), \
            sm_table(bed)
        assert wait_for(lambda: sm_status(bed) == 1 and sm_kinds(bed) == [NO_STANDBY],
                        seconds=30), sm_kinds(bed)
        new_lid = hca3_lid(bed)
        # a second opensm on hca3, whose port GUID is lower: it wins
        cache = tmp_path / "osm-cache2"
        cache.mkdir()
        conf = tmp_path / "opensm2.conf"
        conf.write_text("log_file %s\ndump_files_dir %s\n%s" % (
            tmp_path / "opensm2.log", cache, FAST_POLLING))
        since, read = len(notifications(bed)), runs(bed)
        bed.spawn("opensm-2", "env", "OSM_CACHE_DIR=%s" % cache, "OSM_TMP_DIR=%s" % tmp_path,
                  "opensm", "-F", str(conf), node="hca3")
        if not wait_for(lambda: master_is(bed, new_lid), seconds=120):
            # an opensm stuck DISCOVERING (its log: clear_madw ERR 5401 at
            # exit): an operator would start it again, once
            bed.stop("opensm-2")
            bed.spawn("opensm-2", "env", "OSM_CACHE_DIR=%s" % cache,
                      "OSM_TMP_DIR=%s" % tmp_path, "opensm", "-F", str(conf), node="hca3")
            if not wait_for(lambda: master_is(bed, new_lid), seconds=120):
                return "sminfo: master LID %s, SMIR %s; ibsim dropped %d SMInfo SMPs" % (
                    master_lid(bed), smir(bed), bed.log("ibsim.out").count(
                        "no one to handle pkt: class 0x1, attr 0x20"))
        # sminfo and the SA say hca3 is master: ibsnmpd must tell it (its SM
        # rounds are 10 s apart)
        assert wait_for(lambda: changes(bed, since), seconds=60), \
            ("a new master ibsnmpd did not tell", sm_table(bed), smir(bed))
        assert "hca3 port 1" in changes(bed, since)[0].values(), changes(bed, since)
        # the new master may route anew: every table read again (routingSettle
        # 10 s), where the period is an hour
        assert "routing checks: the master SM is" in bed.log("ibsnmpd.log")
        assert wait_for(lambda: runs(bed) > read, seconds=60), runs(bed)
        assert wait_for(lambda: sm_table(bed).get("hca3 port 1", (0, 0))[1] == 5 and
                        sm_table(bed).get("sw1", (0, 0))[1] == 4, seconds=60), sm_table(bed)
        table = sm_table(bed)
        assert table["hca3 port 1"][0] == new_lid
        assert smir(bed) == {table["hca3 port 1"][0]: 3, table["sw1"][0]: 2}
        assert wait_for(lambda: sm_status(bed) == 1 and sm_kinds(bed) == [], seconds=30), \
            sm_kinds(bed)
        assert len(changes(bed, since)) == 1
        # it stops: the first takes over again (sminfo), told again
        since = len(notifications(bed))
        bed.stop("opensm-2")
        assert wait_for(lambda: master_lid(bed) == table["sw1"][0], seconds=60), master_lid(bed)
        assert wait_for(lambda: changes(bed, since), seconds=60), sm_table(bed)
        assert "sw1" in changes(bed, since)[0].values(), changes(bed, since)
        assert wait_for(lambda: sm_table(bed).get("sw1", (0, 0))[1] == 5, seconds=30)
        assert wait_for(lambda: sm_status(bed) == 1, seconds=30), sm_kinds(bed)
        return None
    finally:
        stop_testbed(bed)


def statuses(bed):
    return {int(k.rsplit(".", 1)[1]): num(v[1]) for k, v in bed.walk_whole(CHECK_STATUS[:-1], PUBLISHED).items()}


def words_of(bed, check):
    """what the offenders of a check say (ibsnmpdRouteOffenderText)"""
    words = []
    for oid, (_, value) in bed.walk_whole(OFFENDER[:-1], PUBLISHED).items():
        column, of, _ = map(int, oid[len(OFFENDER):].split("."))
        if column == 7 and of == check:
            words.append(value.strip('"'))
    return words


def reach_words(bed):
    return words_of(bed, 1)


def runs(bed):
    value = bed.get(RUNS)[RUNS][1]
    return 0 if value.startswith("No Such") else num(value)


def next_runs(bed, n=2):
    first = runs(bed)
    assert wait_for(lambda: runs(bed) >= first + n, seconds=120), "no routing run"


def lids_of(bed):
    """{name: LID} as ibnetdiscover reads the subnet"""
    out = bed.run_on_node("ibnetdiscover", timeout=60)
    lids = {m.group(1): int(m.group(2)) for m in
            re.finditer(r'^Switch\s.*# "([^"]+)" base port 0 lid (\d+)', out, re.M)}
    lids.update({m.group(1): int(m.group(2)) for m in re.finditer(
        r'^Ca\s.*# "([^"]+)"\n\[1\]\S*\s+"\S+"\[\d+\]\S*\s+# lid (\d+)', out, re.M)})
    return lids


def ibroute(bed, lid):
    """{destination LID: out port} of a switch, as ibroute reads its table"""
    out = bed.run_on_node("ibroute", str(lid), timeout=60)
    return {int(d, 16): int(p) for d, p in re.findall(r"^(0x[0-9a-f]+) (\d+) :", out, re.M)}


def test_opensm_routing_engines_and_an_entry_overwritten(tmp_path):
    topo = tmp_path / "fattree-4x2.net"
    topo.write_text(subprocess.run(
        ["python3", os.path.join(TOP, "tests", "topologies", "gen-fattree.py"), "4", "2", "4"],
        capture_output=True, text=True, check=True).stdout)
    bed = start_testbed(topology=str(topo), node="h1-1",
                        extra_conf=["routingCheckInterval 3", "routingSettle 1"])
    try:
        # opensm's default engine, minhop: every routing check passes
        assert wait_for(lambda: runs(bed) >= 1, seconds=120)
        assert wait_for(lambda: {k: v for k, v in statuses(bed).items() if k <= 5} ==
                        {k: 1 for k in range(1, 6)}, seconds=60), reach_words(bed)
        # ftree
        bed.stop("opensm")
        with open(bed.path("opensm.conf"), "a") as f:
            f.write("routing_engine ftree\n")
        bed.start_service("opensm")
        assert wait_for(lambda: "ftree tables configured" in bed.log("opensm.log"), seconds=60)
        next_runs(bed)
        # (a read while opensm still sends the new tables, slow on a loaded
        # machine, sees some old and some new: the next reads see them all)
        assert wait_for(lambda: [statuses(bed).get(k) for k in (2, 3, 4, 5)] == [1, 1, 1, 1]
                        and len(reach_words(bed)) == 2, seconds=60), \
            (statuses(bed), reach_words(bed))
        lids = lids_of(bed)
        # the spines have no route to each other: ibroute shows it, the check names it
        for a, b in (("spine1", "spine2"), ("spine2", "spine1")):
            assert lids[b] not in ibroute(bed, lids[a])
            assert "switch %s has no port for LID %d (switch %s): 1 switch cannot reach it" % (
                a, lids[b], b) in reach_words(bed), reach_words(bed)
        assert len(reach_words(bed)) == 2
        # balanced, as ibroute reads each leaf's table: its uplinks' CA LIDs
        # within one of each other
        cas = {v for k, v in lids.items() if k.startswith("h")}
        for leaf in ("leaf1", "leaf2", "leaf3", "leaf4"):
            per_port = {}
            for d, p in ibroute(bed, lids[leaf]).items():
                if d in cas and p > 4:  # ports 5-6: the uplinks
                    per_port[p] = per_port.get(p, 0) + 1
            assert len(per_port) == 2 and max(per_port.values()) - min(per_port.values()) <= 1
        # an entry overwritten by SubnSet (from h2-1: leaf2 answers it by its
        # own table): leaf2 forgets h3-1
        out = bed.run_on_node(SIM_LFT_SET, str(lids["leaf2"]), str(lids["h3-1"]), "255",
                              node="h2-1", timeout=60)
        old = int(re.search(r"port (\d+) -> 255", out).group(1))
        try:
            assert lids["h3-1"] not in ibroute(bed, lids["leaf2"])
            words = "switch leaf2 has no port for LID %d (h3-1 port 1)" % lids["h3-1"]
            assert wait_for(lambda: any(words in w for w in reach_words(bed)), seconds=60), \
                reach_words(bed)
        finally:
            bed.run_on_node(SIM_LFT_SET, str(lids["leaf2"]), str(lids["h3-1"]), str(old),
                            node="h2-1", timeout=60)
        assert ibroute(bed, lids["leaf2"])[lids["h3-1"]] == old
        assert wait_for(lambda: len(reach_words(bed)) == 2, seconds=60), reach_words(bed)
        # unbalanced: two of leaf2's CA LIDs moved from one uplink to the
        # other by SubnSet, as ibroute then counts them per port
        uplinks = {5: [], 6: []}
        for d, p in sorted(ibroute(bed, lids["leaf2"]).items()):
            if d in cas and p in uplinks:
                uplinks[p].append(d)
        more, fewer = sorted(uplinks, key=lambda p: -len(uplinks[p]))
        moved = uplinks[more][:2]
        for d in moved:
            bed.run_on_node(SIM_LFT_SET, str(lids["leaf2"]), str(d), str(fewer), node="h2-1",
                            timeout=60)
        try:
            counts = {5: 0, 6: 0}
            for d, p in ibroute(bed, lids["leaf2"]).items():
                if d in cas and p in counts:
                    counts[p] += 1
            assert counts[fewer] - counts[more] >= 2, counts
            words = ("switch leaf2's 2 up-going ports are unbalanced: port %d carries %d CA "
                     "LIDs, port %d %d" % (fewer, counts[fewer], more, counts[more]))
            assert wait_for(lambda: any(words in w for w in words_of(bed, 5)), seconds=60), \
                (words, words_of(bed, 5))
            assert statuses(bed)[5] == 2
        finally:
            for d in moved:
                bed.run_on_node(SIM_LFT_SET, str(lids["leaf2"]), str(d), str(more), node="h2-1",
                                timeout=60)
        assert wait_for(lambda: statuses(bed)[5] == 1, seconds=60), words_of(bed, 5)
    finally:
        stop_testbed(bed)


def ibtracert(bed, src, dst):
    """the nodes a route passes, as ibtracert follows the tables"""
    out = bed.run_on_node("ibtracert", str(src), str(dst), timeout=60)
    names = []
    for name in re.findall(r'"([^"]+)"', out):  # the destination: named twice
        if not names or names[-1] != name:
            names.append(name)
    return names


def test_minhop_routes_down_then_up_through_a_leaf(tmp_path):
    """A tree ftree refuses (leaf-bridge.net: the two spines joined only
    through leaf3): opensm's minhop routes leaf1's hosts to leaf2's down to
    leaf3 and up again, as ibtracert shows; the up/down check names each
    destination and where its routes turn up, every other check passes."""
    bed = start_testbed(topology="leaf-bridge.net", node="h1-1",
                        extra_conf=["routingCheckInterval 3", "routingSettle 1"])
    try:
        assert wait_for(lambda: runs(bed) >= 1, seconds=120)
        lids = lids_of(bed)
        path = ibtracert(bed, lids["h1-1"], lids["h2-1"])
        assert path == ["h1-1", "leaf1", "spine1", "leaf3", "spine2", "leaf2", "h2-1"], path
        assert wait_for(lambda: {k: v for k, v in statuses(bed).items() if k <= 5} ==
                        {1: 1, 2: 1, 3: 2, 4: 1, 5: 1}, seconds=60), \
            (statuses(bed), words_of(bed, 3))
        expected = sorted(
            "2 CA pairs reach LID %d (%s port 1) by a route that goes down then up, e.g. from "
            "switch %s, turning up at switch leaf3" % (lids[dst], dst, src)
            for dst, src in (("h2-1", "leaf1"), ("h2-2", "leaf1"), ("h1-1", "leaf2"),
                             ("h1-2", "leaf2")))
        assert sorted(words_of(bed, 3)) == expected, words_of(bed, 3)
    finally:
        stop_testbed(bed)


def switch_links(bed):
    """{(switch, port): (far node, far port)} as ibnetdiscover reads the subnet"""
    links, switch = {}, None
    for line in bed.run_on_node("ibnetdiscover", timeout=60).splitlines():
        m = re.match(r'^Switch\s.*# "([^"]+)"', line)
        if m:
            switch = m.group(1)
            continue
        m = re.match(r'^\[(\d+)\]\s+"[^"]+"\[(\d+)\].*# "([^"]+)"', line)
        if m and switch:
            links[(switch, int(m.group(1)))] = (m.group(3), int(m.group(2)))
        elif not line.strip():
            switch = None
    return links


def sl0_vl(bed, lid, in_port, out_port):
    """SL 0's VL leaving out_port of the switch at lid, from in_port, as
    smpquery reads its SL2VL table"""
    # smpquery sl2vl LID PORT: the table of every input port to PORT
    out = bed.run_on_node("smpquery", "sl2vl", str(lid), str(out_port), timeout=60)
    m = re.search(r"in\s+%d, out\s+%d:\s*\|\s*(\d+)\|" % (in_port, out_port), out)
    assert m, out
    return int(m.group(1))


def credit_loops(bed):
    """[(VL or None for several, [(switch, port), ...])] of the credit-loop
    offenders' words; and whether they are said to be possible only"""
    loops = []
    for words in words_of(bed, 4):
        m = re.match(r"(possible )?credit loop of (\d+) links on (?:VL (\d+)|several VLs): (.*)$",
                     words)
        assert m, words
        hops = [(s, int(p)) for s, p in re.findall(r"(\w+)/(\d+)", m.group(4))]
        assert len(hops) == int(m.group(2)), words
        loops.append((int(m.group(3)) if m.group(3) else None, hops, bool(m.group(1))))
    return sorted(loops)


def test_a_ring_has_credit_loops_on_the_vls_sl2vl_maps_sl_0_to(tmp_path):
    """Five switches in a ring (ring5.net), routed by opensm's minhop: every
    host two switches away the short way round (ibtracert), so that the
    channel dependencies close a cycle each way. The credit-loop check
    names both, each link's far end as ibnetdiscover has it, on the VL that
    SL 0 leaves each switch on as smpquery reads SL2VL: VL 0, then VL 1
    once opensm's QoS maps SL 0 there on the switches' external ports. With
    two SLs in use (routingPathSls 0-1) the loops are possible, not certain:
    the check is partial."""
    bed = start_testbed(topology="ring5.net", node="h1",
                        extra_conf=["routingCheckInterval 3", "routingSettle 1"])
    try:
        assert wait_for(lambda: runs(bed) >= 1, seconds=120)
        lids, links = lids_of(bed), switch_links(bed)
        for i in range(1, 6):
            for step in (2, -2):
                j = (i - 1 + step) % 5 + 1
                mid = (i - 1 + step // 2) % 5 + 1
                path = ibtracert(bed, lids["h%d" % i], lids["h%d" % j])
                assert path == ["h%d" % i, "s%d" % i, "s%d" % mid, "s%d" % j, "h%d" % j], path

        def checked(vl):
            loops = credit_loops(bed)
            assert len(loops) == 2 and all(v == vl and not possible for v, _, possible in loops)
            for _, hops, _ in loops:
                assert len(hops) == 5 and {s for s, _ in hops} == {"s%d" % i for i in range(1, 6)}
                for k, (s, p) in enumerate(hops):
                    far, far_port = links[(s, p)]
                    assert far == hops[(k + 1) % 5][0], (hops, links[(s, p)])
                    # SL 0's VL out of the next switch, from the port the
                    # link comes in on
                    nxt, nxt_port = hops[(k + 1) % 5]
                    assert sl0_vl(bed, lids[nxt], far_port, nxt_port) == vl
            return True

        assert wait_for(lambda: statuses(bed).get(4) == 2, seconds=60), statuses(bed)
        assert checked(0)
        # opensm's QoS: SL 0 on VL 1 on the switches' external ports
        bed.stop("opensm")
        with open(bed.path("opensm.conf"), "a") as f:
            f.write("qos TRUE\nqos_max_vls 8\nqos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7\n"
                    "qos_swe_sl2vl 1,0,2,3,4,5,6,7,0,1,2,3,4,5,6,7\n"
                    "qos_vlarb_high 0:4,1:4\nqos_vlarb_low 0:64,1:64\n")
        bed.start_service("opensm")
        assert wait_for(lambda: credit_loops(bed) and credit_loops(bed)[0][0] == 1, seconds=120), \
            credit_loops(bed)
        assert checked(1)
        # two SLs: SL 0 on VL 1, SL 1 on VL 0 (the same loops on each)
        with open(bed.path("ibsnmpd.conf"), "a") as f:
            f.write("routingPathSls 0-1\n")
        os.kill(bed.pid_of("ibsnmpd"), signal.SIGHUP)
        assert wait_for(lambda: statuses(bed).get(4) == 4, seconds=60), statuses(bed)
        loops = credit_loops(bed)
        assert [v for v, _, _ in loops] == [0, 0, 1, 1] and all(p for _, _, p in loops), loops
    finally:
        stop_testbed(bed)


def test_dfsssp_gives_pairs_sls_so_credit_loops_are_only_possible(tmp_path):
    """The same ring routed by opensm's dfsssp, which breaks its credit
    loops by giving paths different SLs (saquery PR shows several): ibsnmpd
    learns them from a sample of the SA's PathRecords, so that the loops
    the ring's links would close on one SL are said to be possible, not
    certain, and the check is partial, not failed."""
    bed = start_testbed(topology="ring5.net", node="h1",
                        extra_conf=["routingCheckInterval 3", "routingSettle 1"])
    try:
        bed.stop("opensm")
        with open(bed.path("opensm.conf"), "a") as f:
            f.write("routing_engine dfsssp\nqos TRUE\nqos_max_vls 8\n")
        bed.start_service("opensm")
        assert wait_for(lambda: "dfsssp tables configured" in bed.log("opensm.log"), seconds=60)
        lids = lids_of(bed)
        sls = set()
        for i in range(1, 6):
            for j in range(1, 6):
                if i != j:
                    out = bed.run_on_node("saquery", "PR", "--slid", str(lids["h%d" % i]),
                                          "--dlid", str(lids["h%d" % j]), timeout=60)
                    sls.update(int(v, 16) for v in re.findall(r"^\s*sl\.+(0x[0-9a-f]+)", out,
                                                             re.M))
        assert len(sls) > 1, sls
        # (a run of the routes before dfsssp's, or with a switch unread
        # while opensm started, is partial too: until its loops are listed)
        assert wait_for(lambda: statuses(bed).get(4) == 4 and credit_loops(bed), seconds=120), \
            (statuses(bed), words_of(bed, 4))
        loops = credit_loops(bed)
        assert all(possible for _, _, possible in loops), loops
    finally:
        stop_testbed(bed)
