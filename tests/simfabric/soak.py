"""A soak: everything a manager and the fabric do, for MINUTES, on a fat tree;
what ibsnmpd holds must end flat.

The bed: a generated fat tree (8 leaf and 4 spine switches, 64 HCAs),
ibsnmpd on h1-1 sweeping the counters every 2 s and rediscovering the subnet
every 10 s. Throughout: the manager of bench/faults.py (GETs every 0.1 s,
bulk walks of each tree), a trap 145 every 0.5 s, and every 5 s one of: a
partition created (createAndGo, name) or destroyed, a counter cleared on a
node (pmPortCountersTable SET), a host's link taken down or brought back
(ibsim Unlink/ReLink: traps 128, rediscoveries), a SIGHUP.

After a warm-up (WARMUP_S, in which each action has run at least twice)
and then every minute, printed: ibsnmpd's resident memory (KiB), its open
descriptors, the AgentX sessions snmpd holds (connections on its AgentX
socket), and the requests and traps so far. At the end: the growth from the
first sample to the last; exit status 1 if descriptors or sessions grew,
resident memory grew by more than RSS_SLACK_KIB (not judged for an
AddressSanitizer build: its quarantine keeps freed memory), or a kind of
action never worked.

Shared, in the test-bed package: bench/soak.py prints the figures, the
soak test (tests/integration/test_soak.py) checks what it found.

Usage: bench/soak.py MINUTES (CI: 1). Environment as bench/faults.py."""
import math
import os
import re
import signal
import subprocess
import sys
import time

from .bed import BedError, running, snmp_env as env, stop_all_on_sigterm
from .faults import SHIM, Poller, TrapSource, fat_tree, wait_subscribed

WARMUP_S = 45
RSS_SLACK_KIB = 1024  # allocator noise; a leak of one object per request is far more
ME = "h1-1"
PARTITION = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.1.1"
PM_COUNTERS = ".1.3.6.1.3.117.1.4.1"


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def agentx_sessions(bed):
    """Connections accepted on snmpd's AgentX socket (its listener not counted)."""
    path = os.path.join(bed.dir, "agentx.sock")
    with open("/proc/net/unix") as f:
        return sum(1 for l in f if l.rstrip().endswith(" " + path)) - 1


def snmpset(bed, *args):
    return subprocess.run(["snmpset", "-v2c", "-c", bed.env["SNMP_RW_COMMUNITY"], "-t", "3",
                           "-r", "0", bed.target] + list(args),
                          capture_output=True, text=True, env=env())


class Actions:
    """One action per call, in turn."""

    def __init__(self, bed):
        self.bed, self.n, self.done, self.failed = bed, 0, {}, {}
        self.linked, self.pkey, self.created = True, 0x200, False
        self.node_index = None

    def partition(self):
        """Created, then destroyed, then the next P_Key (16 in turn)."""
        p = self.pkey
        if not self.created:
            self.created = True
            return snmpset(self.bed, "%s.10.%d" % (PARTITION, p), "i", "4",
                           "%s.2.%d" % (PARTITION, p), "s", "soak%d" % p)
        self.created = False
        self.pkey = 0x200 + (p - 0x1ff) % 16
        return snmpset(self.bed, "%s.10.%d" % (PARTITION, p), "i", "6")

    def clear(self):
        """PortRcvErrors of the first node's counters row set to 0 (the node
        found once its row is there: rows come with the first discovery)."""
        if not self.node_index:
            out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On",
                                  self.bed.target, PM_COUNTERS + ".6"],
                                 capture_output=True, text=True, env=env())
            m = re.search(r"^%s\.6\.([0-9.]+) = " % re.escape(PM_COUNTERS), out.stdout, re.M)
            if not m:
                return subprocess.CompletedProcess([], 1)
            self.node_index = m.group(1)
        return snmpset(self.bed, "%s.6.%s" % (PM_COUNTERS, self.node_index), "i", "0")

    def flap(self):
        self.linked = not self.linked
        try:
            self.bed.sim('ReLink "h2-1"[1]' if self.linked else 'Unlink "h2-1"[1]')
            return subprocess.CompletedProcess([], 0)
        except (BedError, OSError):
            return subprocess.CompletedProcess([], 1)

    def sighup(self):
        os.kill(self.bed.pid, signal.SIGHUP)
        return subprocess.CompletedProcess([], 0)

    def next(self):
        self.n += 1
        name, act = (("partition", self.partition), ("clear", self.clear),
                     ("link", self.flap), ("partition", self.partition),
                     ("sighup", self.sighup))[self.n % 5]
        out = act()
        key = "ok" if out.returncode == 0 else "failed"
        (self.done if key == "ok" else self.failed)[name] = \
            (self.done if key == "ok" else self.failed).get(name, 0) + 1


