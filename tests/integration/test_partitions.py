"""P_Key partition policy over SNMP (IBSNMPD-PARTITION-MIB), end to end with
opensm on ibsim: SETs change opensm's partition file, opensm re-reads it
(SIGHUP), and the ports' P_Key tables (smpquery pkeys) show the result."""
import os
import signal
import subprocess

import pytest

from conftest import guid_index as idx
from conftest import node_guids, port_pkeys, start_testbed, stop_testbed, wait_for

PM = ".1.3.6.1.4.1.8072.9999.9999.117.3"
PART = PM + ".1.1.1"
MEMBER = PM + ".1.2.1"
POLICY = PM + ".1.3"
SMA_PKEY = ".1.3.6.1.3.117.3.1.6.1.1"
CREATE_AND_GO, DESTROY = "4", "6"


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca2", extra_conf=[
        "partitionFile {dir}/partitions.conf", "opensmPidFile {dir}/opensm.pid",
        "partitionVerifyDelay 2", "cacheLifetime partitionStatus 5",
        "cacheLifetime pKeyTable 2"])
    assert wait_for(lambda: b.serves(POLICY + ".5.0"), seconds=30)  # registered (conftest)
    yield b
    stop_testbed(b)


def snmpset(bed, *args):
    return bed.snmp("snmpset", *args, community=bed.env["SNMP_RW_COMMUNITY"])


def pfile(bed):
    with open(os.path.join(bed.dir, "partitions.conf"), "rb") as f:
        return f.read()


def value(bed, oid):
    got = bed.get(oid)
    return got[oid][1]


def test_create_two_full_members_then_destroy(bed):
    guids = node_guids(bed)
    (g1, lid1), (g2, lid2) = guids["hca1"], guids["hca2"]
    pkey = 0x0123
    before = pfile(bed)
    out = snmpset(bed, "%s.10.%d" % (PART, pkey), "i", CREATE_AND_GO,
                  "%s.2.%d" % (PART, pkey), "s", "storage",
                  "%s.3.%d" % (PART, pkey), "i", "1",
                  "%s.4.%d.%s" % (MEMBER, pkey, idx(g1 + 1)), "i", CREATE_AND_GO,
                  "%s.2.%d.%s" % (MEMBER, pkey, idx(g1 + 1)), "i", "1",
                  "%s.4.%d.%s" % (MEMBER, pkey, idx(g2 + 1)), "i", CREATE_AND_GO,
                  "%s.2.%d.%s" % (MEMBER, pkey, idx(g2 + 1)), "i", "1")
    assert out.returncode == 0, out.stderr
    after = pfile(bed)
    assert after.startswith(before)  # what was there stays as it was
    assert b"storage=0x0123, ipoib : 0x%016x=full, 0x%016x=full ;" % (g1 + 1, g2 + 1) in after
    assert open(os.path.join(bed.dir, "partitions.conf.bak"), "rb").read() == before
    # opensm re-read it: both ports hold the P_Key as full members, and so do
    # the switch ports behind them (sw1 ports 1 and 2), which ibsnmpd checks too
    assert wait_for(lambda: port_pkeys(bed, lid1).get(pkey) is True and
                    port_pkeys(bed, lid2).get(pkey) is True, seconds=60)
    sw_lid = guids["sw1"][1]
    assert pkey in port_pkeys(bed, sw_lid, port=1) and pkey in port_pkeys(bed, sw_lid, port=2)
    # the status objects say so, and SMA-MIB's P_Key table of hca2 (ibsnmpd's node)
    assert wait_for(lambda: value(bed, "%s.9.%d" % (PART, pkey)) == "1", seconds=60)
    assert value(bed, "%s.3.%d.%s" % (MEMBER, pkey, idx(g1 + 1))) == "1"
    assert wait_for(lambda: value(bed, POLICY + ".3.0") == "1")  # verified
    assert wait_for(lambda: any(v[1] == str(pkey) for k, v in bed.walk(SMA_PKEY + ".4").items()))
    # destroy: the P_Key goes away from the ports, the row from the table
    out = snmpset(bed, "%s.10.%d" % (PART, pkey), "i", DESTROY)
    assert out.returncode == 0, out.stderr
    assert pfile(bed) == before
    assert wait_for(lambda: pkey not in port_pkeys(bed, lid1) and
                    pkey not in port_pkeys(bed, lid2), seconds=60)
    assert not bed.walk("%s.2" % PART)


