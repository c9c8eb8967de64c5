"""What one host's change costs the fabric (issue 49), in the default
configuration (the vitals on) but for the periodic reads' lifetimes, an
hour, so that what fabricsim answers across a change is the change's:

  a host's link down, then back, and a new host cabled to a free port:
  each costs at most the leaf's ports and 10 SMPs (the trap names the
  switch only: its ports are read), 20 vendor MADs (register reads by the
  management processors) and 10 PerfMgt MADs, by fabricsim's own count;
  and the routing checks' read that follows, the changed leaf's table and
  the block of the host's LID on every switch;
  what ibsnmpd then serves of the host that came back (its counters, its
  firmware, its cable, its temperature) is what perfquery, mstreg and
  mstlink say, run through the same simulator;
  a routing read that a switch's timeouts left unfinished resumes, that
  switch alone, long before the hour's period."""
import os
import re
import subprocess
import time

import pytest

from conftest import TOP, generated, guid_index, start_testbed, stop_testbed, wait_for
from simfabric import PERIODIC_GROUPS

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
LINK_STATE = MIB + "1.5.1.1.6."      # ibsnmpdFabricPortLinkState
NODE_REACHABLE = MIB + "1.6.1.1.7."  # ibsnmpdNodeReachable
VITALS_NODE = MIB + "1.7.1.1."       # ibsnmpdVitalsNodeEntry
TEMP = MIB + "1.7.2.1."              # ibsnmpdTemperatureEntry
MODULE = MIB + "1.7.4.1."            # ibsnmpdModuleEntry
PM_PORT = MIB + "1.3.1.1."           # ibsnmpdPmPortEntry
MSTFLINT_RUN = os.path.join(TOP, "tests", "tools", "mstflint-run")
CLASSES = ("smp", "vendor", "pma", "routing")
ROUTING_SWITCHES, ROUTING_READ, ROUTING_MADS, ROUTING_RUNS = (
    MIB + "1.12.%d.0" % n for n in (5, 6, 7, 8))  # ibsnmpdRouting{Switches,SwitchesRead,Mads,Runs}
LEAF_PORTS = 64


@pytest.fixture(scope="module")
def bed():
    # 31 hosts on one leaf of radix 64 (port 32 free), 32 spines above it
    b = start_testbed(big={"hosts": 31},
                      extra_conf=["cacheLifetime %s 3600" % g for g in PERIODIC_GROUPS] +
                      ["notificationLimit 0 60", "routingSettle 1"])
    try:
        yield b
    finally:
        stop_testbed(b)


@pytest.fixture(scope="module")
def fabric(bed):
    nodes, links = generated(bed)
    leaf_of = {}
    for link in links:
        (a, pa), (b, pb) = sorted(link)
        leaf_of.setdefault(a, (b, pb))  # a host's: its leaf's port
        leaf_of.setdefault(b, (a, pa))
    return {name: (guid, lid) for name, (_, guid, _, lid) in nodes.items()}, leaf_of


def cost(bed, commands, served):
    """The MADs of each class fabricsim answered from the console commands
    until the fabric is quiet again, once served() holds"""
    before = bed.answered_when_quiet(limit=300, classes=CLASSES)
    runs = int(cell(bed, ROUTING_RUNS) or 0)
    for c in commands:
        bed.simfabric("sim", c)
    assert wait_for(served, seconds=60), commands
    # the routing checks read what the change may have rerouted
    assert wait_for(lambda: int(cell(bed, ROUTING_RUNS) or 0) > runs, seconds=60), commands
    after = bed.answered_when_quiet(limit=300, classes=CLASSES)
    return {c: after[c] - before[c] for c in CLASSES}


def cell(bed, oid):
    value = bed.get(oid)[oid][1]
    return None if value.startswith("No Such") else value.strip('"')


