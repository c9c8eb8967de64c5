"""The sm check on ibsim with real opensm processes, against sminfo and the
SA's SMInfoRecords (saquery SMIR): the bed's opensm alone (master, said to
be alone), a second opensm started on an adapter (the same priority, a
lower GUID: it takes over; both listed, ibsnmpdMasterSmChanged once), then
stopped (the first takes over again: told again). Apart from
test_routing.py so that ctest runs the two side by side."""
import re

from conftest import TRAP_OID, notifications, start_testbed, stop_testbed, wait_for

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
ROUTING = MIB + "1.12."
CHECK_STATUS = ROUTING + "11.1.3."
OFFENDER = ROUTING + "12.1."
SMS = ROUTING + "15.1."
MASTER_CHANGED = MIB + "0.21"
SM, NO_STANDBY = 8, 23
# a standby that notices a silent master within 2 s (opensm's defaults: 10 s, 4 times)
FAST_POLLING = "sminfo_polling_timeout 1000\npolling_retry_number 2\n"


def num(value):
    return int(re.findall(r"\d+", value)[-1])


def sm_table(bed):
    """{name: (lid, state)} of ibsnmpdRouteSmTable (state: SMA-MIB's numbering)"""
    rows = {}
    for oid, (_, value) in bed.walk(SMS[:-1]).items():
        column, index = oid[len(SMS):].split(".", 1)
        rows.setdefault(index, {})[int(column)] = value.strip('"')
    return {r[2]: (int(r[3]), num(r[4])) for r in rows.values() if 2 in r and 4 in r}


def sm_status(bed):
    value = bed.get(CHECK_STATUS + str(SM))[CHECK_STATUS + str(SM)][1]
    return None if value.startswith("No Such") else num(value)


def sm_kinds(bed):
    kinds = []
    for oid, (_, value) in bed.walk(OFFENDER[:-1]).items():
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


def test_a_second_opensm_takes_over_and_gives_back(tmp_path):
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
        # a second opensm on hca3, whose port GUID is lower: it wins
        cache = tmp_path / "osm-cache2"
        cache.mkdir()
        conf = tmp_path / "opensm2.conf"
        conf.write_text("log_file %s\ndump_files_dir %s\n%s" % (
            tmp_path / "opensm2.log", cache, FAST_POLLING))
        since = len(notifications(bed))
        bed.spawn("opensm-2", "env", "OSM_CACHE_DIR=%s" % cache, "OSM_TMP_DIR=%s" % tmp_path,
                  "opensm", "-F", str(conf), node="hca3")
        assert wait_for(lambda: changes(bed, since), seconds=60), sm_table(bed)
        assert "hca3 port 1" in changes(bed, since)[0].values(), changes(bed, since)
        assert wait_for(lambda: sm_table(bed).get("hca3 port 1", (0, 0))[1] == 5 and
                        sm_table(bed).get("sw1", (0, 0))[1] == 4, seconds=60), sm_table(bed)
        table = sm_table(bed)
        assert smir(bed) == {table["hca3 port 1"][0]: 3, table["sw1"][0]: 2}
        assert wait_for(lambda: master_lid(bed) == table["hca3 port 1"][0], seconds=30)
        assert wait_for(lambda: sm_status(bed) == 1 and sm_kinds(bed) == [], seconds=30), \
            sm_kinds(bed)
        assert len(changes(bed, since)) == 1
        # it stops: the first takes over again, told again
        since = len(notifications(bed))
        bed.stop("opensm-2")
        assert wait_for(lambda: changes(bed, since), seconds=60), sm_table(bed)
        assert "sw1" in changes(bed, since)[0].values(), changes(bed, since)
        assert wait_for(lambda: sm_table(bed).get("sw1", (0, 0))[1] == 5, seconds=30)
        assert wait_for(lambda: master_lid(bed) == sm_table(bed)["sw1"][0], seconds=30)
        assert wait_for(lambda: sm_status(bed) == 1, seconds=30), sm_kinds(bed)
    finally:
        stop_testbed(bed)
