"""Fixtures for integration tests: real test beds from scripts/simfabric.

Each test bed is ibsim + opensm + snmpd + snmptrapd + ibsnmpd, in its own
directory; it is stopped by PID (scripts/simfabric down) when its tests end,
pass or fail.
"""
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIMFABRIC = os.path.join(TOP, "scripts", "simfabric")
TOPOLOGIES = os.path.join(TOP, "tests", "topologies")


def ibsnmpd_bin():
    path = os.environ.get("IBSNMPD_BIN") or os.path.join(TOP, "build", "ibsnmpd")
    if not os.access(path, os.X_OK):
        pytest.fail("ibsnmpd binary not found at %s (set IBSNMPD_BIN)" % path)
    return path


def tool_path(name, env_var):
    """A test tool built with the daemon (tests/tools/)."""
    path = os.environ.get(env_var) or os.path.join(TOP, "build", "tests", name)
    if not os.access(path, os.X_OK):
        pytest.fail("%s not found at %s (set %s)" % (name, path, env_var))
    return path


def snmp_env():
    env = dict(os.environ)
    env["MIBS"] = ""  # numeric OIDs only; no MIB noise
    return env


class TestBed:
    def __init__(self, directory, env):
        self.dir = directory
        self.env = env
        self.target = env["SNMP_TARGET"]
        self.node = env["SIMFABRIC_NODE"]

    def simfabric(self, *args, check=True):
        # --dir before any "--": what follows it is a command line
        return subprocess.run([SIMFABRIC, args[0], "--dir", self.dir] + list(args[1:]),
                              check=check,
                              capture_output=True, text=True, env=snmp_env())

    def run_on_node(self, *cmd, node=None, ok_codes=(0,)):
        """Runs an infiniband-diags command attached to a node of this fabric."""
        args = ["run"] + (["--node", node] if node else []) + ["--"] + list(cmd)
        out = subprocess.run([SIMFABRIC] + args, capture_output=True, text=True,
                             env=dict(snmp_env(), SIMFABRIC_DIR=self.dir), timeout=60)
        if out.returncode not in ok_codes:
            raise AssertionError("%s failed: %s" % (" ".join(cmd), out.stderr))
        return out.stdout

    def snmp(self, tool, *args, community="public", extra=()):
        out = subprocess.run([tool, "-v2c", "-c", community, "-On", "-t", "2", "-r", "1"]
                             + list(extra) + [self.target] + list(args),
                             capture_output=True, text=True, env=snmp_env(), timeout=60)
        return out

    def v3(self, tool, context, *args, extra=()):
        """An SNMPv3 request (the bed's user) in a context."""
        return subprocess.run([tool] + self.env["SNMP_V3_ARGS"].split() +
                              ["-n", context, "-On", "-t", "3", "-r", "1"] + list(extra) +
                              [self.target] + list(args),
                              capture_output=True, text=True, env=snmp_env(), timeout=120)

    def v3_walk(self, context, oid):
        """snmpbulkwalk in a context; {} for an empty subtree."""
        out = self.v3("snmpbulkwalk", context, oid)
        assert out.returncode == 0, out.stderr
        rows = parse_varbinds(out.stdout)
        if list(rows) == [oid] and rows[oid][1].startswith("No Such"):
            return {}
        return rows

    def get(self, *oids, hex_strings=False):
        """snmpget; returns {oid: (type, value)}."""
        out = self.snmp("snmpget", *oids, extra=["-Ox"] if hex_strings else [])
        assert out.returncode == 0, out.stderr
        return parse_varbinds(out.stdout)

    def walk(self, oid):
        """snmpbulkwalk; {} for an empty subtree (net-snmp then prints the
        root's noSuchObject, which is not a row)."""
        out = self.snmp("snmpbulkwalk", oid)
        assert out.returncode == 0, out.stderr
        rows = parse_varbinds(out.stdout)
        if list(rows) == [oid] and rows[oid][1].startswith("No Such"):
            return {}
        return rows

    def log(self, name):
        with open(os.path.join(self.dir, name), errors="replace") as f:
            return f.read()


VARBIND = re.compile(r"^(\.[0-9.]+) = (?:([A-Za-z0-9-]+): )?(.*)$")


def parse_varbinds(text):
    res = {}
    last = None
    for line in text.splitlines():
        m = VARBIND.match(line)
        if m:
            last = m.group(1)
            res[last] = (m.group(2) or "", m.group(3).strip())
        elif last:  # continuation of a long hex string
            t, v = res[last]
            res[last] = (t, v + " " + line.strip())
    return res


TRAP_OID = ".1.3.6.1.6.3.1.1.4.1.0"  # snmpTrapOID.0


def notified_on_unlink(bed, port, oid):
    """Unlink port ('"hca3"[1]') in the simulator, wait for a notification
    oid in snmptrapd's log, ReLink the port: whether it arrived."""
    before = len(notifications(bed))
    bed.simfabric("sim", "Unlink %s" % port)
    try:
        return wait_for(lambda: any(n.get(TRAP_OID) == oid for n in notifications(bed)[before:]),
                        seconds=60)
    finally:
        bed.simfabric("sim", "ReLink %s" % port)


def guid_index(guid):
    """A GUID as the 8 sub-identifiers of a table index."""
    return ".".join(str(b) for b in guid.to_bytes(8, "big"))


def port_pkeys(bed, lid, port=1):
    """{P_Key base: full?} of a port, from smpquery pkeys."""
    out = bed.run_on_node("smpquery", "pkeys", str(lid), str(port))
    res = {}
    for v in re.findall(r"0x([0-9a-f]{4})", out):
        v = int(v, 16)
        if v & 0x7fff:
            res[v & 0x7fff] = bool(v & 0x8000)
    return res