def test_member_that_does_not_exist_is_unreachable(bed):
    pkey = 0x0200
    ghost = 0x0002c903deadbeef
    out = snmpset(bed, "%s.10.%d" % (PART, pkey), "i", CREATE_AND_GO,
                  "%s.2.%d" % (PART, pkey), "s", "ghosts",
                  "%s.4.%d.%s" % (MEMBER, pkey, idx(ghost)), "i", CREATE_AND_GO)
    assert out.returncode == 0, out.stderr
    assert wait_for(lambda: value(bed, "%s.3.%d.%s" % (MEMBER, pkey, idx(ghost))) == "4",
                    seconds=60)
    assert "no such port" in value(bed, "%s.5.%d.%s" % (MEMBER, pkey, idx(ghost)))
    assert value(bed, "%s.9.%d" % (PART, pkey)) == "4"
    # after six checks (2 s apart here) the apply counts as not verified,
    # and a notification says so
    assert wait_for(lambda: value(bed, POLICY + ".3.0") == "3", seconds=60)
    assert wait_for(lambda: "OID: .1.3.6.1.4.1.8072.9999.9999.117.3.0.1" in
                    bed.log("traps.log"))
    assert snmpset(bed, "%s.10.%d" % (PART, pkey), "i", DESTROY).returncode == 0


def test_bad_sets_are_refused_and_the_file_is_untouched(bed):
    g1 = node_guids(bed)["hca1"][0] + 1
    out = snmpset(bed, "%s.10.%d" % (PART, 0x300), "i", CREATE_AND_GO,
                  "%s.2.%d" % (PART, 0x300), "s", "taken")
    assert out.returncode == 0, out.stderr
    before = pfile(bed)
    mtime = os.stat(os.path.join(bed.dir, "partitions.conf")).st_mtime_ns
    cases = [
        # P_Key outside 0x0001-0x7FFE: no such row can exist
        (("%s.10.%d" % (PART, 0x7fff), "i", CREATE_AND_GO, "%s.2.%d" % (PART, 0x7fff), "s",
          "x"), "noCreation"),
        (("%s.10.0" % PART, "i", CREATE_AND_GO), "noCreation"),
        # a name another partition has
        (("%s.10.%d" % (PART, 0x301), "i", CREATE_AND_GO, "%s.2.%d" % (PART, 0x301), "s",
          "taken"), "inconsistentValue"),
        # names opensm's parser would not take
        (("%s.2.%d" % (PART, 0x300), "s", "two words"), "wrongValue"),
        (("%s.2.%d" % (PART, 0x300), "s", "x" * 65), "wrongLength"),
        # a malformed GUID (7 octets) in a member index
        (("%s.4.%d.0.2.201.3.0.0.1" % (MEMBER, 0x300), "i", CREATE_AND_GO), "noCreation"),
        # a member of a partition that does not exist
        (("%s.4.%d.%s" % (MEMBER, 0x302, idx(g1)), "i", CREATE_AND_GO), "inconsistentValue"),
        # created without its name
        (("%s.10.%d" % (PART, 0x303), "i", CREATE_AND_GO), "inconsistentValue"),
        (("%s.10.%d" % (PART, 0x303), "i", "5"), "wrongValue"),  # createAndWait
        (("%s.3.%d" % (PART, 0x300), "i", "3"), "wrongValue"),   # TruthValue 3
        (("%s.2.%d" % (MEMBER, 0x300, ), "i", "1"), "noCreation"),
        (("%s.9.%d" % (PART, 0x300), "i", "1"), "notWritable"),  # status
        # all or nothing: a good member with a bad one changes nothing
        (("%s.4.%d.%s" % (MEMBER, 0x300, idx(g1)), "i", CREATE_AND_GO,
          "%s.2.%d.%s" % (MEMBER, 0x300, idx(g1)), "i", "7"), "wrongValue"),
    ]
    for args, error in cases:
        out = snmpset(bed, *args)
        assert out.returncode != 0 and error in out.stderr, (args, out.stderr)
    assert pfile(bed) == before
    assert os.stat(os.path.join(bed.dir, "partitions.conf")).st_mtime_ns == mtime
    assert snmpset(bed, "%s.10.%d" % (PART, 0x300), "i", DESTROY).returncode == 0