def within_aims(spent):
    """One node's reads: its switch's ports, its own registers and counters;
    the routing checks', the changed switch's table (2 blocks: 65 LIDs)
    and the changed LID's block on each of the 33 switches"""
    return (spent["smp"] <= LEAF_PORTS + 10 and spent["vendor"] <= 20 and spent["pma"] <= 10 and
            spent["routing"] <= 2 + 33)


def read_whole(bed, guid):
    return cell(bed, VITALS_NODE + "3." + guid_index(guid)) == "1"


def test_a_hosts_link_down_and_back_costs_its_own_reads(bed, fabric):
    nodes, leaf_of = fabric
    guid, lid = nodes["host-5"]
    leaf, port = leaf_of["host-5"]
    leaf_guid = nodes[leaf][0]
    state = LINK_STATE + "%s.%d" % (guid_index(leaf_guid), port)
    assert wait_for(lambda: read_whole(bed, guid), seconds=120)
    down = cost(bed, ['Unlink "host-5"'], lambda: cell(bed, state) not in ("4", None))
    up = cost(bed, ['ReLink "host-5"'],
              lambda: cell(bed, state) == "4" and
              cell(bed, NODE_REACHABLE + guid_index(guid)) == "1")
    print("down: %s; back: %s" % (down, up))
    assert within_aims(down), down
    assert within_aims(up), up
    # the host was read again when it came back, and nothing else
    assert up["pma"] >= 4 and up["vendor"] >= 1, up


def test_a_new_host_costs_its_own_reads(bed, fabric):
    nodes, _ = fabric
    leaf = [n for n in nodes if n.startswith("leaf-")][0]
    bed.simfabric("sim", 'Add ca "host-new" 1')
    time.sleep(0.3)
    spent = cost(bed, ['Link "%s"[32] "host-new"[1]' % leaf],
                 lambda: cell(bed, LINK_STATE + "%s.32" % guid_index(nodes[leaf][0])) == "4")
    print("new host: %s" % spent)
    assert within_aims(spent), spent
    # a new node's inventory and readings: GeneralInfo, registers
    assert spent["vendor"] >= 5 and spent["pma"] >= 4, spent


def mst(bed, tool, *args):
    out = subprocess.run(["env", "-C", bed.dir, "SIM_HOST=host-1",
                          "IBSIM_SOCKNAME=" + bed.ibsim_sockname, MSTFLINT_RUN, tool] +
                         list(args), capture_output=True, text=True, timeout=120)
    assert out.returncode != 127, out.stderr
    return re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)


