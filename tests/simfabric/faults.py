"""Faults with figures: what a manager sees while the fabric, the master
agent, the SM or the daemon's own inputs fail, one fault after the other on
one test bed.

The bed: a generated fat tree (4 leaf and 2 spine switches, 12 HCAs; opensm
on spine1), ibsnmpd on h1-1 (behind leaf1) sweeping every port's counters
every 2 s. Throughout, a manager polls: a GET of three objects every 0.1 s
and, every tenth time, a bulk walk of one of SMA-MIB, IB-PM-MIB and
IBSNMPD-MIB (in turn); and a trap 145 with its own System Image GUID is
injected at h4-3 every 0.5 s (opensm -> SA Report -> ibsnmpd -> snmpd ->
snmptrapd).

Each fault: 3 s as usual, the fault for HOLD seconds (the hung master: 30 s),
then it is removed and the bed watched until it has recovered (ibsnmpd
answers, a trap sent after the removal arrives, and what the fault touched is
right again: no stale port, the node list rediscovered, the partition policy
served). Printed per fault:
- GETs answered of sent and walks complete of started, from the fault to the
  recovery; the longest GET (ms) and, for comparison, before the fault;
- the time from the removal to the recovery (s);
- traps lost while the fault held (the path was broken: expected for some),
  and lost after the recovery (must be 0);
- the log lines ibsnmpd wrote meanwhile: how many, how many kinds (digits
  folded), and the kinds.

The faults, the manager and the trap source live here, in the test-bed
package: bench/faults.py prints the figures (run(), print_table()), the
fault matrix test (tests/integration/test_fault_matrix.py) checks them.

Three more run on fabricsim beds: the fabric protected by M_Key under an
ibsnmpd without the key, then unprotected (ibsim has no M_Key; its figures
add the M_Key violations ibsnmpd caused), and, on a rail layout of 16
servers of 8 HCAs, a rail dead and a storm of 64 HCAs' links down and up.

Usage: bench/faults.py [--hold S] [--stop-hold S] [--only NAME[,NAME...]] [--json FILE]
Environment: IBSNMPD_BIN (else build/ibsnmpd), SIM_TRAP_INJECTOR and
SIM_ISSM_SHIM (else under build/tests)."""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from .bed import TOP, running, snmp_env as env, stop_all_on_sigterm
from .manager import (TRAP_OID, generated, guid_index, link_states, notifications,
                      perf_counters)

BUILD = os.path.join(TOP, "build")
INJECTOR = os.environ.get("SIM_TRAP_INJECTOR") or os.path.join(BUILD, "tests", "sim-trap-injector")
SHIM = os.environ.get("SIM_ISSM_SHIM") or os.path.join(BUILD, "tests", "sim_issm_shim.so")
GEN_FATTREE = os.path.join(TOP, "tests", "topologies", "gen-fattree.py")

NODE_TYPE = ".1.3.6.1.3.117.3.1.1.4.0"
SYS_UPTIME = ".1.3.6.1.2.1.1.3.0"
MADS_SENT = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.1.0"
TREES = (".1.3.6.1.3.117.3", ".1.3.6.1.3.117.1", ".1.3.6.1.4.1.8072.9999.9999.117")
# a bigger bed's manager walks what does not grow with it: SMA-MIB and
# ibsnmpdStats (IB-PM-MIB of 3,000 ports is a minute's walk through snmpd)
SMALL_TREES = (".1.3.6.1.3.117.3", ".1.3.6.1.4.1.8072.9999.9999.117.1.1")
PM_STALE = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1.25"
PARTITION_NAME = ".1.3.6.1.4.1.8072.9999.9999.117.3.1.1.1.2"
SM_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.12.15.1"  # ibsnmpdRouteSmEntry
MASTER_CHANGED = ".1.3.6.1.4.1.8072.9999.9999.117.0.21"  # ibsnmpdMasterSmChanged
GUID_BASE = 0x6000000000000000
GUID_RE = re.compile(r"117\.3\.1\.1\.6\.0 = Hex-STRING: ([0-9A-F ]+)")
ME, FAR_LEAF, TRAP_NODE = "h1-1", "leaf4", "h4-3"
BEFORE_S, AFTER_S, LATE_S = 3, 5, 3  # as usual before; watched after the recovery; late traps
LOST_LOOK_S = 15  # traps lost after a recovery: looked for this much longer, to say which
REPORT_LIMIT_S = 60  # for ibsnmpd to serve a fault that says it must


