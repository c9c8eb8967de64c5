"""What the benchmarks share beyond the test-bed package (tests/simfabric,
which runs their beds): snmpget, a timed walk, a second ibsnmpd."""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing left in the checkout
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from simfabric import TOP, TOPOLOGIES, running, snmp_env as env  # noqa: E402,F401
from simfabric import stop_all_on_sigterm as stop_on_sigterm  # noqa: E402,F401

TestBed = running  # with TestBed(topology, node, conf=...) as bed: a simfabric.Bed
__all__ = ["TOP", "TOPOLOGIES", "TestBed", "env", "stop_on_sigterm", "STATS", "MADS_SENT",
           "SMA_GROUPS", "snmpget", "walk", "spawn_subagent"]

STATS = ".1.3.6.1.4.1.8072.9999.9999.117.1.1"
MADS_SENT = STATS + ".1.0"
SMA_GROUPS = ("nodeInfo", "switchInfo", "portInfo", "guidInfo", "pKeyTable", "slToVlTable",
              "vlArbTable", "linearForwarding", "multicastForwarding", "randomForwarding",
              "smInfo", "vendorDiag", "ledInfo")


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
