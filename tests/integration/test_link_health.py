"""Link health of NDR/XDR fabrics on the project's simulator (ibsim has none
of these attributes), checked against perfquery and smpquery run through the
same simulator: the PHY and FEC counters (IBSNMPD-MIB::ibsnmpdPmFecTable)
against perfquery -T in both of its layouts, NDR/XDR speeds and rates
against smpquery/smpdump, the bit error rates and congestion against the
rates the simulator's counters move at, flapping against Unlink/ReLink.

The arithmetic the tests state: a 4X NDR link carries 4 x 100 Gb/s =
4e11 bits a second, 4X XDR 8e11; a PortXmitWait tick is 8 octets (64 bits)
at that rate."""
import os
import re
import signal
import time

import pytest

from conftest import (TRAP_OID, fields, guid_index, notifications, start_testbed, stop_testbed,
                      wait_for)
from conftest import generated as simfabric_generated

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
FEC = MIB + "1.3.3.1."          # ibsnmpdPmFecTable entry
PORT = MIB + "1.5.1.1."         # ibsnmpdFabricPortTable entry
NOTIFY = MIB + "0."
FEC_COL = {"layout": 1, "sync": 2, "unknown": 3, "detect": 4, "symbols": 5,
           "correctable": 6, "uncorrectable": 7, "stale": 8}
PORT_COL = {"speed": 11, "rate": 14, "rguid": 15, "rport": 17, "flapping": 26, "downs": 27,
            "raw_m": 28, "raw_e": 29, "post_m": 30, "post_e": 31, "span": 32, "high": 33,
            "wait": 34}
IF_HIGH_SPEED = ".1.3.6.1.2.1.31.1.1.1.15"


def generated(bed):
    """({name: (guid, lid)}, {(name, port): (name, port)}) of the fabric the
    simulator generated."""
    nodes, links = simfabric_generated(bed)
    peer = {}
    for a, b in (sorted(link) for link in links):
        peer[a], peer[b] = b, a
    return {name: (guid, lid) for name, (_, guid, _, lid) in nodes.items()}, peer


def row(bed, table, col, guid, port):
    """A column's value, None if the row has none (yet)."""
    oid = "%s%d.%s.%d" % (table, col, guid_index(guid), port)
    value = bed.get(oid)[oid][1]
    return None if value.startswith("No Such") else value


def perfquery(bed, lid, port, *flags):
    return {k: int(v, 0) for k, v in fields(bed.run_on_node("perfquery", *flags, str(lid),
                                                            str(port))).items()
            if re.match(r"^(0x[0-9a-f]+|\d+)$", v)}


@pytest.fixture(scope="module")
def bed():
    # 16 hosts on radix-8 switches, NDR; counters every 2 s, links every 3 s
    b = start_testbed(big={"hosts": 16, "radix": 8},
                      extra_conf=["cacheLifetime pmCounters 2", "cacheLifetime fabricPorts 3",
                                  "berWindow 20", "berThreshold 1e-9 1e-12",
                                  "notificationLimit 1000 60", "madTimeout 300"])
    try:
        yield b
    finally:
        stop_testbed(b)


def test_rs_fec_counters_as_perfquery_shows_them(bed):
    nodes, _ = generated(bed)
    guid, lid = nodes["leaf-1-1"]
    for field, value in (("FECCorrectedSymbolCounter", 123456), ("FECCorrectableBlockCounter", 777),
                         ("FECUncorrectableBlockCounter", 9), ("SyncHeaderErrorCounter", 5),
                         ("UnknownBlockCounter", 6)):
        bed.simfabric("sim", 'PerformanceSet "leaf-1-1"[2] PortExtendedSpeedsCounters.%s=%d'
                      % (field, value))
    out = bed.run_on_node("perfquery", "-T", str(lid), "2")
    assert "RS-FEC Active" in out
    pq = perfquery(bed, lid, 2, "-T")
    assert pq["PortFECCorrectedSymbolCtr"] == 123456
    assert wait_for(lambda: row(bed, FEC, FEC_COL["symbols"], guid, 2) == "123456", seconds=60)
    assert row(bed, FEC, FEC_COL["layout"], guid, 2) == "2"  # rsFec
    assert int(row(bed, FEC, FEC_COL["correctable"], guid, 2)) == pq["PortFECCorrectableBlockCtr"]
    assert int(row(bed, FEC, FEC_COL["uncorrectable"], guid, 2)) == \
        pq["PortFECUncorrectableBlockCtr"]
    assert int(row(bed, FEC, FEC_COL["sync"], guid, 2)) == pq["SyncHeaderErrorCounter"]
    assert int(row(bed, FEC, FEC_COL["unknown"], guid, 2)) == pq["UnknownBlockCounter"]
    assert row(bed, FEC, FEC_COL["stale"], guid, 2) == "2"


