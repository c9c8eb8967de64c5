"""IB-PM-MIB sampling (pmPortSampleCntrlTable, pmPortSampleResultTable).

ibsim implements no sampling; tests/tools/sim_pma_responder.c answers
PortSamplesControl/PortSamplesResult for the node it is attached to (hca3
here), with a documented behaviour: a finished sample's Counter[i] is
CounterSelect[i] * 1000 + i. What ibsnmpd serves is compared with perfquery
--smplctl on the same fabric and with that rule."""
import os
import re
import signal

import pytest

from conftest import guid_index as idx
from conftest import fields, node_guids, start_testbed, stop_testbed, tool_path, wait_for

CTL = ".1.3.6.1.3.117.1.2.1"
RESULT = ".1.3.6.1.3.117.1.3.1"


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca2", extra_conf=[
        "cacheLifetime pmSamples 1", "madTimeout 300", "madRetries 1"])
    try:
        b.simfabric("spawn", "pma", "--node", "hca3", "--",
                    tool_path("sim-pma-responder", "SIM_PMA_RESPONDER"))
        assert wait_for(lambda: "ready" in b.log("pma.out"), seconds=30), b.log("pma.out")
        # the rows are the discovered nodes: discovery runs after ibsnmpd is up
        assert wait_for(lambda: "subnet discovered" in b.log("ibsnmpd.log"), seconds=60)
        yield b
    finally:
        stop_testbed(b)


def node(bed, name):
    """(node GUID, LID), from ibnetdiscover on the same fabric."""
    return node_guids(bed)[name]


def snmpset(bed, *args):
    return bed.snmp("snmpset", *args, community=bed.env["SNMP_RW_COMMUNITY"])


def row(bed, table, guid):
    """{column: value} of one node's row (hex strings as plain hex)."""
    out = bed.snmp("snmpbulkwalk", table, extra=["-Ox"])
    assert out.returncode == 0, out.stderr
    res = {}
    suffix = "." + idx(guid)
    for line in out.stdout.splitlines():
        m = re.match(r"^(\.[0-9.]+) = (?:[A-Za-z0-9-]+: )?(.*)$", line)
        if m and m.group(1).endswith(suffix):
            col = int(m.group(1)[len(table) + 1:].split(".")[0])
            res[col] = m.group(2).strip().replace(" ", "")
    return res


def samples_started(bed):
    return bed.log("pma.out").count("sample started")


def test_pm_sample_node_in_the_configuration_is_read_without_a_set(bed):
    """pmSampleNode, added and re-read with SIGHUP: hca3's sampling state is
    served although no SET named it (this test runs first: nothing has
    started a sample on hca3 yet)."""
    guid, _ = node(bed, "hca3")
    assert row(bed, CTL, guid) == {1: "%016X" % guid}  # not read: nobody asked
    with open(os.path.join(bed.dir, "ibsnmpd.conf"), "a") as f:
        f.write("pmSampleNode 0x%016x\n" % guid)
    pid = int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read())
    os.kill(pid, signal.SIGHUP)
    assert wait_for(lambda: "re-reading the configuration" in bed.log("ibsnmpd.log"))
    assert wait_for(lambda: 27 in row(bed, CTL, guid), seconds=30)


def test_a_sample_started_over_snmp_runs_on_the_node(bed):
    guid, lid = node(bed, "hca3")
    i = idx(guid)
    before = samples_started(bed)
    out = snmpset(bed, "%s.27.%s" % (CTL, i), "x", "00004242",
                  "%s.26.%s" % (CTL, i), "i", "300000",
                  "%s.3.%s" % (CTL, i), "i", "1",
                  "%s.28.%s" % (CTL, i), "i", "1",
                  "%s.30.%s" % (CTL, i), "i", "3")
    assert out.returncode == 0, out.stderr
    # one PerformanceSet for the whole PDU
    assert samples_started(bed) == before + 1
    ref = fields(bed.run_on_node("perfquery", "--smplctl", str(lid)))
    assert ref["Tag"] == "0x4242" and ref["SampleInterval"] == "300000"
    assert ref["PortSelect"] == "1"
    assert ref["CounterSelect0"] == "0x0001" and ref["CounterSelect2"] == "0x0003"

    # the result appears once the sample is over (300 ms of the responder's ticks)
    def finished():
        r = row(bed, RESULT, guid)
        return r.get(2) == "00004242" and r.get(3) == "0"
    assert wait_for(finished, seconds=30)
    res = row(bed, RESULT, guid)
    # Counter[i] = CounterSelect[i] * 1000 + i (the responder's rule)
    assert int(res[4]) == 1000 and int(res[5]) == 1 and int(res[6]) == 3002
    assert [int(res[4 + k]) for k in range(3, 15)] == list(range(3, 15))


