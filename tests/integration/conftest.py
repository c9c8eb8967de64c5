"""Fixtures for integration tests: real test beds of the simfabric package
(tests/simfabric, whose command line is scripts/simfabric).

Each test bed is ibsim + opensm + snmpd + snmptrapd + ibsnmpd, in its own
directory; it is stopped by PID when its tests end, pass or fail.
"""
import os
import shutil
import sys
import tempfile

import pytest

sys.dont_write_bytecode = True  # nothing left in the checkout
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests"))

import simfabric  # noqa: E402
from simfabric import (TOPOLOGIES, TRAP_OID, fields, generated, guid_index, links,  # noqa: E402
                       node_guids, notifications, parse_varbinds, port_pkeys, snmp_env, wait_for)

SIMFABRIC = os.path.join(TOP, "scripts", "simfabric")
# what the test files take from here (much of it the package's)
__all__ = ["TOP", "TOPOLOGIES", "TRAP_OID", "SIMFABRIC", "TestBed", "bed_state", "fields",
           "generated",
           "guid_index", "ibsnmpd_bin", "links", "node_guids", "notifications", "notified_on_unlink",
           "parse_varbinds", "port_pkeys", "snmp_env", "start_testbed", "stop_testbed",
           "tool_path", "wait_for"]


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


class TestBed(simfabric.Bed):
    """A bed as the tests use it: requests that must be answered."""

    __test__ = False  # not a test class

    def get(self, *oids, hex_strings=False):
        """snmpget; returns {oid: (type, value)}."""
        out = self.snmp("snmpget", *oids, extra=["-Ox"] if hex_strings else [])
        assert out.returncode == 0, out.stderr
        return parse_varbinds(out.stdout)

    def serves(self, oid):
        """whether snmpd answers oid with a value: the bed is up once
        ibsnmpd's nodeType is served, but each area registers its subtrees
        with snmpd one AgentX request after another, so a later area's may
        not be yet (a SET to it is then snmpd's notWritable: seen under
        ASan)"""
        out = self.snmp("snmpget", oid)
        return out.returncode == 0 and " = No Such" not in out.stdout

    def walk(self, oid):
        """snmpbulkwalk; {} for an empty subtree (net-snmp then prints the
        root's noSuchObject, which is not a row)."""
        out = self.snmp("snmpbulkwalk", oid)
        assert out.returncode == 0, out.stderr
        rows = parse_varbinds(out.stdout)
        if list(rows) == [oid] and rows[oid][1].startswith("No Such"):
            return {}
        return rows

    def walk_whole(self, oids, stamp, tries=20):
        """{oid: (type, value)} of walks of oids (a table's OID, or several
        columns'), all of one publication: walked again while `stamp` (a
        TimeStamp or count the agent moves whenever it publishes the table:
        ibsnmpdAlarmsLastChange, ibsnmpdRouteTablesPublications) is not the same
        before and after. A walk is several requests: rows half seen, or
        seen in one column and not in another, would otherwise be taken
        for the table, or left out and a torn walk taken for "none"."""
        for _ in range(tries):
            before = self.get(stamp)[stamp][1]
            rows = {}
            for oid in ([oids] if isinstance(oids, str) else oids):
                rows.update(self.walk(oid))
            if self.get(stamp)[stamp][1] == before:
                return rows
        raise AssertionError("%s moved during each of %d walks of %s" % (stamp, tries, oids))

    def v3_walk(self, context, oid):
        """snmpbulkwalk in a context; {} for an empty subtree."""
        out = self.v3("snmpbulkwalk", context, oid)
        assert out.returncode == 0, out.stderr
        rows = parse_varbinds(out.stdout)
        if list(rows) == [oid] and rows[oid][1].startswith("No Such"):
            return {}
        return rows


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


def start_testbed(topology="switch-3ca.net", node=None, extra_conf=(), preload=None, debug=None,
                  snmpd_extra=(), direct=False, minimal=True, ibsnmpd=None, big=None,
                  with_agent=True):
    """extra_conf lines may name the bed's directory as {dir}; debug: ibsnmpd's
    -D tokens (its log then has the debug lines); snmpd_extra: lines added to
    the bed's snmpd.conf; direct: ibsnmpd as its own agent (SNMP_DIRECT_TARGET);
    minimal: none of the bed's trap and partition settings (each test
    configures what it tests; test_simfabric.py tests the bed as it comes);
    big: fabricsim's fabric instead of ibsim's ({"hosts": N, "radix": R, ...})."""
    directory = tempfile.mkdtemp(prefix="ibsnmpd-it.")
    notes = []
    try:
        bed = simfabric.up(topology=os.path.join(TOPOLOGIES, topology), node=node,
                           directory=directory, ibsnmpd=ibsnmpd or ibsnmpd_bin(),
                           conf_extra=[l.replace("{dir}", directory) for l in extra_conf],
                           snmpd_extra=snmpd_extra, direct=direct, preload=preload,
                           debug=debug, traps=not minimal, partitions=not minimal,
                           warn=notes.append, big=big, with_agent=with_agent)
    except simfabric.BedError as e:
        raise RuntimeError("simfabric up failed: %s\n%s" % (e, "\n".join(notes))) from e
    return TestBed(bed.dir)


def bed_state(bed, lines=12):
    """Which of the bed's services run, and the end of their logs: shown with
    a failed test, since the bed's directory is gone after it."""
    return bed.state(lines)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.failed:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, TestBed):
                report.sections.append(("test bed %s" % value.dir, bed_state(value)))


def sanitizer_reports(bed):
    return "\n".join(bed.sanitizer_reports())


def stop_testbed(bed):
    bed.down()
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