def test_ndr_and_xdr_speeds_as_smpquery_and_smpdump_show_them(bed):
    nodes, peer = generated(bed)
    guid, lid = nodes["leaf-1-2"]
    info = fields(bed.run_on_node("smpquery", "portinfo", str(lid), "1"))
    assert info["LinkSpeedExtActive"] == "106.25 Gbps" and info["LinkWidthActive"] == "4X"
    assert wait_for(lambda: row(bed, PORT, PORT_COL["rate"], guid, 1) == "400000", seconds=60)
    assert row(bed, PORT, PORT_COL["speed"], guid, 1) == "7"  # ndr
    # XDR: Debian 12's smpquery knows no LinkSpeedExtActive2; the raw
    # PortInfo says it (bits 449-450 = 1, CapabilityMask2 0x0800 and 0x1000)
    bed.simfabric("sim", 'Speed "leaf-1-2"[1] XDR')
    dump = bed.run_on_node("smpdump", str(lid), "0x15", "1")
    octets = bytes.fromhex("".join(re.findall(r"\b[0-9a-f]{4}\b", dump)))  # 16-bit words
    assert len(octets) >= 64, dump
    assert octets[56] >> 5 & 3 == 1
    assert (octets[60] << 8 | octets[61]) & 0x1800 == 0x1800
    assert wait_for(lambda: row(bed, PORT, PORT_COL["rate"], guid, 1) == "800000", seconds=60)
    assert row(bed, PORT, PORT_COL["speed"], guid, 1) == "8"  # xdr
    # the switch's context: IF-MIB's ifHighSpeed in Mb/s
    context = "ib-%016x" % guid
    assert wait_for(lambda: bed.v3_walk(context, IF_HIGH_SPEED).get(
        IF_HIGH_SPEED + ".1", (None, None))[1] == "800000", seconds=60)
    bed.simfabric("sim", 'Speed "leaf-1-2"[1] HDR')
    assert wait_for(lambda: row(bed, PORT, PORT_COL["rate"], guid, 1) == "200000", seconds=60)
    bed.simfabric("sim", 'Speed "leaf-1-2"[1] NDR')
    # 2X NDR: 2 x 100 Gb/s, as smpquery names the width
    bed.simfabric("sim", 'Width "leaf-1-2"[1] 2X')
    assert fields(bed.run_on_node("smpquery", "portinfo", str(lid), "1"))["LinkWidthActive"] == "2X"
    assert wait_for(lambda: row(bed, PORT, PORT_COL["rate"], guid, 1) == "200000" and
                    row(bed, PORT, PORT_COL["speed"], guid, 1) == "7", seconds=60)
    bed.simfabric("sim", 'Width "leaf-1-2"[1] 4X')


def ber_notifications(bed, number, guid, port, after=0):
    name = "%s%d.%s.%d" % (PORT, PORT_COL["raw_m"], guid_index(guid), port)
    return [n for n in notifications(bed)[after:]
            if n.get(TRAP_OID) == NOTIFY + str(number) and name in n]