def test_unconfigured_ports_flag(bed):
    """The seed's "Disconnect Unconfigured EndPorts": isolated makes every port
    a limited member of 0x7fff (smpquery shows 0x7fff, not 0xffff); connected
    puts the Default entry back as it was."""
    flag = POLICY + ".5.0"
    lid1 = node_guids(bed)["hca1"][1]
    before = pfile(bed)
    assert value(bed, flag) == "2"  # the bed's file: Default=0x7fff, ipoib : ALL=full
    assert port_pkeys(bed, lid1).get(0x7fff) is True
    for args, error in [((flag, "i", "3"), "wrongValue"), ((flag, "s", "x"), "wrongType"),
                        ((POLICY + ".3.0", "i", "1"), "notWritable")]:
        out = snmpset(bed, *args)
        assert out.returncode != 0 and error in out.stderr, (args, out.stderr)
    assert pfile(bed) == before
    try:
        out = snmpset(bed, flag, "i", "1")
        assert out.returncode == 0, out.stderr
        assert b"Default=0x7fff, ipoib : ALL=limited ;" in pfile(bed)
        assert value(bed, flag) == "1"
        assert wait_for(lambda: port_pkeys(bed, lid1).get(0x7fff) is False, seconds=60)
    finally:
        out = snmpset(bed, flag, "i", "2")
    assert out.returncode == 0, out.stderr
    assert pfile(bed) == before
    assert wait_for(lambda: port_pkeys(bed, lid1).get(0x7fff) is True, seconds=60)


def test_killed_during_apply_leaves_the_old_file(bed):
    """A test hook makes ibsnmpd wait between writing the new file and the
    rename; killed there, the partition file is the old one, whole."""
    cmd = os.path.join(bed.dir, "ibsnmpd.cmd")
    original = open(cmd).read()
    before = pfile(bed)
    bed.simfabric("stop", "ibsnmpd")
    with open(cmd, "w") as f:
        f.write(original.replace("SIM_HOST=", "IBSNMPD_TEST_PAUSE_BEFORE_RENAME=60 SIM_HOST="))
    try:
        bed.simfabric("start", "ibsnmpd")
        assert wait_for(lambda: bed.snmp("snmpget", POLICY + ".1.0").returncode == 0 and
                        "partitions" in bed.snmp("snmpget", POLICY + ".1.0").stdout)
        setter = subprocess.Popen(
            ["snmpset", "-v2c", "-c", bed.env["SNMP_RW_COMMUNITY"], "-t", "1", "-r", "0",
             bed.target, "%s.10.%d" % (PART, 0x400), "i", CREATE_AND_GO,
             "%s.2.%d" % (PART, 0x400), "s", "halfway"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, MIBS=""))
        pending = lambda: [n for n in os.listdir(bed.dir) if ".ibsnmpd-new." in n]
        assert wait_for(pending)
        pid = int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read())
        os.kill(pid, signal.SIGKILL)
        setter.wait()
        assert pfile(bed) == before
        assert wait_for(lambda: not os.path.exists("/proc/%d" % pid))
    finally:
        with open(cmd, "w") as f:
            f.write(original)
        bed.simfabric("start", "ibsnmpd", check=False)
    assert wait_for(lambda: bed.snmp("snmpget", POLICY + ".1.0").returncode == 0 and
                    "partitions" in bed.snmp("snmpget", POLICY + ".1.0").stdout)
    # started again, ibsnmpd removes the interrupted write's temporary file
    assert not [n for n in os.listdir(bed.dir) if ".ibsnmpd-new." in n]
    assert pfile(bed) == before
