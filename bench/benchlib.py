"""What the benchmarks share beyond the test-bed package (tests/simfabric,
which runs their beds): snmpget, a timed walk, a second ibsnmpd."""
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing left in the checkout
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from simfabric import TOP, TOPOLOGIES, running, snmp_env as env  # noqa: E402,F401
from simfabric import stop_all_on_sigterm as stop_on_sigterm  # noqa: E402,F401
from simfabric.manager import timed_requests  # noqa: E402

TestBed = running  # with TestBed(topology, node, conf=...) as bed: a simfabric.Bed
__all__ = ["TOP", "TOPOLOGIES", "TestBed", "env", "stop_on_sigterm", "STATS", "MADS_SENT",
           "SMA_GROUPS", "PM_TABLE", "snmpget", "walk", "spawn_subagent", "bare_pipelined",
           "sweep_ports", "get_latencies", "group_index", "sweep_durations", "log_match",
           "next_sweep", "fabricsim_answered"]

STATS = ".1.3.6.1.4.1.8072.9999.9999.117.1.1"
PM_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1"  # ibsnmpdPmPortEntry (64-bit counters)
MADS_SENT = STATS + ".1.0"
SMA_GROUPS = ("nodeInfo", "switchInfo", "portInfo", "guidInfo", "pKeyTable", "slToVlTable",
              "vlArbTable", "linearForwarding", "multicastForwarding", "randomForwarding",
              "smInfo", "vendorDiag", "ledInfo")


GROUP_NAME, GROUP_REFRESHES, GROUP_DURATION = STATS + ".6.1.2", STATS + ".6.1.5", STATS + ".6.1.7"


def log_match(path, pattern, seconds):
    """The first match of pattern in the file at path, waiting up to seconds
    for it to appear; exits the bench if it does not."""
    for _ in range(seconds * 2):
        try:
            with open(path) as f:
                m = re.search(pattern, f.read())
            if m:
                return m
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit("%s: no '%s' after %d s" % (path, pattern, seconds))


def group_index(target, name):
    """ibsnmpdCacheIndex of the cache group called name (ibsnmpdCacheName)."""
    out = subprocess.run(["snmpwalk", "-v2c", "-c", "public", "-On", "-Oq", target, GROUP_NAME],
                         capture_output=True, text=True, env=env()).stdout
    for line in out.splitlines():
        oid, _, value = line.partition(" ")
        if value.strip('"') == name:
            return int(oid.rsplit(".", 1)[1])
    sys.exit("no cache group %s at %s" % (name, target))


def sweep_durations(target, index, count):
    """The next `count` refreshes' durations (s) of cache group `index`
    (ibsnmpdCacheLastDuration, read as ibsnmpdCacheRefreshes moves)."""
    seen, out = snmpget(target, "%s.%d" % (GROUP_REFRESHES, index)), []
    deadline = time.monotonic() + 300 * count
    while len(out) < count and time.monotonic() < deadline:
        time.sleep(0.2)
        n = snmpget(target, "%s.%d" % (GROUP_REFRESHES, index))
        if n > seen:
            seen = n
            out.append(snmpget(target, "%s.%d" % (GROUP_DURATION, index)) / 1000.0)
    return out


def next_sweep(target, index):
    """Waits for the next refresh of group `index`: (its duration in s, the
    MADs sent from the refresh before to this one)."""
    refreshes = "%s.6.1.5.%d" % (STATS, index)
    seen, mads = snmpget(target, refreshes), snmpget(target, MADS_SENT)
    while True:
        time.sleep(0.1)
        if snmpget(target, refreshes) > seen:
            return (snmpget(target, "%s.6.1.7.%d" % (STATS, index)) / 1000.0,
                    snmpget(target, MADS_SENT) - mads)


def snmpget(target, oid):
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", target, oid],
                         capture_output=True, text=True, env=env())
    return int(out.stdout.split()[-1])


def walk(target, oid):
    """snmpbulkwalk -Cr50: (varbinds, seconds)."""
    started = time.perf_counter()
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr50", "-t", "20",
                          target, oid], capture_output=True, text=True, env=env())
    took = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit("walk of %s at %s failed: %s" % (oid, target, out.stderr))
    return out.stdout.count("\n"), took


def spawn_subagent(bed, node, conf=()):
    """Beside a direct-mode bed's ibsnmpd, a second one attached to `node` as
    the bed's snmpd's AgentX subagent (the default mode; no node contexts:
    the direct one has them)."""
    path = os.path.join(bed.dir, "subagent.conf")
    with open(path, "w") as f:
        f.write("agentxPingInterval 2\nmadTimeout 500\nnodeContextTypes none\n"
                "dcbxEnable no\nfabricStateFile %s/subagent-links.state\n%s\n"
                % (bed.dir, "\n".join(conf)))
    build = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
    bed.spawn("subagent", os.path.join(build, "ibsnmpd"), "-f", "-Lf",
              os.path.join(bed.dir, "subagent.log"), "-c", path, "-x",
              "unix:%s/agentx.sock" % bed.dir, node=node)


def sweep_ports(target):
    """The ports a counter sweep reads, as bench-pipelined-pma takes them:
    "LID PORT" lines from the LID column of ibsnmpd's 64-bit table."""
    lid_col = PM_TABLE + ".1.4."
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr50", "-t", "20",
                          target, lid_col[:-1]], capture_output=True, text=True,
                         env=env()).stdout
    pairs = []
    for line in out.splitlines():
        name, _, value = line.partition(" = ")
        if name.startswith(lid_col):
            pairs.append("%s %s\n" % (value.split()[-1], name.rsplit(".", 1)[1]))
    return pairs


def bare_pipelined(bed, target, outstanding=256, runs=3, pairs=None, attrs="ext"):
    """bench-pipelined-pma (bench/pipelined_pma.c), the counter sweep's peer:
    PortCounters and PortCountersExtended (attrs "fec": and
    PortExtendedSpeedsCounters) to every port of ibsnmpd's 64-bit table (its
    LID column, or `pairs` read before), `outstanding` in flight, `runs`
    times; a list of (seconds, answers, sent)."""
    import re
    if pairs is None:
        pairs = sweep_ports(target)
    bare = os.path.join(os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build")),
                        "bench-pipelined-pma")
    res_all = []
    for _ in range(runs):
        res = subprocess.run(bed.command(bare, str(outstanding), attrs), input="".join(pairs),
                             capture_output=True, text=True, env=env())
        m = re.search(r"answers (\d+) of (\d+) in ([\d.]+) s", res.stdout)
        if not m:
            raise SystemExit("bench-pipelined-pma: " + res.stdout + res.stderr)
        res_all.append((float(m.group(3)), int(m.group(1)), int(m.group(2))))
    return res_all


def get_latencies(target, oid, seconds, interval=0.05, community="public", sent_at=None):
    """A manager polling: an SNMPv2c GETNEXT of oid every `interval` s for
    `seconds` s, each timed from send to answer over one UDP socket (the
    test-bed package's timed_requests). Returns (latencies in s,
    unanswered); with a list as sent_at, appends to it each answered
    request's send time (time.monotonic())."""
    end = time.monotonic() + seconds
    res = timed_requests(target, [oid], lambda: time.monotonic() >= end, interval,
                         community=community)
    if sent_at is not None:
        sent_at.extend(t for t, took in res if took is not None)
    return [took for _, took in res if took is not None], sum(1 for _, took in res if took is None)


def fabricsim_answered(bed):
    """fabricsim's counts of what it answered so far (simfabric's Bed.answered)"""
    return bed.answered()