def test_bit_error_rate_from_corrected_symbols(bed):
    """4,000 corrected symbols a second on a 4X NDR link: 4e3 / 4e11 = 1E-8
    before FEC, above the bed's threshold of 1E-9: one ibsnmpdLinkBerHigh
    naming both ends; stopped, the rate falls to 0 within the 20 s window:
    one ibsnmpdLinkBerNormal."""
    nodes, peer = generated(bed)
    guid, lid = nodes["leaf-1-3"]
    far, far_port = peer[("leaf-1-3", 1)]
    before = len(notifications(bed))
    first = perfquery(bed, lid, 1, "-T")["PortFECCorrectedSymbolCtr"]
    started = time.monotonic()
    bed.simfabric("sim", 'CounterRate "leaf-1-3"[1] FECCorrectedSymbolCounter=4000')
    assert wait_for(lambda: ber_notifications(bed, 5, guid, 1, before), seconds=90)
    # perfquery sees the same pace
    moved = perfquery(bed, lid, 1, "-T")["PortFECCorrectedSymbolCtr"] - first
    assert 0.8 * 4000 <= moved / (time.monotonic() - started) <= 1.25 * 4000

    def ber():
        m, e = row(bed, PORT, PORT_COL["raw_m"], guid, 1), row(bed, PORT, PORT_COL["raw_e"], guid, 1)
        return int(m) / 10 * 10 ** int(e) if m is not None and e is not None else None
    # once the window holds only the time the errors came at that pace
    assert wait_for(lambda: 0.8e-8 <= (ber() or 0) <= 1.25e-8, seconds=60), ber()
    assert row(bed, PORT, PORT_COL["post_m"], guid, 1) == "0"
    assert row(bed, PORT, PORT_COL["high"], guid, 1) == "1"
    assert 10 <= int(row(bed, PORT, PORT_COL["span"], guid, 1)) <= 20
    n = ber_notifications(bed, 5, guid, 1, before)[0]
    assert n["%s%d.%s.1" % (PORT, PORT_COL["rport"], guid_index(guid))] == str(far_port)
    assert n["%s%d.%s.1" % (PORT, PORT_COL["rguid"], guid_index(guid))].replace(" ", "") == \
        "%016X" % nodes[far][0]
    # the other end receives cleanly
    assert row(bed, PORT, PORT_COL["high"], nodes[far][0], far_port) == "2"
    bed.simfabric("sim", 'CounterRate "leaf-1-3"[1] FECCorrectedSymbolCounter=0')
    assert wait_for(lambda: ber_notifications(bed, 6, guid, 1, before), seconds=90)
    assert len(ber_notifications(bed, 5, guid, 1, before)) == 1  # once per crossing
    assert row(bed, PORT, PORT_COL["high"], guid, 1) == "2"


def test_congestion_from_xmit_wait(bed):
    """31,250,000 PortXmitWait ticks a second of 64 bits each on 4e11 b/s:
    31.25e6 x 64 / 4e11 = 5 per mille of the time."""
    nodes, _ = generated(bed)
    guid, lid = nodes["leaf-1-4"]
    bed.simfabric("sim", 'CounterRate "leaf-1-4"[3] PortXmitWait=31250000')
    try:
        first, t0 = perfquery(bed, lid, 3)["PortXmitWait"], time.monotonic()
        time.sleep(2)
        moved = perfquery(bed, lid, 3)["PortXmitWait"] - first
        assert 0.8 * 5 <= moved * 64 / (4e11 * (time.monotonic() - t0)) * 1000 <= 1.25 * 5
        assert wait_for(lambda: 4 <= int(row(bed, PORT, PORT_COL["wait"], guid, 3) or 0) <= 6,
                        seconds=60)
    finally:
        bed.simfabric("sim", 'CounterRate "leaf-1-4"[3] PortXmitWait=0')


def flapping_notifications(bed, guids, after=0):
    return [n for n in notifications(bed)[after:] if n.get(TRAP_OID) == NOTIFY + "7" and
            any(guid_index(g) in name for name in n for g in guids)]