def test_control_columns_match_perfquery(bed):
    guid, lid = node(bed, "hca3")
    assert wait_for(lambda: 2 in row(bed, CTL, guid), seconds=30)
    ref = fields(bed.run_on_node("perfquery", "--smplctl", str(lid)))
    got = row(bed, CTL, guid)
    assert got[1] == "%016X" % guid
    assert int(got[2]) == int(ref["OpCode"], 16)
    assert int(got[3]) == int(ref["PortSelect"])
    assert int(got[4]) == int(ref["Tick"], 16)
    assert int(got[5]) == int(ref["CounterWidth"])
    masks = [int(ref["CounterMask0"], 16)]
    m19, m1014 = int(ref["CounterMasks1to9"], 16), int(ref["CounterMasks10to14"], 16)
    masks += [m19 >> (3 * (9 - k)) & 7 for k in range(1, 10)]
    masks += [m1014 >> (3 * (14 - k)) & 7 for k in range(10, 15)]
    assert [int(got[6 + k]) for k in range(15)] == masks
    assert int(got[21]) == int(ref["SampleMechanisms"])
    assert int(got[22]) == int(ref["SampleStatus"])
    assert int(got[23], 16) == int(ref["OptionMask"], 16)
    assert int(got[24], 16) == int(ref["VendorMask"], 16) == 0x0123456789ABCDEF
    assert int(got[25]) == int(ref["SampleStart"])
    assert int(got[26]) == int(ref["SampleInterval"])
    assert int(got[27], 16) == int(ref["Tag"], 16)
    assert [int(got[28 + k]) for k in range(15)] == \
        [int(ref["CounterSelect%d" % k], 16) for k in range(15)]


def test_bad_sample_sets_are_refused_and_start_nothing(bed):
    guid, lid = node(bed, "hca3")
    i = idx(guid)
    before = samples_started(bed)
    tag_before = fields(bed.run_on_node("perfquery", "--smplctl", str(lid)))["Tag"]
    cases = [
        (("%s.27.%s" % (CTL, i), "x", "4242"), "wrongLength"),
        (("%s.27.%s" % (CTL, i), "x", "01004242"), "wrongValue"),  # IBA's Tag is 16 bits
        (("%s.27.%s" % (CTL, i), "i", "5"), "wrongType"),
        (("%s.28.%s" % (CTL, i), "i", "70000"), "wrongValue"),
        (("%s.2.%s" % (CTL, i), "i", "256"), "wrongValue"),
        (("%s.25.%s" % (CTL, i), "i", "-1"), "wrongValue"),
        (("%s.3.%s" % (CTL, i), "i", "9"), "inconsistentValue"),  # no port 9
        (("%s.4.%s" % (CTL, i), "i", "1"), "notWritable"),        # Tick
        (("%s.27.0.0.0.0.0.0.0.1" % CTL, "x", "00000001"), "noCreation"),
        (("%s.1.%s" % (RESULT, i), "x", "0000000000000000"), "notWritable"),
        # all or nothing: a good field with a bad one starts nothing
        (("%s.27.%s" % (CTL, i), "x", "00000777", "%s.28.%s" % (CTL, i), "i", "-5"),
         "wrongValue"),
    ]
    for args, error in cases:
        out = snmpset(bed, *args)
        assert out.returncode != 0 and error in out.stderr, (args, out.stderr)
    assert samples_started(bed) == before
    assert fields(bed.run_on_node("perfquery", "--smplctl", str(lid)))["Tag"] == tag_before


def test_a_node_that_does_not_sample_fails_the_set_and_shows_no_values(bed):
    """hca1 has no sampling agent (ibsim forwards the MADs to nobody): the
    SET ends in commitFailed after the MAD timeouts; its row has its GUID and
    no sampling values."""
    guid, _ = node(bed, "hca1")
    out = snmpset(bed, "%s.27.%s" % (CTL, idx(guid)), "x", "00000001")
    assert out.returncode != 0 and "commitFailed" in out.stderr, out.stderr
    assert row(bed, CTL, guid) == {1: "%016X" % guid}
    assert row(bed, RESULT, guid) == {1: "%016X" % guid}