def snmp(bed, tool, *args, timeout=1, retries=0):
    return subprocess.run([tool, "-v2c", "-c", "public", "-On", "-t", str(timeout),
                           "-r", str(retries),
                           bed.target] + list(args), capture_output=True, text=True, env=env())


def answered(out):
    """whether net-snmp's tool got its answers: no timeout, and no error
    status (snmpd answers genErr when its subagent does not answer in
    time: that is no answer of ibsnmpd's)"""
    text = out.stdout + out.stderr
    return "Timeout" not in text and "Error in packet" not in text


class Poller(threading.Thread):
    """The manager: (start, seconds, answered) of every GET and walk; why
    each walk that failed did (failed_walks: start, seconds, tree, what
    snmpbulkwalk said)."""

    def __init__(self, bed, trees=TREES, get_retries=0, walk_retries=1):
        super().__init__(daemon=True)
        self.bed, self.gets, self.walks, self.stop = bed, [], [], False
        self.trees, self.failed_walks = trees, []
        self.get_retries, self.walk_retries = get_retries, walk_retries

    def run(self):
        n = 0
        while not self.stop:
            n += 1
            t = time.monotonic()
            if n % 10 == 0:
                tree = self.trees[(n // 10) % len(self.trees)]
                # a walk is some requests in a row, each sent by a process
                # the machine's load may hold back: one retry, as managers
                # do; a stall of the agent shows in the GETs (no retry)
                out = snmp(self.bed, "snmpbulkwalk", "-Cr25", tree, retries=self.walk_retries)
                ok = out.returncode == 0 and answered(out)
                took = time.monotonic() - t
                self.walks.append((t, took, ok))
                if not ok:
                    self.failed_walks.append((t, round(took, 2), tree, out.returncode,
                                              out.stderr.strip()[-300:],
                                              out.stdout.count("\n")))
            else:
                out = snmp(self.bed, "snmpget", NODE_TYPE, SYS_UPTIME, MADS_SENT,
                           retries=self.get_retries)
                ok = out.returncode == 0 and answered(out) and "No Such" not in out.stdout
                self.gets.append((t, time.monotonic() - t, ok))
            time.sleep(0.1)


class TrapSource(threading.Thread):
    """A trap 145 every 0.5 s, each with its own System Image GUID; notes
    when each was sent and when it appeared in snmptrapd's log."""

    def __init__(self, bed, node=None):
        super().__init__(daemon=True)
        self.bed, self.sent, self.stop = bed, {}, False
        self.node = node or TRAP_NODE
        self.arrived, self.log_off = {}, 0
        self.lock = threading.Lock()  # collect() is called from two threads

    def run(self):
        k = 0
        while not self.stop:
            k += 1
            t = time.monotonic()
            subprocess.run(self.bed.command(INJECTOR, "-n", "1", "145", "lid=1",
                                            "sysguid=0x%x" % (GUID_BASE + k), node=self.node),
                           capture_output=True, env=env())
            self.sent[k] = t
            self.collect()
            time.sleep(max(0.0, 0.5 - (time.monotonic() - t)))

    def collect(self):
        with self.lock:
            self.collect_locked()

    def collect_locked(self):
        try:
            with open(os.path.join(self.bed.dir, "traps.log"), "rb") as f:
                f.seek(self.log_off)
                text = f.read()
        except OSError:
            return
        end = text.rfind(b"\n") + 1
        self.log_off += end
        now = time.monotonic()
        for m in GUID_RE.finditer(text[:end].decode(errors="replace")):
            k = int(m.group(1).replace(" ", ""), 16) - GUID_BASE
            self.arrived.setdefault(k, now)


# ---- what "recovered" means beyond "answers and forwards traps" ----------------------

def no_stale_port(bed):
    # a walk of every port: some requests in a row, each one the machine's
    # load may hold back (retried, as the manager's walks are)
    out = snmp(bed, "snmpbulkwalk", "-Cr50", PM_STALE, timeout=2, retries=2)
    values = [l.rsplit(" ", 1)[-1] for l in out.stdout.splitlines() if " = " in l]
    return out.returncode == 0 and values and all(v == "2" for v in values)


def rediscovered(since):
    return lambda bed: any("subnet discovered" in l for l in bed.log_since(since))


def smps_again(since):
    """the M_Key guard's question answered again, and every port fresh"""
    return lambda bed: any("answers SMPs again" in l for l in bed.log_since(since)) and \
        no_stale_port(bed)


def partitions_served(names):
    def check(bed):
        out = snmp(bed, "snmpwalk", PARTITION_NAME, timeout=2)
        return sorted(re.findall(r'"([^"]*)"', out.stdout)) == sorted(names)
    return check


# ---- the faults: (name, apply, remove, extra recovery check) ---------------------------

def helper_mode(bed, mode):
    with open(os.path.join(bed.dir, "helper-mode"), "w") as f:
        f.write(mode)


def write_policy(bed, make):
    path = os.path.join(bed.dir, "partitions.conf")
    make(path + ".new")
    os.rename(path + ".new", path)


def policy_text(text):
    def make(p):
        with open(p, "w") as f:
            f.write(text)
    return make


DEFAULT_POLICY = "Default=0x7fff, ipoib : ALL=full ;\n"  # not a row: Default is no table's
NEW_POLICY = DEFAULT_POLICY + "storage=0x0123 : ALL=full ;\n"
RESTORED_POLICY = DEFAULT_POLICY + "restored=0x0124 : ALL=full ;\n"


def faults(hold, stop_hold):
    sigstop = {}

    def new_sm(bed):
        """opensm on spine2; returns when it says it is master (sminfo)."""
        bed.start("opensm", node="spine2")
        for _ in range(300):
            out = subprocess.run(bed.command("sminfo", node=TRAP_NODE), capture_output=True,
                                 text=True, env=env())
            if "SMINFO_MASTER" in out.stdout and "sm lid 1 " not in out.stdout:
                return time.monotonic()
            time.sleep(0.2)
        return None

    def sm_stopped(bed):
        sigstop["traps"] = len(notifications(bed))
        bed.stop("opensm")

    def new_master_told(bed):
        """the fault's effects told before the next fault begins (they
        bled into it: "master SM is now ..." counted as the next one's): the
        master sminfo finds is not LID 1, ibsnmpd serves it as master
        (ibsnmpdRouteSmTable) and snmptrapd logged ibsnmpdMasterSmChanged
        since the SM was stopped"""
        out = subprocess.run(bed.command("sminfo", node=TRAP_NODE), capture_output=True,
                             text=True, env=env())
        m = re.search(r"sm lid (\d+) .*SMINFO_MASTER", out.stdout)
        if not m or m.group(1) == "1":
            return False
        got = snmp(bed, "snmpbulkwalk", "-Cr25", SM_TABLE, timeout=2, retries=2)
        rows = {}
        for line in got.stdout.splitlines():
            k = re.match(r"^%s\.(\d+)\.([\d.]+) = \w+: (.*)$" % re.escape(SM_TABLE), line)
            if k:
                rows.setdefault(k.group(2), {})[int(k.group(1))] = k.group(3)
        served = any(r.get(3) == m.group(1) and r.get(4, "").endswith("5") for r in rows.values())
        told = any(n.get(TRAP_OID) == MASTER_CHANGED
                   for n in notifications(bed)[sigstop.get("traps", 0):])
        return served and told

    def kill_snmpd(bed):
        os.kill(bed.pid_of("snmpd"), signal.SIGKILL)

    def stop_snmpd(bed):
        sigstop["pid"] = bed.pid_of("snmpd")
        os.kill(sigstop["pid"], signal.SIGSTOP)

    def sighup_50(bed):
        for _ in range(50):
            os.kill(bed.pid, signal.SIGHUP)
            time.sleep(0.02)

    def fifo_policy(bed):
        path = os.path.join(bed.dir, "partitions.conf")
        os.mkfifo(path + ".new")
        os.rename(path + ".new", path)

    return [
        ("mad-loss-30%-own-port", hold,
         lambda b: b.sim('Error "%s"[1] 30' % ME), lambda b: b.sim('Error "%s"[1] 0' % ME),
         no_stale_port),
        ("mad-loss-100%-far-leaf", hold,
         lambda b: b.sim('Error "%s"[0] 100' % FAR_LEAF),
         lambda b: b.sim('Error "%s"[0] 0' % FAR_LEAF), no_stale_port),
        ("snmpd-sigkill", hold, kill_snmpd, lambda b: b.start("snmpd"), None),
        # stopped as a package upgrade or systemctl stops it: what ibsnmpd
        # would have sent meanwhile is kept and sent when it is back
        ("snmpd-outage", stop_hold, lambda b: b.stop("snmpd"), lambda b: b.start("snmpd"), None),
        ("snmpd-sigstop", stop_hold, stop_snmpd,
         lambda b: os.kill(sigstop["pid"], signal.SIGCONT), None),
        ("sm-failover", hold, sm_stopped, new_sm, new_master_told),
        ("own-link-down", hold, lambda b: b.sim('Unlink "%s"[1]' % ME),
         lambda b: b.sim('ReLink "%s"[1]' % ME), no_stale_port),
        ("sighup-x50-in-sweeps", 1, sighup_50, lambda b: None, None),
        ("discovery-helper-hangs", max(hold, 25), lambda b: helper_mode(b, "hang"),
         lambda b: helper_mode(b, "ok"), "rediscovered"),
        ("discovery-helper-dies", max(hold, 12), lambda b: helper_mode(b, "die"),
         lambda b: helper_mode(b, "ok"), "rediscovered"),
        ("partition-file-fifo", hold, fifo_policy,
         lambda b: write_policy(b, policy_text(RESTORED_POLICY)), partitions_served(["restored"])),
        ("partition-file-replaced", 1, lambda b: write_policy(b, policy_text(NEW_POLICY)),
         lambda b: None, partitions_served(["storage"])),
    ]


def kinds(lines):
    """Log lines with their numbers folded: one kind per condition."""
    seen = {}
    for l in lines:
        k = re.sub(r"0x[0-9a-fA-F]+|\d+(\.\d+)?", "#", l)
        seen[k] = seen.get(k, 0) + 1
    return seen


def run_fault(bed, poller, traps, name, hold, apply, remove, check, reported=None):
    """One fault: made (apply), held `hold` s, and where reported(bed) is
    given, held until ibsnmpd serves it (at most REPORT_LIMIT_S: not seen,
    the result's reported_s is None), then removed (remove) and watched
    until it has recovered (check, besides a GET answered and a trap
    through)."""
    before_t = time.monotonic()
    time.sleep(BEFORE_S)
    log_off = bed.log_size()
    t_apply = time.monotonic()
    apply(bed)
    t_reported = None
    if reported:
        while time.monotonic() - t_apply < REPORT_LIMIT_S:
            if reported(bed):
                t_reported = time.monotonic()
                break
            time.sleep(0.2)
    time.sleep(max(0.0, t_apply + hold - time.monotonic()))
    t_remove = time.monotonic()
    t_ready = remove(bed)  # the SM failover: when the new SM is master
    t_ready = t_ready if isinstance(t_ready, float) else None
    if check == "rediscovered":
        check = rediscovered(bed.log_size())
    elif check == "smps-again":
        check = smps_again(log_off)
    recovered, missing = None, []
    while time.monotonic() - t_remove < 120:
        now = time.monotonic()
        traps.collect()
        answered = [g for g in poller.gets if g[0] > t_remove and g[2]]
        trap_back = [k for k, t in traps.sent.items() if t > t_remove and k in traps.arrived]
        checked = answered and trap_back and (check is None or check(bed))
        # what was still missing at the last look (said when it never came)
        missing = [what for what, ok in (("a GET answered", answered),
                                         ("a trap through", trap_back),
                                         ("the fault's own check", checked)) if not ok]
        if checked:
            first_trap = min(traps.arrived[k] for k in trap_back)
            recovered = max(answered[0][0] + answered[0][1], first_trap, now if check else 0)
            break
        time.sleep(0.2)
    t_end = recovered or time.monotonic()
    time.sleep(AFTER_S)  # traps sent now must all arrive
    t_after = time.monotonic()
    time.sleep(LATE_S)  # late ones
    traps.collect()
    after = [k for k, t in traps.sent.items() if recovered and recovered < t <= t_after]
    lost_after = [k for k in after if k not in traps.arrived]
    if lost_after:
        # lost, or later than LATE_S: which, and how late (they count as
        # lost either way; this only says what the failure was)
        time.sleep(LOST_LOOK_S)
        traps.collect()
    window = [g for g in poller.gets if t_apply <= g[0] <= t_end]
    walks = [w for w in poller.walks if t_apply <= w[0] <= t_end]
    before = [g[1] for g in poller.gets if before_t <= g[0] < t_apply]
    during = [k for k, t in traps.sent.items() if t_apply <= t < t_remove]
    since_ready = [k for k, t in traps.sent.items() if t_ready and t_ready <= t <= t_after]
    lines = bed.log_since(log_off)
    r = {
        "fault": name, "hold_s": hold,
        "gets_sent": len(window), "gets_answered": sum(1 for g in window if g[2]),
        "walks_started": len(walks), "walks_complete": sum(1 for w in walks if w[2]),
        "walks_failed": [f[1:] for f in poller.failed_walks if t_apply <= f[0] <= t_end],
        "longest_get_ms": round(max([g[1] for g in window] or [0]) * 1000),
        "longest_get_before_ms": round(max(before or [0]) * 1000),
        "median_get_before_ms": round(statistics.median(before) * 1000, 1) if before else None,
        "recovery_s": round(recovered - t_remove, 1) if recovered else None,
        "not_recovered": missing if not recovered else [],
        "traps_sent_during": len(during),
        "traps_lost_during": sum(1 for k in during if k not in traps.arrived),
        "traps_sent_after": len(after),
        "traps_lost_after": len(lost_after),
        # each lost one: sent how long after the recovery, and arrived how
        # long after it was sent (None: not within LOST_LOOK_S more)
        "traps_lost_after_timing": [
            (round(traps.sent[k] - recovered, 1),
             round(traps.arrived[k] - traps.sent[k], 1) if k in traps.arrived else None)
            for k in lost_after],
        "log_lines": len(lines), "log_kinds": kinds(lines),
    }
    if reported:  # from the fault to ibsnmpd serving it
        r["reported_s"] = round(t_reported - t_apply, 1) if t_reported else None
    if t_ready:  # from the new SM's mastership to traps flowing again
        r.update({"ready_s": round(t_ready - t_remove, 1),
                  "recovery_after_ready_s": round(recovered - t_ready, 1) if recovered else None,
                  "traps_sent_since_ready": len(since_ready),
                  "traps_lost_since_ready": sum(1 for k in since_ready
                                                if k not in traps.arrived)})
    return r


def helper_script(bed_dir):
    real = os.path.join(os.path.dirname(os.environ.get("IBSNMPD_BIN") or
                                        os.path.join(BUILD, "ibsnmpd")), "ibsnmpd-discover")
    path = os.path.join(bed_dir, "helper.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n# the discovery helper, or one that hangs or dies (helper-mode)\n"
                'case "$(cat %s/helper-mode 2>/dev/null)" in\n'
                "hang) exec sleep 3600 ;;\ndie) exit 3 ;;\n*) exec %s \"$@\" ;;\nesac\n"
                % (bed_dir, real))
    os.chmod(path, 0o755)
    return path


def print_table(results):
    print("%-24s %9s %9s %7s %7s %8s %9s %9s %5s" % (
        "fault", "GETs", "walks", "max ms", "(before)", "recov s", "traps lost", "after", "log"))
    for r in results:
        print("%-24s %4d/%-4d %4d/%-4d %7d %7d %8s %5d/%-4d %4d/%-4d %5d" % (
            r["fault"], r["gets_answered"], r["gets_sent"], r["walks_complete"],
            r["walks_started"], r["longest_get_ms"], r["longest_get_before_ms"],
            r["recovery_s"], r["traps_lost_during"], r["traps_sent_during"],
            r["traps_lost_after"], r["traps_sent_after"], r["log_lines"]))
    for r in results:
        if "mkey_violations" in r:
            print("%s: M_Key violations caused %d (the simulator's counters; ibsnmpd "
                  "counted %s), on %d nodes, at most %d at one" % (
                      r["fault"], r["mkey_violations"], r["mkey_violations_counted"],
                      r["mkey_violations_nodes"], r["mkey_violations_max_node"]))
    for r in results:
        if "reported_s" in r:
            print("%s: served by ibsnmpd %s s after it was made" % (
                r["fault"], r["reported_s"] if r["reported_s"] is not None else "never (in %d s)"
                % REPORT_LIMIT_S))
    for r in results:
        if "ready_s" in r:
            print("%s: the new SM master %.1f s after it was started; traps flowing "
                  "%s s after that; of the traps sent since it was master %d lost of %d" % (
                      r["fault"], r["ready_s"], r["recovery_after_ready_s"],
                      r["traps_lost_since_ready"], r["traps_sent_since_ready"]))
    for r in results:
        print("\n%s: %d log lines, %d kinds" % (r["fault"], r["log_lines"], len(r["log_kinds"])))
        for k, n in sorted(r["log_kinds"].items(), key=lambda kv: -kv[1]):
            print("  %4d x %s" % (n, k[:150]))


def fat_tree(leaves, spines, per_leaf):
    """A generated fat tree in a temporary file (its path); the test tools
    must be built."""
    for path in (INJECTOR, SHIM):
        if not os.path.exists(path):
            raise RuntimeError("%s missing: build first (cmake --build build)" % path)
    with tempfile.NamedTemporaryFile("w", suffix=".net", prefix="ibsnmpd-bench.",
                                     delete=False) as topo:
        topo.write(subprocess.run([sys.executable, GEN_FATTREE, str(leaves), str(spines),
                                   str(per_leaf)], capture_output=True, text=True,
                                  check=True).stdout)
    return topo.name


def wait_subscribed(bed):
    """Until ibsnmpd has subscribed to the trap the benches inject."""
    log = os.path.join(bed.dir, "ibsnmpd.log")
    for _ in range(600):
        if "subscribed to trap 145" in open(log).read():
            return
        time.sleep(0.1)


CONF = ["saKey 0x1", "notificationLimit 0 60", "cacheLifetime pmCounters 2",
        "pmDiscoveryInterval 10", "pmDiscoveryHelper {dir}/helper.sh",
        "partitionFile {dir}/partitions.conf", "opensmPidFile {dir}/opensm.pid"]


def run(hold=20, stop_hold=30, only=(), progress=None):
    """Every fault (or those named in only) in turn on one bed; the results
    (a dict per fault) and the sanitizer reports of ibsnmpd."""
    topo = fat_tree(4, 2, 3)
    chosen = [f for f in faults(hold, stop_hold) if not only or f[0] in only]
    try:
        r = running(topo, ME, conf=CONF, preload=SHIM)
        helper_script(r.dir)
        with r as bed:
            results = run_faults(bed, chosen, TRAP_NODE, progress)
            reports = bed.sanitizer_reports()
    finally:
        os.unlink(topo)
    return results, reports


def run_faults(bed, chosen, trap_node, progress=None, measure=None, trees=TREES):
    """The faults in turn on bed while the manager polls (walking trees in
    turn) and traps flow from trap_node; measure(bed, result) adds to each
    result."""
    results = []
    wait_subscribed(bed)
    poller, traps = Poller(bed, trees), TrapSource(bed, node=trap_node)
    poller.start()
    traps.start()
    try:
        for name, fault_hold, apply, remove, check, *reported in chosen:
            res = run_fault(bed, poller, traps, name, fault_hold, apply, remove, check,
                            *reported)
            if measure:
                measure(bed, res)
            if progress:
                progress("%s: recovered in %s s%s" % (
                    name, res["recovery_s"], "" if res["recovery_s"] is not None else
                    " (still missing: %s)" % ", ".join(res["not_recovered"])))
            results.append(res)
    finally:
        poller.stop = traps.stop = True
        poller.join()
        traps.join()
    return results


# ---- a protected fabric (fabricsim: ibsim has no M_Key) -------------------------------

PROTECT_KEY = "0x00000000c0ffee42"
VIOLATIONS_CAUSED = ".1.3.6.1.4.1.8072.9999.9999.117.1.10.4.0"  # ibsnmpdMKeyViolationsCaused
BIG = {"hosts": 16, "radix": 8}
BIG_ME, BIG_TRAP_NODE = "host-1", "host-12"
BIG_CONF = ["saKey 0x1", "notificationLimit 0 60", "cacheLifetime pmCounters 2",
            "cacheLifetime fabricPorts 2", "pmDiscoveryInterval 10", "madTimeout 300"]


def protected_faults(hold):
    """The SM turns M_Key on (protect bits 3) under a running ibsnmpd that
    has no key, and off again: the guard stops its SMPs, the SA's view and
    the counters stay served, the links come back fresh when SMPs are
    answered again."""
    return [("protected-fabric-no-key", hold, lambda b: b.sim("MKey * %s 3" % PROTECT_KEY),
             lambda b: b.sim("MKey * 0"), "smps-again")]


def mkey_violations(bed):
    """{node: MKeyViolations} (a switch's port 0, a host's port 1), read with
    smpquery once the key is off"""
    nodes, _ = generated(bed)
    res = {}
    for name, (kind, guid, nports, lid) in nodes.items():
        out = subprocess.run(bed.command("smpquery", "-t", "300", "portinfo", str(lid),
                                         "0" if kind == "switch" else "1", node=BIG_ME),
                             capture_output=True, text=True, env=env())
        m = re.search(r"^MkeyViolations:\.*(\d+)", out.stdout, re.M)
        res[name] = int(m.group(1)) if m else None
    return res


# ---- the fabric changing (fabricsim's rail layout) ---------------------------------------

RAIL = {"hosts": 16, "layout": "rail"}
RAIL_ME, RAIL_TRAP_NODE = "srv-1-hca1", "srv-12-hca1"
LINK_STATE = ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1.1.6"  # ibsnmpdFabricPortLinkState
PM_SYMBOL_ERRORS = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1.9"  # ibsnmpdPmSymbolErrors
ACTIVE = "4"


def served(bed, oids):
    """{oid: value} of a GET of oids through snmpd (in tens: a PDU each),
    retried as a manager does; a value missing where no answer came"""
    res = {}
    for k in range(0, len(oids), 10):
        part = oids[k:k + 10]
        out = snmp(bed, "snmpget", "-Oqv", *part, timeout=2, retries=2)
        values = out.stdout.splitlines()
        if out.returncode == 0 and answered(out) and len(values) == len(part):
            res.update(zip(part, (v.strip() for v in values)))
    return res


class RailPorts:
    """Ports of the rail bed by name: their GUIDs, LIDs and leaf ports from
    what fabricsim generated (its own account, read once)."""

    def __init__(self):
        self.nodes, self.peer = None, {}

    def load(self, bed):
        if self.nodes is None:
            self.nodes, links_ = generated(bed)
            for link in links_:
                (a, pa), (b, pb) = tuple(link)
                self.peer[(a, pa)], self.peer[(b, pb)] = (b, pb), (a, pa)
        return self

    def oid(self, column, name, port):
        return "%s.%s.%d" % (column, guid_index(self.nodes[name][1]), port)

    def lid(self, name):
        return self.nodes[name][3]


def counters_set(ports, values):
    """apply(bed) part: each port's SymbolErrorCounter set on the simulator
    (while the fault holds, so that only a read after it can serve it)"""
    def apply(bed):
        for (name, port), value in zip(ports, values):
            bed.sim('PerformanceSet "%s"[%d] PortCounters.SymbolErrorCounter=%d'
                    % (name, port, value))
    return apply


def counters_agree(rail, ports):
    """each port's SymbolErrorCounter as perfquery reads it through the
    simulator equals what ibsnmpd serves (ibsnmpdPmSymbolErrors)"""
    def check(bed):
        rail.load(bed)
        got = served(bed, [rail.oid(PM_SYMBOL_ERRORS, n, p) for n, p in ports])
        for n, p in ports:
            ref = perf_counters(bed, rail.lid(n), p).get("SymbolErrorCounter")
            if ref is None or got.get(rail.oid(PM_SYMBOL_ERRORS, n, p)) != str(ref):
                return False
        return True
    return check


def fabric_change_faults(hold):
    """A rail dead (its switches and every server's HCA on it: a rail's
    power or its leaf firmware), and a storm: 64 HCAs (4 of each server, as
    a job resetting adapters does) down within a second and up again.

    Each is checked against the simulator's own answers, not ibsnmpd's
    word: while it holds, ibsnmpd must serve it (the rail's sample ports
    stale; the storm's links down); it has recovered when iblinkinfo shows
    the links active and ibsnmpd serves them so (every one of the storm's
    64), and the SymbolErrorCounter of sample ports, set on the simulator
    while the fault held, reads in ibsnmpd as perfquery reads it."""
    rail = RailPorts()
    dead_hcas = ("srv-3-hca2", "srv-11-hca2")
    storm_hcas = ["srv-%d-hca%d" % (n, k) for n in range(1, 17) for k in (3, 4, 5, 6)]
    storm_samples = [("srv-2-hca3", 1), ("srv-9-hca6", 1)]

    def dead_samples(bed):
        """two HCAs of rail 2 and their leaf ports"""
        rail.load(bed)
        return [(h, 1) for h in dead_hcas] + [rail.peer[(h, 1)] for h in dead_hcas]

    def dead(bed):
        bed.sim('Dead "*-r2.*"')
        bed.sim('Dead "srv-*-hca2"')
        counters_set(dead_samples(bed), range(101, 105))(bed)

    def dead_served_stale(bed):
        got = served(bed, [rail.oid(PM_STALE, n, p) for n, p in dead_samples(bed)])
        return len(got) == 4 and all(v == "1" for v in got.values())

    def rail_back(bed):
        samples = dead_samples(bed)
        states = link_states(bed)
        if any(states.get(port, ("",))[0] != "Active" for port in samples):
            return False
        got = served(bed, [rail.oid(PM_STALE, n, p) for n, p in samples])
        return all(v == "2" for v in got.values()) and len(got) == len(samples) and \
            counters_agree(rail, samples)(bed)

    def storm(bed):
        for h in storm_hcas:
            bed.sim('Unlink "%s"' % h)
        counters_set(storm_samples, (201, 202))(bed)

    def storm_served_down(bed):
        rail.load(bed)
        leaf_ports = [rail.peer[port] for port in storm_samples]
        got = served(bed, [rail.oid(LINK_STATE, n, p) for n, p in leaf_ports])
        return len(got) == len(leaf_ports) and all(v not in (ACTIVE, "active") and
                                                   not v.startswith("active")
                                                   for v in got.values())

    def calm(bed):
        for h in storm_hcas:
            bed.sim('ReLink "%s"' % h)

    def links_back(bed):
        rail.load(bed)
        states = link_states(bed)
        if any(states.get((h, 1), ("",))[0] != "Active" for h in storm_hcas):
            return False
        got = served(bed, [rail.oid(LINK_STATE, h, 1) for h in storm_hcas])
        return len(got) == len(storm_hcas) and all(v.split("(")[-1].rstrip(")") == ACTIVE
                                                   or v == ACTIVE for v in got.values()) and \
            counters_agree(rail, storm_samples)(bed)

    return [
        ("dead-rail", hold, dead, lambda b: [b.sim('Alive "*-r2.*"'),
                                             b.sim('Alive "srv-*-hca2"')],
         rail_back, dead_served_stale),
        ("link-storm-64-hcas", hold, storm, calm, links_back, storm_served_down),
    ]


def run_on_fabricsim(me, big, fault_list, trap_node, progress, **options):
    """fault_list on a fabricsim bed (big: its layout) with ibsnmpd on node
    me, the manager and the traps as in run(): (results, sanitizer reports)"""
    with running(None, me, conf=BIG_CONF, preload=SHIM, minimal=False, big=big) as bed:
        results = run_faults(bed, fault_list, trap_node, progress, **options)
        reports = bed.sanitizer_reports()
    return results, reports


def run_fabric_changes(hold=20, progress=None):
    """The fabric-change faults on a fabricsim rail bed (16 servers of 8
    HCAs), with the manager and the traps as in run()."""
    return run_on_fabricsim(RAIL_ME, RAIL, fabric_change_faults(hold), RAIL_TRAP_NODE, progress,
                            trees=SMALL_TREES)


def violations_measured(bed, res):
    """the violations ibsnmpd caused, as the simulator counted them and as
    ibsnmpd did"""
    caused = mkey_violations(bed)
    out = snmp(bed, "snmpget", "-Oqv", VIOLATIONS_CAUSED, timeout=2)
    res["mkey_violations_counted"] = int(out.stdout.split()[0]) \
        if out.returncode == 0 and out.stdout.split() else None
    res["mkey_violations"] = sum(v or 0 for v in caused.values())
    res["mkey_violations_max_node"] = max(v or 0 for v in caused.values())
    res["mkey_violations_nodes"] = sum(1 for v in caused.values() if v)


def run_protected(hold=20, progress=None):
    """The protected-fabric fault on a fabricsim bed, with the manager and
    the traps as in run(); its result also says the M_Key violations ibsnmpd
    caused (per node, from the simulator's counters)."""
    return run_on_fabricsim(BIG_ME, BIG, protected_faults(hold), BIG_TRAP_NODE, progress,
                            measure=violations_measured)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hold", type=float, default=20)
    ap.add_argument("--stop-hold", type=float, default=30, help="snmpd stopped this long")
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    args = ap.parse_args()
    stop_all_on_sigterm()
    only = [n for n in args.only.split(",") if n]
    progress = lambda text: print(text, file=sys.stderr)  # noqa: E731
    names = [f[0] for f in faults(args.hold, args.stop_hold)]
    results, reports = [], []
    if not only or any(n in names for n in only):
        results, reports = run(args.hold, args.stop_hold, only, progress=progress)
    if not only or "protected-fabric-no-key" in only:
        more, more_reports = run_protected(args.hold, progress=progress)
        results, reports = results + more, reports + more_reports
    if not only or any(n in ("dead-rail", "link-storm-64-hcas") for n in only):
        more, more_reports = run_fabric_changes(args.hold, progress=progress)
        results, reports = results + more, reports + more_reports
    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if reports:
        sys.exit("sanitizer reports from ibsnmpd:\n" + "\n".join(reports))
