"""Faults around the daemon: its children (the discovery helper, opensm's
reload command) and a master agent that hangs.

- A child gets stdin, stdout and stderr only: not the AgentX socket, the
  umad device, the netlink socket (seen by the child itself in /proc).
- A discovery helper that hangs is killed at its deadline (the discovery
  interval), one that dies is reported; either way the previous node list is
  kept and the agent serves on.
- snmpd stopped (SIGSTOP) for 30 s: ibsnmpd's own work goes on (the counter
  sweeps are published as often as without the stop), and after SIGCONT it
  is served again within seconds.
- The partition file replaced behind ibsnmpd's back: by another policy (served),
  by a FIFO or a directory (not served, one log line, never blocking)."""
import os
import re
import signal
import stat
import time

import pytest

from conftest import ibsnmpd_bin, start_testbed, stop_testbed, wait_for

PM_PORTS = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1.4"  # ibsnmpdPmLid of every port
PARTITION_POLICY = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.3"
NODE_TYPE = ".1.3.6.1.3.117.3.1.1.4.0"


def write_script(path, text):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + text)
    os.chmod(path, stat.S_IRWXU)


def test_children_inherit_no_descriptor_of_the_daemon():
    """opensmReloadCommand lists its own descriptors after a partition SET."""
    bed = None
    try:
        bed = start_testbed(node="hca1", extra_conf=[
            "partitionFile {dir}/partitions.conf",
            "opensmReloadCommand ls -l /proc/self/fd/ > {dir}/child-fds 2>&1"])
        assert wait_for(lambda: bed.serves(PARTITION_POLICY + ".5.0"), seconds=30)
        out = bed.snmp("snmpset", PARTITION_POLICY + ".5.0", "i", "1",
                       community=bed.env["SNMP_RW_COMMUNITY"])
        assert out.returncode == 0, out.stderr
        fds = os.path.join(bed.dir, "child-fds")
        assert wait_for(lambda: os.path.exists(fds) and os.path.getsize(fds) > 0, seconds=20)
        listing = open(fds).read()
        # ls's own: 0-2 and the directory it reads; nothing of ibsnmpd's
        numbers = sorted(int(n) for n in re.findall(r" (\d+) -> ", listing))
        assert numbers[:3] == [0, 1, 2] and len(numbers) <= 4, listing
        assert "socket:" not in listing and "infiniband" not in listing, listing
    finally:
        if bed:
            stop_testbed(bed)


@pytest.fixture
def helper_bed():
    """The discovery helper behind a wrapper that, as a file in the bed says,
    runs the real helper, hangs, or dies."""
    bed = None
    real = os.path.join(os.path.dirname(ibsnmpd_bin()), "ibsnmpd-discover")
    import tempfile
    d = tempfile.mkdtemp(prefix="ibsnmpd-helper.")
    mode = os.path.join(d, "mode")
    wrapper = os.path.join(d, "discover")
    write_script(wrapper, 'case "$(cat %s 2>/dev/null)" in\n'
                          '  hang) exec sleep 3600 ;;\n'
                          '  die) echo "node 0000000000000001 2" ; exit 3 ;;\n'
                          '  *) exec %s "$@" ;;\n'
                          'esac\n' % (mode, real))
    try:
        bed = start_testbed(node="hca1", extra_conf=["pmDiscoveryHelper " + wrapper,
                                                     "pmDiscoveryInterval 10",
                                                     "cacheLifetime pmCounters 2"])
        bed.mode = mode
        yield bed
    finally:
        if bed:
            stop_testbed(bed)
        import shutil
        shutil.rmtree(d, ignore_errors=True)


def test_a_hung_or_dying_discovery_helper_keeps_the_node_list(helper_bed):
    bed = helper_bed
    assert wait_for(lambda: len(bed.walk(PM_PORTS)) > 0, seconds=60)
    ports = len(bed.walk(PM_PORTS))
    with open(bed.mode, "w") as f:
        f.write("hang")
    # the next discovery starts within 10 s and is killed 10 s later
    assert wait_for(lambda: "did not finish in time: killed" in bed.log("ibsnmpd.log"),
                    seconds=40), bed.log("ibsnmpd.log")
    assert wait_for(lambda: "the helper hung and was killed" in bed.log("ibsnmpd.log"),
                    seconds=10)
    assert len(bed.walk(PM_PORTS)) == ports  # the previous node list, still swept
    with open(bed.mode, "w") as f:
        f.write("die")
    assert wait_for(lambda: "(the helper failed)" in bed.log("ibsnmpd.log"), seconds=30)
    assert len(bed.walk(PM_PORTS)) == ports
    # one line per failed discovery, not one per MAD
    assert bed.log("ibsnmpd.log").count("did not finish in time") == 1
    assert bed.get(NODE_TYPE)[NODE_TYPE][1] == "1"


