"""What the benchmarks share: a simulated test bed, snmpget, process memory."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SIMFABRIC = os.path.join(TOP, "scripts", "simfabric")
TOPOLOGIES = os.path.join(TOP, "tests", "topologies")
STATS = ".1.3.6.1.4.1.8072.9999.9999.117.1.1"
MADS_SENT = STATS + ".1.0"
SMA_GROUPS = ("nodeInfo", "switchInfo", "portInfo", "guidInfo", "pKeyTable", "slToVlTable",
              "vlArbTable", "linearForwarding", "multicastForwarding", "randomForwarding",
              "smInfo", "vendorDiag", "ledInfo")


def env():
    return dict(os.environ, MIBS="")


def snmpget(target, oid):
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", target, oid],
                         capture_output=True, text=True, env=env())
    return int(out.stdout.split()[-1])


class TestBed:
    """scripts/simfabric up ... down, as a context manager."""

    def __init__(self, topology, node, conf=(), snmpd_conf=(), preload=None, direct=False,
                 debug=None, binary=None):
        """conf lines may name the bed's directory as {dir}; debug: ibsnmpd's -D
        tokens; binary: another ibsnmpd than the tree's build."""
        self.dir = tempfile.mkdtemp(prefix="ibsnmpd-bench.")
        # --minimal: each bench configures what it measures
        cmd = [SIMFABRIC, "up", "--dir", self.dir, "--topology",
               os.path.join(TOPOLOGIES, topology), "--node", node, "--minimal"]
        if preload:
            cmd += ["--ibsnmpd-preload", preload]
        for line in conf:
            cmd += ["--conf-extra", line.replace("{dir}", self.dir)]
        for line in snmpd_conf:
            cmd += ["--snmpd-extra", line]
        if direct:
            cmd += ["--direct"]
        if debug:
            cmd += ["--ibsnmpd-debug", debug]
        self.cmd = cmd
        self.up_env = dict(env(), IBSNMPD_BIN=binary) if binary else env()

    def __enter__(self):
        up = subprocess.run(self.cmd, capture_output=True, text=True, env=self.up_env)
        if up.returncode != 0:
            subprocess.run([SIMFABRIC, "down", "--dir", self.dir], capture_output=True)
            sys.exit("simfabric up failed:\n" + up.stdout + up.stderr)
        self.env = {k: v.strip('"') for k, v in
                    (l.split("=", 1) for l in up.stdout.splitlines() if "=" in l)}
        self.target = self.env["SNMP_TARGET"]
        with open(os.path.join(self.dir, "ibsnmpd.pid")) as f:
            self.pid = int(f.read())
        TestBed.up.append(self)
        return self

    def __exit__(self, *exc):
        if self in TestBed.up:
            TestBed.up.remove(self)
        subprocess.run([SIMFABRIC, "down", "--dir", self.dir], capture_output=True)
        if not os.environ.get("IBSNMPD_KEEP_TESTBED"):
            shutil.rmtree(self.dir, ignore_errors=True)

    up = []  # the beds up now, for stop_on_sigterm

    def run(self, *cmd, node=None):
        """A command attached to the fabric (infiniband-diags)."""
        return [SIMFABRIC, "run", "--dir", self.dir] + (["--node", node] if node else []) + \
            ["--"] + list(cmd)

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


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
    subprocess.run([SIMFABRIC, "spawn", "subagent", "--dir", bed.dir, "--node", node, "--",
                    os.path.join(build, "ibsnmpd"), "-f", "-Lf",
                    os.path.join(bed.dir, "subagent.log"), "-c", path, "-x",
                    "unix:%s/agentx.sock" % bed.dir], check=True, env=env())


def stop_on_sigterm(*files):
    """A benchmark stopped with SIGTERM takes its beds down (and removes files)
    before it exits."""
    def stop(*_):
        for bed in list(TestBed.up):
            bed.__exit__()
        for f in files:
            if os.path.exists(f):
                os.unlink(f)
        os._exit(1)
    signal.signal(signal.SIGTERM, stop)
