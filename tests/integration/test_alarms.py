"""The active alarm table (ibsnmpdAlarmTable) against the tables it
summarises, after a random sequence of faults on fabricsim (16 hosts): links
down, narrower links, bit errors, flapping, a node that answers nothing, a
hot sensor, a stopped fan, a faulted module, a weak lane. After each step,
every condition the tables show has exactly one row, and none more; the
rows keep their index while they last; when every fault is removed the
table is empty, and the conditions whose raising notification has no
counterpart were cleared with ibsnmpdAlarmCleared. The tables are read as
an NMS reads them (IBSNMPD-MIB's link, node and vitals tables): the
expected set is derived from them here, not from the alarm code."""
import random
import time

import pytest

from conftest import TRAP_OID, generated, notifications, start_testbed, stop_testbed, wait_for

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
PORT = MIB + "1.5.1.1."      # ibsnmpdFabricPortEntry
NODE = MIB + "1.6.1.1."      # ibsnmpdNodeEntry
TEMP = MIB + "1.7.2.1."
FAN = MIB + "1.7.3.1."
MODULE = MIB + "1.7.4.1."
LANE = MIB + "1.7.5.1."
ALARM = MIB + "1.9.3.1."
ALARMS_CHANGED = MIB + "1.9.2.0"  # ibsnmpdAlarmsLastChange
ACTIVE = MIB + "1.9.1.0"
N = MIB + "0."
CLEARED = N + "18"
TRUE = "1"


def column(bed, entry, number):
    """{index arcs (tuple of ints): value} of one column"""
    prefix = "%s%d." % (entry, number)
    return {tuple(int(x) for x in oid[len(prefix):].split(".")): v.strip('"')
            for oid, (_, v) in bed.walk(prefix[:-1]).items() if oid.startswith(prefix)}


def guid_of(arcs):
    return int.from_bytes(bytes(arcs[:8]), "big")


def expected(bed):
    """What the tables say is wrong: {(notification, what)} where what is a
    link (frozenset of two (guid, port)), a port, a node or a vitals row"""
    state, base = column(bed, PORT, 6), column(bed, PORT, 22)
    rguid, rport = column(bed, PORT, 15), column(bed, PORT, 17)
    degraded, stale = column(bed, PORT, 18), column(bed, PORT, 25)
    flapping, ber = column(bed, PORT, 26), column(bed, PORT, 33)
    want = set()

    def link(i):
        end = (guid_of(i), i[8])
        far = (int(rguid[i].replace(" ", ""), 16), int(rport[i])) if i in rguid else None
        return frozenset([end, far]) if far else frozenset([end])
    for i in state:
        if base.get(i) == TRUE and state[i] == "1":
            want.add((N + "1", link(i)))
        if degraded.get(i) == TRUE:
            want.add((N + "3", link(i)))
        if flapping.get(i) == TRUE:
            want.add((N + "7", link(i)))
        if ber.get(i) == TRUE:
            want.add((N + "5", (guid_of(i), i[8])))
    # a node whose every port is unanswered (none said down: still
    # discovered) while a neighbour that answers sees it linked
    ports = {}
    for i in state:
        ports.setdefault(guid_of(i), []).append(i)
    for g, rows in ports.items():
        if all(stale.get(i) == TRUE and state[i] != "1" for i in rows) and \
                any(rguid.get(j, "").replace(" ", "") == "%016X" % g and state[j] == "4" and
                    stale.get(j) != TRUE for j in state):
            want.add((N + "17", g))
    for entry, col, value, number in ((TEMP, 8, TRUE, 8), (FAN, 5, TRUE, 10),
                                      (MODULE, 5, "3", 14), (LANE, 10, TRUE, 15)):
        for i, v in column(bed, entry, col).items():
            if v == value:
                want.add((N + str(number), (guid_of(i),) + i[8:]))
    return want