def test_the_host_back_is_served_as_the_tools_see_it(bed, fabric):
    """After the link down and back (the first test), host-5's counters,
    firmware, temperature and cable are what perfquery, mstreg and mstlink
    say."""
    nodes, _ = fabric
    guid, lid = nodes["host-5"]
    index = guid_index(guid)
    assert wait_for(lambda: read_whole(bed, guid), seconds=60)
    # ibsnmpdPmSymbolErrors, LinkErrorRecovery, LinkDowned: perfquery's
    # (the link down and up counted once more); the data counters move with
    # the simulator's traffic: ibsnmpd's reading is before perfquery's
    perf = bed.run_on_node("perfquery", str(lid), "1")
    theirs = dict(re.findall(r"^(\w+):\.+(\d+)$", perf, re.M))
    for column, counter in ((9, "SymbolErrorCounter"), (10, "LinkErrorRecoveryCounter"),
                            (11, "LinkDownedCounter")):
        assert cell(bed, PM_PORT + "%d.%s.1" % (column, index)) == theirs[counter], perf
    assert int(theirs["LinkDownedCounter"]) >= 1, perf
    perf = bed.run_on_node("perfquery", "-x", str(lid), "1")
    theirs = dict(re.findall(r"^(\w+):\.+(\d+)$", perf, re.M))
    ours = cell(bed, PM_PORT + "5.%s.1" % index)
    assert 0 < int(ours) <= 4 * int(theirs["PortXmitData"]), (ours, perf)
    mgir = dict((m.group(1), int(m.group(2), 16)) for m in re.finditer(
        r"^(\S+)\s+\|\s+(0x[0-9a-f]+)\s*$",
        mst(bed, "mstreg", "-d", "lid-%d" % lid, "--reg_name", "MGIR", "--get"), re.M))
    assert cell(bed, VITALS_NODE + "4." + index) == "%d.%d.%d" % (
        mgir["extended_major"], mgir["extended_minor"], mgir["extended_sub_minor"])
    mtmp = dict((m.group(1), int(m.group(2), 16)) for m in re.finditer(
        r"^(\S+)\s+\|\s+(0x[0-9a-f]+)\s*$",
        mst(bed, "mstreg", "-d", "lid-%d" % lid, "--reg_name", "MTMP", "--get", "--indexes",
            "sensor_index=0"), re.M))
    # ibsnmpdTemperatureValue: tenths of a degree, MTMP's in eighths (the
    # simulator's temperature drifts: read when the host came back, within
    # a degree of mstreg's now)
    assert abs(int(cell(bed, TEMP + "4.%s.1" % index)) - mtmp["temperature"] * 10 / 8) <= 10
    module = mst(bed, "mstlink", "-d", "lid-%d" % lid, "-m")
    vendor = re.search(r"^Vendor Name\s*:\s*(.*)$", module.split("Module Info", 1)[1], re.M)
    assert vendor and cell(bed, MODULE + "9.%s.1" % index) == vendor.group(1).strip()


def test_a_read_that_timeouts_interrupt_resumes(bed, fabric):
    """A spine that answers nothing about itself (its port 0: its
    LinearForwardingTable among them) while a host's link comes back: the
    read that follows leaves it unread; once it answers again, its table
    is read again, alone (its blocks' SMPs, by fabricsim's count), within
    a minute or so (routingSettle 1 s, doubled on each resume that still
    failed) where the period is an hour."""
    nodes, _ = fabric
    spine = sorted(n for n in nodes if n.startswith("spine-"))[0]
    assert wait_for(lambda: cell(bed, ROUTING_SWITCHES) is not None, seconds=120)
    switches = int(cell(bed, ROUTING_SWITCHES))
    blocks = max(lid for _, lid in nodes.values()) // 64 + 1
    assert wait_for(lambda: int(cell(bed, ROUTING_READ)) == switches, seconds=120)
    runs = int(cell(bed, ROUTING_RUNS))
    bed.simfabric("sim", 'Unlink "host-9"')
    assert wait_for(lambda: int(cell(bed, ROUTING_RUNS)) > runs, seconds=120)
    bed.simfabric("sim", 'Error "%s"[0] 100' % spine)
    try:
        # the host back: its LID's block read on every switch, the spine's
        # unanswered
        bed.simfabric("sim", 'ReLink "host-9"')
        assert wait_for(lambda: int(cell(bed, ROUTING_READ)) == switches - 1, seconds=120)
        before = bed.answered_when_quiet(limit=300, classes=CLASSES)
    finally:
        bed.simfabric("sim", 'Error "%s"[0] 0' % spine)
    t0 = time.monotonic()
    assert wait_for(lambda: int(cell(bed, ROUTING_READ)) == switches, seconds=300)
    resumed_s = time.monotonic() - t0
    after = bed.answered_when_quiet(limit=300, classes=CLASSES)
    print("resumed in %.1f s: %d SMPs in its read, %d routing SMPs answered" % (
        resumed_s, int(cell(bed, ROUTING_MADS)), after["routing"] - before["routing"]))
    assert int(cell(bed, ROUTING_MADS)) == blocks
    # an attempt under way when the errors stopped may have had some of its
    # blocks answered: at most one attempt more than the resume itself
    assert blocks <= after["routing"] - before["routing"] < 2 * blocks