def notifications(bed):
    """[{oid: value}] of every notification in snmptrapd's log (one line each,
    varbinds tab-separated), oldest first; string values without quotes."""
    res = []
    for line in bed.log("traps.log").splitlines():
        if TRAP_OID not in line:
            continue
        vbs = {}
        for part in line.strip().split("\t"):
            if " = " in part:
                name, value = part.split(" = ", 1)
                vbs[name.strip()] = value.split(": ", 1)[-1].strip().strip('"')
        res.append(vbs)
    return res


def wait_for(predicate, seconds=60, step=0.5):
    """Polls predicate until it is true or `seconds` have passed; returns it."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def start_testbed(topology="switch-3ca.net", node=None, extra_conf=(), preload=None, debug=None,
                  snmpd_extra=(), direct=False, minimal=True, ibsnmpd=None):
    """extra_conf lines may name the bed's directory as {dir}; debug: ibsnmpd's
    -D tokens (its log then has the debug lines); snmpd_extra: lines added to
    the bed's snmpd.conf; direct: ibsnmpd as its own agent (SNMP_DIRECT_TARGET);
    minimal: none of the bed's trap and partition settings (each test
    configures what it tests; test_simfabric.py tests the bed as it comes)."""
    directory = tempfile.mkdtemp(prefix="ibsnmpd-it.")
    args = [SIMFABRIC, "up", "--dir", directory, "--topology",
            os.path.join(TOPOLOGIES, topology), "--ibsnmpd", ibsnmpd or ibsnmpd_bin()]
    if node:
        args += ["--node", node]
    if preload:
        args += ["--ibsnmpd-preload", preload]
    if debug:
        args += ["--ibsnmpd-debug", debug]
    if direct:
        args += ["--direct"]
    if minimal:
        args += ["--minimal"]
    for line in extra_conf:
        args += ["--conf-extra", line.replace("{dir}", directory)]
    for line in snmpd_extra:
        args += ["--snmpd-extra", line]
    out = subprocess.run(args, capture_output=True, text=True, env=snmp_env())
    if out.returncode != 0:
        subprocess.run([SIMFABRIC, "down", "--dir", directory], capture_output=True)
        raise RuntimeError("simfabric up failed:\n%s\n%s" % (out.stdout, out.stderr))
    env = {k: v.strip('"') for k, v in
           (line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)}
    return TestBed(directory, env)


def bed_state(bed, lines=12):
    """Which of the bed's services run, and the end of their logs: shown with
    a failed test, since the bed's directory is gone after it."""
    out = []
    try:
        with open(os.path.join(bed.dir, "pids")) as f:
            for name, pid in (line.split() for line in f if line.strip()):
                alive = os.path.exists("/proc/%s" % pid)
                out.append("%s %s %s" % (name, pid, "running" if alive else "exited"))
    except (OSError, ValueError):
        pass
    for name in ("ibsnmpd.log", "ibsnmpd.out", "snmpd.log", "snmptrapd.out"):
        try:
            tail = [line for line in bed.log(name).splitlines()
                    if not line.startswith("Connection from")][-lines:]
        except OSError:
            continue
        out.append("--- %s" % name)
        out.extend(tail)
    return "\n".join(out)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.failed:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, TestBed):
                report.sections.append(("test bed %s" % value.dir, bed_state(value)))


def sanitizer_reports(bed):
    try:
        text = bed.log("ibsnmpd.out")
    except OSError:
        return ""
    return "\n".join(line for line in text.splitlines()
                     if "ERROR: AddressSanitizer" in line or "runtime error:" in line)


def stop_testbed(bed):
    subprocess.run([SIMFABRIC, "down", "--dir", bed.dir], capture_output=True,
                   env=snmp_env())
    reports = sanitizer_reports(bed)  # also what ibsnmpd printed while exiting
    if not os.environ.get("IBSNMPD_KEEP_TESTBED") and not reports:
        shutil.rmtree(bed.dir, ignore_errors=True)
    assert not reports, "sanitizer reports from ibsnmpd (kept %s):\n%s" % (bed.dir, reports)


@pytest.fixture(scope="module")
def switch_bed():
    """ibsnmpd attached to the switch (which is also opensm's node)."""
    bed = start_testbed(node="sw1")
    yield bed
    stop_testbed(bed)


@pytest.fixture(scope="module")
def ca_bed():
    """ibsnmpd attached to a channel adapter behind the switch."""
    bed = start_testbed(node="hca2")
    yield bed
    stop_testbed(bed)


@pytest.fixture
def fresh_bed():
    """A test bed of the test's own, for tests that restart its parts."""
    bed = start_testbed(node="hca1")
    yield bed
    stop_testbed(bed)


def fields(text):
    res = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9]+):\.+(.*)$", line)
        if m:
            res[m.group(1)] = m.group(2).strip()
    return res


def node_guids(bed):
    """{node description: (node GUID, LID)} from ibnetdiscover: a switch's LID
    is on its header line, a CA's on its (first) port line."""
    text = bed.run_on_node("ibnetdiscover")
    res, pending = {}, None
    for line in text.splitlines():
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"[HS]-([0-9a-f]+)"\s+# "([^"]+)"(.*)$', line)
        if m:
            lid = re.search(r"\blid (\d+)", m.group(4))
            res[m.group(3)] = (int(m.group(2), 16), int(lid.group(1)) if lid else None)
            pending = None if lid else m.group(3)
            continue
        lid = re.search(r"# lid (\d+)", line)
        if pending and line.startswith("[") and lid:
            res[pending] = (res[pending][0], int(lid.group(1)))
            pending = None
    return res