def alarm_columns(bed, *numbers):
    """[{index arcs: value}] of ibsnmpdAlarmTable's columns, walked as one
    publication of the table (TestBed.walk_whole: again while
    ibsnmpdAlarmsLastChange moves)"""
    rows = bed.walk_whole(["%s%d" % (ALARM, n) for n in numbers], ALARMS_CHANGED)
    res = []
    for n in numbers:
        prefix = "%s%d." % (ALARM, n)
        res.append({tuple(int(x) for x in oid[len(prefix):].split(".")): v.strip('"')
                    for oid, (_, v) in rows.items() if oid.startswith(prefix)})
    return res


def alarms(bed):
    """{index: (notification, what)} of ibsnmpdAlarmTable, what as expected()
    names it (a link by the fabric table's row of the end that speaks)"""
    notification, guid, port, sub = alarm_columns(bed, 2, 6, 7, 8)
    rguid, rport = column(bed, PORT, 15), column(bed, PORT, 17)
    res = {}
    for (index,), n in notification.items():
        assert all((index,) in c for c in (guid, port, sub)), (index, n)  # one publication
        g = int(guid[(index,)].replace(" ", ""), 16)
        p, s = int(port[(index,)]), int(sub[(index,)])
        if n in (N + "1", N + "3", N + "7"):
            i = tuple(g.to_bytes(8, "big")) + (p,)
            far = (int(rguid[i].replace(" ", ""), 16), int(rport[i])) if i in rguid else None
            what = frozenset([(g, p), far]) if far else frozenset([(g, p)])
        elif n == N + "5":
            what = (g, p)
        elif n == N + "17":
            what = g
        elif n == N + "15":
            what = (g, p, s)
        else:
            what = (g, s)
        res[index] = (n, what)
    return res


def difference(bed):
    """(rows the tables do not call for, conditions without a row)"""
    rows, want = set(alarms(bed).values()), expected(bed)
    return sorted(map(str, rows - want)), sorted(map(str, want - rows))


def consistent(bed, seen):
    """The alarm table has one row per condition the tables show, no more;
    a row that was there keeps its index while it is there (a condition
    that cleared and came back, as a flapping link's may between two
    looks, has a row of its own: its clearing is in snmptrapd's log)"""
    rows = alarms(bed)
    if len(set(rows.values())) != len(rows) or set(rows.values()) != expected(bed):
        return False
    for what in [w for w in seen if w not in rows.values()]:
        del seen[what]
    for index, what in rows.items():
        if seen.setdefault(what, index) != index:
            # cleared and raised again between two looks (a flap a quiet
            # minute after the last, both while the test was flapping it):
            # a row of its own, if snmptrapd logged the old row's clearing
            if seen[what] not in cleared_rows(bed):
                raise AssertionError("%s moved from row %d to %d" % (what, seen[what], index))
            seen[what] = index
    return True


def cleared_rows(bed):
    """The alarm rows ibsnmpdAlarmCleared told gone, as snmptrapd logged it"""
    return {int(k.rsplit(".", 1)[1]) for n in notifications(bed) if n.get(TRAP_OID) == CLEARED
            for k in n if k.startswith(ALARM)}


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(big={"hosts": 16, "radix": 8},
                      extra_conf=["cacheLifetime pmCounters 1", "cacheLifetime fabricPorts 1",
                                  "cacheLifetime vitalsSensors 2", "berWindow 10",
                                  "berThreshold 1e-9 1e-12", "flapThreshold 2 1",
                                  "notificationLimit 0 60", "madTimeout 300",
                                  "trapSubscribe no",
                                  # hosts down leave fabricsim's uplinks a LID or two
                                  # apart: the balance check's alarm is test_routing's
                                  "routingCheck no"])
    try:
        yield b
    finally:
        stop_testbed(b)