def test_four_downs_in_a_minute_flap_once_one_does_not(bed):
    nodes, peer = generated(bed)
    guid, lid = nodes["leaf-1-1"]
    far, far_port = peer[("leaf-1-1", 3)]
    other, other_port = peer[("leaf-1-1", 4)]
    before = len(notifications(bed))
    downed = perfquery(bed, lid, 3)["LinkDownedCounter"]
    # one down and up of another link: not flapping
    bed.simfabric("sim", 'Unlink "leaf-1-1"[4]')
    time.sleep(1)
    bed.simfabric("sim", 'ReLink "leaf-1-1"[4]')
    for _ in range(4):
        bed.simfabric("sim", 'Unlink "leaf-1-1"[3]')
        time.sleep(1)
        bed.simfabric("sim", 'ReLink "leaf-1-1"[3]')
        time.sleep(1)
    assert perfquery(bed, lid, 3)["LinkDownedCounter"] == downed + 4
    assert wait_for(lambda: flapping_notifications(bed, [guid, nodes[far][0]], before),
                    seconds=90)
    # the notification names either end, and each end's row follows its
    # own switch's sweep: both ends' rows are waited for (seen under load:
    # the far end told first, leaf-1-1's row a sweep behind)
    assert wait_for(lambda: row(bed, PORT, PORT_COL["flapping"], guid, 3) == "1", seconds=60)
    assert wait_for(lambda: row(bed, PORT, PORT_COL["flapping"], nodes[far][0], far_port) == "1",
                    seconds=60)
    assert int(row(bed, PORT, PORT_COL["downs"], guid, 3)) >= 4
    time.sleep(8)  # a few more sweeps: still one, for the link
    found = flapping_notifications(bed, [guid, nodes[far][0]], before)
    assert len(found) == 1, found
    assert row(bed, PORT, PORT_COL["flapping"], guid, 4) == "2"
    assert row(bed, PORT, PORT_COL["downs"], guid, 4) == "1"
    assert not flapping_notifications(bed, [nodes[other][0]], before)


def test_bad_threshold_lines_name_their_line_and_change_nothing(bed):
    path = bed.path("ibsnmpd.conf")
    with open(path) as f:
        lines = f.read().count("\n")
    with open(path, "a") as f:
        f.write("berThreshold 2 1e-12\nflapThreshold 9 10\nberWindow 5\n")
    offset = len(bed.log("ibsnmpd.log"))
    os.kill(bed.pid_of("ibsnmpd"), signal.SIGHUP)
    assert wait_for(lambda: "keeping the previous settings" in bed.log("ibsnmpd.log")[offset:],
                    seconds=20)
    log = bed.log("ibsnmpd.log")[offset:]
    for n, token in ((lines + 1, "berThreshold 2 1e-12"), (lines + 2, "flapThreshold 9 10"),
                     (lines + 3, "berWindow 5")):
        assert re.search(r"ibsnmpd.conf: line %d: .*%s" % (n, re.escape(token)), log), log
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text[:text.index("berThreshold 2")])
    nodes, _ = generated(bed)
    assert row(bed, PORT, PORT_COL["high"], nodes["leaf-1-1"][0], 2) is not None


def test_per_lane_layout_on_edr_as_perfquery_shows_it():
    """EDR links run the older layout: error detection and FEC blocks per
    lane; ibsnmpd serves their sums."""
    b = start_testbed(big={"hosts": 8, "radix": 8, "speed": "EDR"},
                      extra_conf=["cacheLifetime pmCounters 2", "madTimeout 300"])
    try:
        nodes, _ = generated(b)
        guid, lid = nodes["leaf-1-1"]
        for field, value in (("ErrorDetectionCounter", 42), ("FECCorrectableBlockCounter", 400),
                             ("FECUncorrectableBlockCounter", 9)):
            b.simfabric("sim", 'PerformanceSet "leaf-1-1"[2] PortExtendedSpeedsCounters.%s=%d'
                        % (field, value))
        out = b.run_on_node("perfquery", "-T", str(lid), "2")
        assert "RS-FEC" not in out and "ErrorDetectionCounterLane0" in out
        pq = perfquery(b, lid, 2, "-T")
        lanes = lambda name: sum(v for k, v in pq.items() if re.match(name + r"\d+$", k))  # noqa
        assert lanes("ErrorDetectionCounterLane") == 42
        assert wait_for(lambda: row(b, FEC, FEC_COL["detect"], guid, 2) == "42", seconds=60)
        assert row(b, FEC, FEC_COL["layout"], guid, 2) == "1"  # perLane
        assert int(row(b, FEC, FEC_COL["correctable"], guid, 2)) == \
            lanes("FECCorrectableBlockCtrLane")
        assert int(row(b, FEC, FEC_COL["uncorrectable"], guid, 2)) == \
            lanes("FECUncorrectableBlockCtrLane")
        assert row(b, FEC, FEC_COL["symbols"], guid, 2) == "0"
        assert row(b, PORT, PORT_COL["rate"], guid, 2) == "100000"  # 4X EDR
    finally:
        stop_testbed(b)