def sample(bed, poller, traps, t0):
    traps.collect()
    return {"t": round(time.monotonic() - t0), "rss_kib": bed.rss_kib(), "fds": fds(bed.pid),
            "agentx": agentx_sessions(bed), "gets": len(poller.gets),
            "gets_ok": sum(1 for g in poller.gets if g[2]), "walks": len(poller.walks),
            "traps_sent": len(traps.sent), "traps_arrived": len(traps.arrived)}


def run(minutes, out=print):
    """The soak for minutes after the warm-up, printing a sample a minute
    with out(); a dict: the samples, what grew, whether it ended flat and
    which kinds of action never worked."""
    topo = fat_tree(8, 4, 8)
    conf = ["saKey 0x1", "notificationLimit 0 60", "cacheLifetime pmCounters 2",
            "pmDiscoveryInterval 10", "partitionFile {dir}/partitions.conf",
            "opensmPidFile {dir}/opensm.pid", "partitionVerifyDelay 1"]
    samples = []
    try:
        with running(topo, ME, conf=conf, preload=SHIM) as bed:
            wait_subscribed(bed)
            poller, traps, actions = Poller(bed), TrapSource(bed), Actions(bed)
            poller.start()
            traps.start()
            try:
                t0 = time.monotonic()
                at = [WARMUP_S + 60 * i for i in range(int(math.ceil(minutes)))]
                at.append(WARMUP_S + minutes * 60)
                out("%6s %9s %5s %7s %9s %7s %11s" % ("t s", "RSS KiB", "fds", "AgentX",
                                                     "GETs ok", "walks", "traps in"))
                while at:
                    if time.monotonic() - t0 >= at[0]:
                        at.pop(0)
                        s = sample(bed, poller, traps, t0)
                        samples.append(s)
                        out("%6d %9d %5d %7d %4d/%-4d %7d %5d/%-5d" % (
                            s["t"], s["rss_kib"], s["fds"], s["agentx"], s["gets_ok"],
                            s["gets"], s["walks"], s["traps_arrived"], s["traps_sent"]))
                        continue
                    actions.next()
                    time.sleep(max(0.0, min(5.0, t0 + at[0] - time.monotonic())))
            finally:
                poller.stop = traps.stop = True
                poller.join()
                traps.join()
            out("actions done: %s; failed: %s" % (actions.done, actions.failed or "none"))
            errors = bed.sanitizer_reports()
            with open("/proc/%d/maps" % bed.pid) as f:
                sanitized = "libasan" in f.read()
            for e in errors:
                out(e)
    finally:
        os.unlink(topo)
    first, last = samples[0], samples[-1]
    grew = {k: last[k] - first[k] for k in ("rss_kib", "fds", "agentx")}
    out("from %d s to %d s: RSS %+d KiB, descriptors %+d, AgentX sessions %+d" % (
        first["t"], last["t"], grew["rss_kib"], grew["fds"], grew["agentx"]))
    rss_flat = grew["rss_kib"] <= RSS_SLACK_KIB
    if sanitized:
        out("resident memory not judged: an AddressSanitizer build (its quarantine keeps "
            "freed memory)")
        rss_flat = True
    flat = grew["fds"] <= 0 and grew["agentx"] <= 0 and rss_flat and last["agentx"] == 1 \
        and not errors
    never = sorted(set(actions.failed) - set(actions.done))  # a kind that never worked
    out("flat" if flat else "NOT FLAT")
    if never:
        out("these actions never worked: %s" % ", ".join(never))
    return {"samples": samples, "grew": grew, "flat": flat, "never_worked": never,
            "sanitizer_reports": errors}


def main():
    minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 1
    stop_all_on_sigterm()
    res = run(minutes, out=lambda text: print(text, flush=True))
    sys.exit(0 if res["flat"] and not res["never_worked"] else 1)


if __name__ == "__main__":
    main()