def test_the_alarm_table_follows_random_faults(bed):
    nodes, _ = generated(bed)
    assert wait_for(lambda: column(bed, TEMP, 8) and column(bed, PORT, 22), seconds=60)

    def flap(b):
        for _ in range(3):
            b.simfabric("sim", 'Unlink "host-7"')
            time.sleep(2.5)  # seen down by a link sweep and a counter sweep
            b.simfabric("sim", 'ReLink "host-7"')
            time.sleep(2.5)
    # (name, fault, its removal)
    faults = [
        ("host-3 down", lambda b: b.simfabric("sim", 'Unlink "host-3"'),
         lambda b: b.simfabric("sim", 'ReLink "host-3"')),
        ("host-4 down", lambda b: b.simfabric("sim", 'Unlink "host-4"'),
         lambda b: b.simfabric("sim", 'ReLink "host-4"')),
        ("host-5 2X", lambda b: b.simfabric("sim", 'Width "host-5"[1] 2X'),
         lambda b: b.simfabric("sim", 'Width "host-5"[1] 4X')),
        ("host-6 bit errors", lambda b: b.simfabric(
            "sim", 'CounterRate "host-6"[1] FECCorrectedSymbolCounter=400000'),
         lambda b: b.simfabric("sim", 'CounterRate "host-6"[1] FECCorrectedSymbolCounter=0')),
        ("host-7 flapping", flap, lambda b: None),
        ("host-8 dead", lambda b: b.simfabric("sim", 'Dead "host-8"'),
         lambda b: b.simfabric("sim", 'Alive "host-8"')),
        ("leaf-1-1 hot", lambda b: b.simfabric("sim", 'Temperature "leaf-1-1" 0 107'),
         lambda b: b.simfabric("sim", 'Temperature "leaf-1-1" 0 auto')),
        ("leaf-1-1 fan", lambda b: b.simfabric("sim", 'Fan "leaf-1-1" 3 0'),
         lambda b: b.simfabric("sim", 'Fan "leaf-1-1" 3 auto')),
        ("leaf-1-2 module", lambda b: b.simfabric("sim", 'Module "leaf-1-2"[5] Fault'),
         lambda b: b.simfabric("sim", 'Module "leaf-1-2"[5] Insert')),
        ("leaf-1-3 weak lane", lambda b: b.simfabric("sim", 'Module "leaf-1-3"[7] RxPower 2 -13'),
         lambda b: b.simfabric("sim", 'Module "leaf-1-3"[7] RxPower 2 auto')),
    ]
    rng = random.Random(5)  # every fault at least once
    active, seen, kinds = set(), {}, set()
    since = len(notifications(bed))
    for step in range(16):
        name, fault, removal = rng.choice(faults)
        if name in active:
            removal(bed)
            active.discard(name)
        else:
            fault(bed)
            active.add(name)
        assert wait_for(lambda: consistent(bed, seen) and (expected(bed) or not active),
                        seconds=45), (step, name, sorted(active), difference(bed))
        kinds |= {n for n, _ in alarms(bed).values()}
    for name, fault, removal in faults:
        if name in active:
            removal(bed)
    # everything well again: no row stays (flapping ends a quiet minute later)
    assert wait_for(lambda: not alarms(bed) and not expected(bed), seconds=120), \
        (alarms(bed), expected(bed))
    assert bed.get(ACTIVE)[ACTIVE][1] == "0"
    assert len(kinds) >= 5, kinds
    cleared = [n for n in notifications(bed)[since:] if n.get(TRAP_OID) == CLEARED]
    assert cleared or not kinds & {N + "7", N + "17", N + "14"}, kinds
    # a node unreachable only for the node that answered nothing
    silent = [n.get(ALARM + "9.%s" % k.rsplit(".", 1)[1], "").strip('"')
              for n in notifications(bed)[since:] if n.get(TRAP_OID) == N + "17"
              for k in n if k.startswith(ALARM + "6.")]
    assert silent and set(silent) == {"host-8"}, silent