def sweeps(bed):
    return bed.log("ibsnmpd.log").count("PM counters sweep refreshed")


def test_a_hung_master_does_not_stop_the_daemon():
    """snmpd stopped for 30 s: the counter sweeps (every 2 s) go on at their
    pace; after SIGCONT ibsnmpd is served again within seconds."""
    bed = start_testbed(node="hca1", debug="ibsnmpd:cache",
                        extra_conf=["cacheLifetime pmCounters 2"])
    try:
        assert wait_for(lambda: sweeps(bed) >= 2, seconds=60)
        snmpd = int(open(os.path.join(bed.dir, "snmpd.pid")).read())
        before = sweeps(bed)
        os.kill(snmpd, signal.SIGSTOP)
        try:
            time.sleep(30)
            during = sweeps(bed) - before
        finally:
            os.kill(snmpd, signal.SIGCONT)
        # 15 at a 2 s lifetime; a main loop held by synchronous AgentX pings
        # (6 s each with net-snmp's defaults) would manage a handful
        print("sweeps in 30 s with snmpd stopped: %d" % during)
        assert during >= 11, "only %d sweeps in 30 s with snmpd stopped" % during
        resumed = time.monotonic()
        assert wait_for(lambda: bed.snmp("snmpget", NODE_TYPE).returncode == 0 and
                        "No Such" not in bed.snmp("snmpget", NODE_TYPE).stdout, seconds=30)
        assert time.monotonic() - resumed < 20
    finally:
        stop_testbed(bed)


PARTITIONS = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.1.1.2"  # ibPartitionName
PARTITION_ROW_STATUS = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.1.1.10"


def served_partitions(bed):
    out = bed.snmp("snmpwalk", PARTITIONS)
    assert out.returncode == 0, out.stderr  # answered, whatever the file
    return sorted(int(l.split(" = ")[0].rsplit(".", 1)[1]) for l in out.stdout.splitlines()
                  if " = " in l and PARTITIONS in l and "No Such" not in l)


def replace(path, make):
    """Puts something new at path behind ibsnmpd's back, as an editor or a
    configuration tool would: made beside it, renamed over it."""
    tmp = path + ".new"
    make(tmp)
    os.rename(tmp, path)


def test_a_partition_file_replaced_behind_the_daemons_back():
    """Replaced by another policy: served within seconds. Replaced by a FIFO
    or a directory: not served, SETs refused, one log line each, and the
    agent answers throughout (a FIFO opened for reading must not block it).
    A policy put back is served again."""
    bed = start_testbed(node="hca2", extra_conf=["partitionFile {dir}/partitions.conf"])
    path = os.path.join(bed.dir, "partitions.conf")

    def text(body):
        def make(tmp):
            with open(tmp, "w") as f:
                f.write(body)
        return make

    def remove_dir(p):
        if os.path.isdir(p):
            os.rmdir(p)
    try:
        # (the Default partition is no row of the table)
        replace(path, text("Default=0x7fff : ALL=full ;\nstorage=0x0123 : ALL=full ;\n"))
        assert wait_for(lambda: served_partitions(bed) == [0x123], seconds=30)

        for kind, make in (("FIFO", os.mkfifo), ("directory", os.mkdir)):
            noted = lambda: bed.log("ibsnmpd.log").count("not a regular file")
            before = noted()
            if kind == "directory":
                os.unlink(path)  # rename() puts no directory over a FIFO
            replace(path, make)
            assert wait_for(lambda: noted() == before + 1, seconds=30), kind
            assert served_partitions(bed) == [], kind
            time.sleep(6)  # the file is looked at every 5 s: still one line
            assert noted() == before + 1, kind
            out = bed.snmp("snmpset", "%s.%d" % (PARTITION_ROW_STATUS, 0x456), "i", "4",
                           community=bed.env["SNMP_RW_COMMUNITY"])
            assert out.returncode != 0, kind
            assert bed.get(NODE_TYPE)[NODE_TYPE][1] == "1"  # the agent answers

        remove_dir(path)
        replace(path, text("Default=0x7fff : ALL=full ;\nback=0x0124 : ALL=full ;\n"))
        assert wait_for(lambda: served_partitions(bed) == [0x124], seconds=30)
    finally:
        remove_dir(path)
        stop_testbed(bed)
