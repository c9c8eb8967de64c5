"""conf/snmpd.conf.monitor: counter thresholds evaluated by snmpd's own
DISMAN-EVENT-MIB over ibsnmpdPmPortTable. The shipped file is included in the
bed's snmpd.conf with one change: samples every 3 s instead of every 300 s.
A counter raised in the simulator makes snmpd send mteTriggerFired, naming the
port, as perfquery reads the counter."""
import os
import re
import shutil
import tempfile
import time

import pytest

from conftest import (TOP, TRAP_OID, fields, node_guids, notifications, start_testbed,
                      stop_testbed, wait_for)

FIRED = ".1.3.6.1.2.1.88.2.0.1"          # DISMAN-EVENT-MIB::mteTriggerFired
HOT_TRIGGER = ".1.3.6.1.2.1.88.2.1.1.0"  # mteHotTrigger
HOT_OID = ".1.3.6.1.2.1.88.2.1.4.0"      # mteHotOID
HOT_VALUE = ".1.3.6.1.2.1.88.2.1.5.0"    # mteHotValue
PM = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1."


@pytest.fixture(scope="module")
def bed():
    work = tempfile.mkdtemp(prefix="ibsnmpd-monitor.")
    with open(os.path.join(TOP, "conf", "snmpd.conf.monitor")) as f:
        text = f.read()
    assert len(re.findall(r"^monitor -r 300 ", text, re.M)) == 11
    conf = os.path.join(work, "snmpd.conf.monitor")
    with open(conf, "w") as f:
        f.write(re.sub(r"^monitor -r 300 ", "monitor -r 3 ", text, flags=re.M))
    b = start_testbed(node="hca1", extra_conf=["cacheLifetime pmCounters 2"],
                      snmpd_extra=["includeFile %s" % conf])
    try:
        yield b
    finally:
        stop_testbed(b)
        shutil.rmtree(work, ignore_errors=True)


def fired(bed):
    return [n for n in notifications(bed) if n.get(TRAP_OID) == FIRED]


def index(guid, port):
    return ".".join(str(b) for b in guid.to_bytes(8, "big")) + ".%d" % port


def test_symbol_errors_over_the_threshold_fire_through_snmpd(bed):
    sw, lid = node_guids(bed)["sw1"]
    assert "iquerySecName" not in bed.log("snmpd.log")  # the user is there: no complaint
    # a delta needs the port in two of snmpd's samples (3 s apart) before the rise
    before = PM + "9." + index(sw, 4)
    assert wait_for(lambda: bed.snmp("snmpget", before).stdout.strip().endswith(": 0"),
                    seconds=90)
    time.sleep(7)
    bed.simfabric("sim", 'PerformanceSet "sw1"[4] PortCounters.SymbolErrorCounter=50')
    theirs = fields(bed.run_on_node("perfquery", str(lid), "4"))
    assert theirs["SymbolErrorCounter"] == "50"
    row = PM + "9." + index(sw, 4)

    def ours():
        return [n for n in fired(bed) if n.get(HOT_OID) == row]
    assert wait_for(ours, seconds=90), fired(bed)
    n = ours()[0]
    assert n[HOT_TRIGGER] == "ibSymbolErrors"
    assert int(n[HOT_VALUE]) == 50  # the rise between two samples
    assert n[PM + "3." + index(sw, 4)] == "sw1"
    assert n[PM + "4." + index(sw, 4)] == str(lid)
    # below the threshold: no notification for another port
    bed.simfabric("sim", 'PerformanceSet "sw1"[5] PortCounters.SymbolErrorCounter=5')
    bed.simfabric("sim", 'PerformanceSet "sw1"[6] PortCounters.LinkDownedCounter=1')
    link = PM + "11." + index(sw, 6)
    assert wait_for(lambda: [x for x in fired(bed) if x.get(HOT_OID) == link], seconds=90)
    assert not [x for x in fired(bed) if x.get(HOT_OID) == PM + "9." + index(sw, 5)]
