"""The hardware of every node, read in-band with NVIDIA's vendor MADs, on
the project's simulator (ibsim answers none of them), checked against
Debian's mstflint tools run through the same simulator (mstreg, mstlink:
Debian 13's, unpacked by scripts/install-deps, tests/tools/mstflint-run)
and infiniband-diags' vendstat:

  the simulator holds what mstreg and mstlink print (its console's values);
  ibsnmpd serves what they print: a switch's ASIC temperature, firmware,
  serial and part number; a module's vendor, part number, serial and
  per-lane Rx power, in IBSNMPD-MIB, in the switch's context (ENTITY-MIB,
  ENTITY-SENSOR-MIB, as SNMP::Info reads it) and in /metrics;
  a temperature over its threshold, a stopped fan, a module out and in, a
  lane's Rx power under its alarm each give one notification, and one more
  when they return.
Nodes of another vendor, silent, or without a register: test_vitals_mixed.py."""
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request

import pytest
import yaml

from conftest import (TOP, TRAP_OID, generated, guid_index, notifications, snmp_env,
                      start_testbed, stop_testbed, wait_for)
from prometheus_server import EXPORTER, PROMETHEUS, Prometheus, SnmpExporter, free_port

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
NODE = MIB + "1.7.1.1."     # ibsnmpdVitalsNodeEntry
TEMP = MIB + "1.7.2.1."     # ibsnmpdTemperatureEntry
FAN = MIB + "1.7.3.1."      # ibsnmpdFanEntry
MODULE = MIB + "1.7.4.1."   # ibsnmpdModuleEntry
LANE = MIB + "1.7.5.1."     # ibsnmpdModuleLaneEntry
NOTIFY = MIB + "0."
ENT_PHYSICAL = ".1.3.6.1.2.1.47.1.1.1.1."
ENT_LAST_CHANGE = ".1.3.6.1.2.1.47.1.4.1.0"
ENT_CONFIG_CHANGE = ".1.3.6.1.2.1.47.2.0.1"
ENT_SENSOR = ".1.3.6.1.2.1.99.1.1.1."
MSTFLINT_RUN = os.path.join(TOP, "tests", "tools", "mstflint-run")
SNMP_INFO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snmp_info_node.pl")
TEST_MIBS = os.path.join(TOP, "tests", "mibs")
BASE = os.environ.get("IBSNMPD_BASE_MIBS", "/var/cache/ibsnmpd-test/base-mibs")
CONF = ["cacheLifetime vitalsSensors 3", "notificationLimit 1000 60", "madTimeout 300",
        "cacheLifetime fabricPorts 3"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def mst(bed, tool, *args, node="host-1"):
    """One of Debian's mstflint tools attached to the simulated fabric."""
    out = subprocess.run(["env", "-C", bed.dir, "SIM_HOST=" + node,
                          "IBSIM_SOCKNAME=" + bed.ibsim_sockname, MSTFLINT_RUN, tool] +
                         list(args), capture_output=True, text=True, timeout=120)
    if out.returncode == 127:
        pytest.fail("mstflint-run: %s" % out.stderr)
    return ANSI.sub("", out.stdout + out.stderr)


def mstreg(bed, lid, reg, indexes=None):
    """{field: value} of mstreg --get."""
    args = ["-d", "lid-%d" % lid, "--reg_name", reg, "--get"]
    if indexes:
        args += ["--indexes", indexes]
    text = mst(bed, "mstreg", *args)
    res = {m.group(1): int(m.group(2), 16)
           for m in re.finditer(r"^(\S+)\s+\|\s+(0x[0-9a-f]+)\s*$", text, re.M)}
    assert res, text
    return res


def ascii_of(reg, name, dwords):
    """A text field mstreg prints as NAME[i] dwords."""
    raw = b"".join(reg["%s[%d]" % (name, i)].to_bytes(4, "big") for i in range(dwords))
    return raw.split(b"\0")[0].decode().rstrip()


def mstlink_module(bed, lid, port_arg=None):
    """{field: value} of mstlink -m's Module Info section."""
    args = ["-d", "lid-%d" % lid, "-m"] + (["-p", port_arg] if port_arg else [])
    text = mst(bed, "mstlink", *args)
    assert "Module Info" in text, text
    section = text.split("Module Info", 1)[1]
    return {k.strip(): v.strip() for k, v in re.findall(r"^([^:\n]+?)\s*:\s*(.*)$", section, re.M)}


def cell(bed, entry, column, index):
    oid = "%s%d.%s" % (entry, column, index)
    value = bed.get(oid)[oid][1]
    return None if value.startswith("No Such") else value.strip('"')


def traps_of(bed, oid, since=0):
    return [n for n in notifications(bed)[since:] if n.get(TRAP_OID) == oid]


METRICS_PORT = free_port()


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    # 32 hosts on one leaf (radix 64, NDR), 32 spines above it; snmpd with
    # conf/snmpd.conf.monitor, sampling every 3 s instead of 300
    with open(os.path.join(TOP, "conf", "snmpd.conf.monitor")) as f:
        monitor = re.sub(r"^monitor -r 300 ", "monitor -r 3 ", f.read(), flags=re.M)
    conf = tmp_path_factory.mktemp("monitor") / "snmpd.conf.monitor"
    conf.write_text(monitor)
    b = start_testbed(big={"hosts": 32}, snmpd_extra=["includeFile %s" % conf],
                      extra_conf=CONF + ["prometheusListen 127.0.0.1:%d" % METRICS_PORT])
    try:
        yield b
    finally:
        stop_testbed(b)


@pytest.fixture(scope="module")
def fabric(bed):
    nodes, _ = generated(bed)
    return {name: (guid, lid) for name, (_, guid, _, lid) in nodes.items()}


def read(bed, guid):
    """Whether the node's vitals have been read."""
    return cell(bed, NODE, 3, guid_index(guid)) == "1"


def test_the_simulator_answers_mstreg_and_mstlink_with_its_console_values(bed, fabric):
    guid, lid = fabric["leaf-1-1"]
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 61.5')
    mtmp = mstreg(bed, lid, "MTMP", "sensor_index=0")
    assert mtmp["temperature"] == round(61.5 * 8)          # 0.125 degree units
    assert mtmp["temperature_threshold_hi"] == 105 * 8
    mgir = mstreg(bed, lid, "MGIR")
    assert (mgir["extended_major"], mgir["extended_minor"], mgir["extended_sub_minor"]) == \
        (31, 2012, 4036)
    assert mgir["device_id"] == 0xd2f2 and mgir["hw_dev_id"] == 0x257
    bed.simfabric("sim", 'Fan "leaf-1-1" 3 0')
    assert mstreg(bed, lid, "MFSM", "tacho=3")["rpm"] == 0
    assert mstreg(bed, lid, "FORE")["fan_under_limit"] & 1 << 3
    bed.simfabric("sim", 'Fan "leaf-1-1" 3 auto')
    bed.simfabric("sim", 'Module "leaf-1-1"[35] RxPower 2 -3.5')
    module = mstlink_module(bed, lid, "18/1")  # cage 18, its first port: 35
    assert module["Vendor Name"] == "NVIDIA" and module["Vendor Part Number"] == "MMA4Z00-NS"
    rx = [float(v) for v in module["Rx Power Current [dBm]"].split()[0].split(",")]
    assert abs(rx[2] - -3.5) < 0.01, module
    bed.simfabric("sim", 'Module "leaf-1-1"[35] RxPower 2 auto')
    # vendstat (infiniband-diags) reads GeneralInfo: PSID and hardware
    out = bed.run_on_node("vendstat", "-N", str(lid))
    assert "fw_psid:     'MT_0000000838'" in out and "hw_dev_id:   0xd2f2" in out


def test_a_switch_as_mstreg_and_mstlink_show_it(bed, fabric):
    guid, lid = fabric["leaf-1-1"]
    index = guid_index(guid)
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 57.25')
    assert wait_for(lambda: cell(bed, NODE, 11, index) == "573", seconds=60)  # tenths
    assert mstreg(bed, lid, "MTMP", "sensor_index=0")["temperature"] == 57.25 * 8
    mgir = mstreg(bed, lid, "MGIR")
    assert cell(bed, NODE, 4, index) == "%d.%d.%d" % (mgir["extended_major"],
                                                       mgir["extended_minor"],
                                                       mgir["extended_sub_minor"])
    msgi = mstreg(bed, lid, "MSGI")
    assert cell(bed, NODE, 7, index) == ascii_of(msgi, "serial_number", 6)
    assert cell(bed, NODE, 8, index) == ascii_of(msgi, "part_number", 5) == "MQM9790-NS2F"
    # a module: port 33's cage (module 17 of 32: two ports a cage)
    module = mstlink_module(bed, lid, "17/1")
    m = "%s.17" % index
    assert cell(bed, MODULE, 3, m) == "33" and cell(bed, MODULE, 4, m) == "2"
    assert cell(bed, MODULE, 9, m) == module["Vendor Name"]
    assert cell(bed, MODULE, 10, m) == module["Vendor Part Number"]
    assert cell(bed, MODULE, 11, m) == module["Vendor Serial Number"]
    # per-lane Rx power, held still from the console
    for lane, dbm in enumerate((-1.25, -2.5, -4.0, -6.75)):
        bed.simfabric("sim", 'Module "leaf-1-1"[33] RxPower %d %s' % (lane, dbm))
    module = mstlink_module(bed, lid, "17/1")
    shown = [float(v) for v in module["Rx Power Current [dBm]"].split()[0].split(",")]
    served = lambda: [int(cell(bed, LANE, 5, "%s.33.%d" % (index, l))) for l in range(1, 5)]
    assert wait_for(lambda: all(abs(s / 100 - d) <= 0.02 for s, d in zip(served(), shown)),
                    seconds=60), (served(), shown)
    for lane in range(4):
        bed.simfabric("sim", 'Module "leaf-1-1"[33] RxPower %d auto' % lane)


def test_a_host_adapter_as_mstreg_and_mstlink_show_it(bed, fabric):
    guid, lid = fabric["host-3"]
    index = guid_index(guid)
    assert wait_for(lambda: read(bed, guid), seconds=60)
    mgir = mstreg(bed, lid, "MGIR", )
    assert cell(bed, NODE, 4, index) == "%d.%d.%d" % (mgir["extended_major"],
                                                       mgir["extended_minor"],
                                                       mgir["extended_sub_minor"])
    # an adapter is not asked for a system's inventory (MSGI) nor fans (MFCR)
    assert cell(bed, NODE, 19, index) == "" and cell(bed, NODE, 7, index) == ""
    assert cell(bed, NODE, 15, index) == "0" and cell(bed, NODE, 17, index) == "1"
    module = mstlink_module(bed, lid)
    assert cell(bed, MODULE, 9, "%s.1" % index) == module["Vendor Name"]
    assert cell(bed, MODULE, 10, "%s.1" % index) == module["Vendor Part Number"]
    assert cell(bed, MODULE, 8, "%s.1" % index) == "4"  # passive copper
    assert cell(bed, MODULE, 16, "%s.1" % index) is None  # no sensor in a copper cable


def test_the_switch_context_serves_its_inventory_and_sensors(bed, fabric):
    guid, lid = fabric["leaf-1-1"]
    context = "ib-%016x" % guid
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 48')
    assert wait_for(lambda: bed.v3_walk(context, ENT_SENSOR + "4").get(
        ENT_SENSOR + "4.3001", (None, None))[1] == "480", seconds=60)
    phys = bed.v3_walk(context, ENT_PHYSICAL[:-1])
    msgi = mstreg(bed, lid, "MSGI")
    assert phys[ENT_PHYSICAL + "11.1"][1].strip('"') == ascii_of(msgi, "serial_number", 6)
    assert phys[ENT_PHYSICAL + "13.1"][1].strip('"') == "MQM9790-NS2F"
    assert phys[ENT_PHYSICAL + "9.1"][1].strip('"') == "31.2012.4036"
    # module 17 (index 2017) is in port 33 (1033), a module(9) row
    assert phys[ENT_PHYSICAL + "4.2017"][1] == "1033"
    assert phys[ENT_PHYSICAL + "5.2017"][1] == "9"
    module = mstlink_module(bed, lid, "17/1")
    assert phys[ENT_PHYSICAL + "11.2017"][1].strip('"') == module["Vendor Serial Number"]
    # its sensors: temperature (celsius 8, tenths), lane Rx power (watts 6, micro 7)
    sensors = bed.v3_walk(context, ENT_SENSOR[:-1])
    assert sensors[ENT_SENSOR + "1.11601"][1] == "8" and sensors[ENT_SENSOR + "3.11601"][1] == "1"
    assert sensors[ENT_SENSOR + "1.11611"][1] == "6" and sensors[ENT_SENSOR + "2.11611"][1] == "7"
    assert sensors[ENT_SENSOR + "1.5001"][1] == "10"  # a fan's rpm
    # SNMP::Info, as Netdisco reads a device's inventory
    if not shutil.which("perl") or subprocess.run(["perl", "-MSNMP::Info", "-e", "1"]).returncode:
        pytest.skip("SNMP::Info (libsnmp-info-perl) not installed")
    base = next(os.path.join(d, "mibs") for d in
                [os.path.join(BASE, "usr/lib/erlang/lib", x)
                 for x in os.listdir(os.path.join(BASE, "usr/lib/erlang/lib"))]
                if os.path.isdir(os.path.join(d, "mibs")))
    v3 = bed.env["SNMP_V3_ARGS"].split()
    user, auth, priv = (v3[v3.index(flag) + 1] for flag in ("-u", "-A", "-X"))
    host, port = bed.target.replace("udp:", "").rsplit(":", 1)
    out = subprocess.run(["perl", SNMP_INFO, host, port, context, "%s:%s" % (base, TEST_MIBS),
                          user, auth, priv], capture_output=True, text=True,
                         env=dict(snmp_env(), MIBS=""), timeout=120)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["e_class"]["1"] == "chassis" and info["e_class"]["2017"] == "module"
    assert info["e_class"]["4001"] == "fan" and info["e_class"]["3001"] == "sensor"
    assert info["e_serial"]["1"] == ascii_of(msgi, "serial_number", 6)
    assert info["e_model"]["1"] == "MQM9790-NS2F"
    assert info["e_fwver"]["1"] == "31.2012.4036"
    assert info["e_serial"]["2017"] == module["Vendor Serial Number"]


def test_changes_give_one_notification_each_and_one_when_they_return(bed, fabric):
    guid, lid = fabric["leaf-1-1"]
    index = guid_index(guid)
    context = "ib-%016x" % guid
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 50')
    assert wait_for(lambda: cell(bed, NODE, 11, index) == "500", seconds=60)

    def once(command, oid, back, back_oid, check=None):
        since = len(notifications(bed))
        bed.simfabric("sim", command)
        assert wait_for(lambda: traps_of(bed, oid, since), seconds=60), command
        if check:
            check()
        bed.simfabric("sim", back)
        assert wait_for(lambda: traps_of(bed, back_oid, since), seconds=60), back
        time.sleep(8)  # two more sweeps: nothing told twice
        assert len(traps_of(bed, oid, since)) == 1 and len(traps_of(bed, back_oid, since)) == 1
        return traps_of(bed, oid, since)[0]

    # the ASIC over its threshold (105 degrees), back under its low one (100)
    n = once('Temperature "leaf-1-1" 0 107', NOTIFY + "8", 'Temperature "leaf-1-1" 0 95',
             NOTIFY + "9")
    assert n["%s4.%s.1" % (TEMP, index)] == "1070"
    assert n["%s2.%s" % (NODE, index)] == "leaf-1-1"
    # a fan stopped, then turning again
    once('Fan "leaf-1-1" 5 0', NOTIFY + "10", 'Fan "leaf-1-1" 5 auto', NOTIFY + "11",
         check=lambda: cell(bed, FAN, 5, "%s.6" % index) == "1")
    # a module out (its cage's links go down) and in: ENTITY-MIB follows
    before = bed.v3(*["snmpget", context, ENT_LAST_CHANGE]).stdout
    serial = cell(bed, MODULE, 11, "%s.20" % index)

    def out_of_entity_mib():
        assert wait_for(lambda: ENT_PHYSICAL + "2.2020" not in bed.v3_walk(
            context, ENT_PHYSICAL + "2"), seconds=60)
        assert bed.v3(*["snmpget", context, ENT_LAST_CHANGE]).stdout != before
    n = once('Module "leaf-1-1"[39] Remove', NOTIFY + "12", 'Module "leaf-1-1"[39] Insert',
             NOTIFY + "13", check=out_of_entity_mib)
    assert n["%s11.%s.20" % (MODULE, index)] == serial   # the one taken out
    assert n["%s3.%s.20" % (MODULE, index)] == "39"
    assert wait_for(lambda: ENT_PHYSICAL + "2.2020" in bed.v3_walk(context, ENT_PHYSICAL + "2"),
                    seconds=60)
    assert any(t.get(TRAP_OID) == ENT_CONFIG_CHANGE for t in notifications(bed))
    # a module faulted, then well again
    once('Module "leaf-1-1"[41] Fault', NOTIFY + "14", 'Module "leaf-1-1"[41] Insert',
         NOTIFY + "13")
    # a lane's Rx power under the module's low alarm (-10 dBm), back over it by 1 dB
    n = once('Module "leaf-1-1"[45] RxPower 1 -12.5', NOTIFY + "15",
             'Module "leaf-1-1"[45] RxPower 1 -2', NOTIFY + "16",
             check=lambda: cell(bed, LANE, 10, "%s.45.2" % index) == "1")
    # -12.5 dBm is 56 uW as the module counts: -12.52 dBm
    assert abs(int(n["%s5.%s.45.2" % (LANE, index)]) - -1250) <= 3
    assert n["%s23.%s.23" % (MODULE, index)] == "-1000"
    bed.simfabric("sim", 'Module "leaf-1-1"[45] RxPower 1 auto')
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 auto')


def test_lost_mads_take_no_module_out_of_entity_mib(bed, fabric):
    """A fifth of the MADs to a switch lost for four sweeps: a module whose
    reads went unanswered stays as it was, stale (a lost MAD is no module
    pulled out): its context's entities do not change, and no
    entConfigChange names it"""
    guid, lid = fabric["spine-1-1"]
    context = "ib-%016x" % guid
    modules = lambda: sorted(k for k in bed.v3_walk(context, ENT_PHYSICAL + "2")  # noqa: E731
                             if 2000 < int(k.rsplit(".", 1)[1]) < 3000)
    assert wait_for(lambda: modules(), seconds=60)
    time.sleep(4)  # a sweep more: its modules all read
    before, changed = modules(), bed.v3(*["snmpget", context, ENT_LAST_CHANGE]).stdout
    since = len(notifications(bed))
    bed.simfabric("sim", 'Error "spine-1-1"[0] 20')
    try:
        time.sleep(12)  # cacheLifetime vitalsSensors 3
    finally:
        bed.simfabric("sim", 'Error "spine-1-1"[0] 0')
    time.sleep(6)
    assert modules() == before
    assert bed.v3(*["snmpget", context, ENT_LAST_CHANGE]).stdout == changed
    assert not [t for t in traps_of(bed, ENT_CONFIG_CHANGE, since)
                if any(v == context or v == '"%s"' % context for v in t.values())], \
        traps_of(bed, ENT_CONFIG_CHANGE, since)


def test_snmpd_monitor_warns_under_the_device_threshold(bed, fabric):
    """conf/snmpd.conf.monitor's hardware lines, in the bed's snmpd: an ASIC
    at 95 degrees (over the file's 90, under the device's 105) makes snmpd
    send mteTriggerFired naming the node's row; ibsnmpd tells nothing."""
    guid, _ = fabric["leaf-1-1"]
    index = guid_index(guid)
    since = len(notifications(bed))
    fired = ".1.3.6.1.2.1.88.2.0.1"   # DISMAN-EVENT-MIB::mteTriggerFired
    hot_oid = ".1.3.6.1.2.1.88.2.1.4.0"
    asic = NODE + "11." + index
    # under 90 first, for a sample of snmpd's (every 3 s): a trigger fires
    # once, and again only after a sample under its threshold
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 50')
    assert wait_for(lambda: cell(bed, NODE, 11, index) == "500", seconds=60)
    time.sleep(4)
    since = len(notifications(bed))
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 95')
    try:
        assert wait_for(lambda: [n for n in traps_of(bed, fired, since)
                                 if n.get(hot_oid) == asic], seconds=60)
        n = [n for n in traps_of(bed, fired, since) if n.get(hot_oid) == asic][0]
        assert n[".1.3.6.1.2.1.88.2.1.5.0"] == "950"          # mteHotValue
        assert n[NODE + "2." + index] == "leaf-1-1"
        assert not traps_of(bed, NOTIFY + "8", since)
    finally:
        bed.simfabric("sim", 'Temperature "leaf-1-1" 0 auto')


def metrics(bed, query=""):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics%s" % (METRICS_PORT, query),
                                timeout=30) as r:
        return r.read().decode()


def test_metrics_say_what_mstreg_and_mstlink_say(bed, fabric):
    guid, lid = fabric["leaf-1-1"]
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 53.5')
    bed.simfabric("sim", 'Module "leaf-1-1"[49] RxPower 0 -5.25')
    index = guid_index(guid)
    # -5.25 dBm: 299 uW as the module counts them
    assert wait_for(lambda: cell(bed, NODE, 11, index) == "535" and
                    abs(int(cell(bed, LANE, 5, "%s.49.1" % index)) - -525) <= 3, seconds=60)
    text = metrics(bed)
    g = "0x%016x" % guid
    assert re.search(r'^infiniband_switch_temperature_celsius\{[^}]*guid="%s"[^}]*\} 53\.5$' % g,
                     text, re.M), text[:2000]
    mgir = mstreg(bed, lid, "MGIR")
    fw = "%d.%d.%d" % (mgir["extended_major"], mgir["extended_minor"], mgir["extended_sub_minor"])
    info = [l for l in text.splitlines() if l.startswith("infiniband_switch_hardware_info{") and
            'guid="%s"' % g in l]
    assert info and 'firmware_version="%s"' % fw in info[0] and \
        'part_number="MQM9790-NS2F"' in info[0], info
    module = mstlink_module(bed, lid, "25/1")
    rx = float(module["Rx Power Current [dBm]"].split()[0].split(",")[0])
    m = re.search(r'^infiniband_module_rx_power_dbm\{[^}]*guid="%s"[^}]*port="49"[^}]*lane="1"'
                  r'[^}]*\} (\S+)$' % g, text, re.M)
    assert m and abs(float(m.group(1)) - rx) <= 0.02, (m and m.group(0), rx)
    bed.simfabric("sim", 'Module "leaf-1-1"[49] RxPower 0 auto')
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 auto')


def test_prometheus_scrapes_the_hardware_in_shards_and_its_alert_fires(bed, fabric):
    """Debian's Prometheus with conf/prometheus/prometheus.yml's hardware
    job (only the vitals and modules collectors, the fabric in two shards:
    two targets, one shard each), pointed at the bed; the project's rules."""
    if not PROMETHEUS:
        pytest.skip("prometheus not installed")
    guid, _ = fabric["leaf-1-1"]
    g = "0x%016x" % guid
    example = yaml.safe_load(open(os.path.join(TOP, "conf", "prometheus", "prometheus.yml")))
    job = [j for j in example["scrape_configs"] if j["job_name"] == "ibsnmpd-hardware"][0]
    assert job["params"]["shards"] == ["2"] and len(job["static_configs"]) == 2
    for targets in job["static_configs"]:
        targets["targets"] = ["127.0.0.1:%d" % METRICS_PORT]
    job.update(scrape_interval="1s", scrape_timeout="1s")
    job = "".join("  " + line + "\n" for line in yaml.safe_dump([job]).splitlines())
    whole = metrics(bed, "?collect[]=modules")
    lanes = len(re.findall(r"^infiniband_module_rx_power_dbm\{", whole, re.M))
    p = Prometheus(job, free_port())
    try:
        assert p.wait_scraped(targets=2), p.log_text()
        # a target is reported up before its scrape's samples are committed:
        # wait for them (a big scrape on a loaded machine takes a while)
        count = "count by (shard) (infiniband_module_rx_power_dbm)"
        assert wait_for(lambda: sum(p.query(count).values()) == lanes, seconds=60), \
            p.query(count)
        by_shard = p.query(count)
        assert len(by_shard) == 2 and all(v > 0 for v in by_shard.values()), by_shard
        assert not p.query("count({__name__=~\"infiniband_port_.*\"})")  # not collected
        assert p.one('infiniband_node_vitals_info{node_guid="%s",status="read"}' % g) == 1
        bed.simfabric("sim", 'Temperature "leaf-1-1" 0 107')
        assert wait_for(lambda: [a for a in p.alerts("InfiniBandTemperatureHigh")
                                 if a["labels"]["node_guid"] == g], seconds=60), p.log_text()
        alert = [a for a in p.alerts("InfiniBandTemperatureHigh")
                 if a["labels"]["node_guid"] == g][0]
        assert alert["labels"]["sensor"] == "1" and alert["value"].startswith("1.07e+02")
    finally:
        bed.simfabric("sim", 'Temperature "leaf-1-1" 0 auto')
        p.stop()


def test_snmp_exporter_scrapes_the_hardware_module(bed, fabric):
    """Debian's snmp_exporter with the project's module ibsnmpd_hardware,
    through snmpd: an ASIC's temperature as mstreg reads MTMP, a lane's Rx
    power as mstlink shows it, with the node's description."""
    if not EXPORTER:
        pytest.skip("prometheus-snmp-exporter not installed")
    guid, lid = fabric["leaf-1-1"]
    g = "0x%016x" % guid
    bed.simfabric("sim", 'Temperature "leaf-1-1" 0 47.5')
    bed.simfabric("sim", 'Module "leaf-1-1"[49] RxPower 0 -3.5')
    index = guid_index(guid)
    assert wait_for(lambda: cell(bed, NODE, 11, index) == "475" and
                    abs(int(cell(bed, LANE, 5, "%s.49.1" % index)) - -350) <= 3, seconds=60)
    e = SnmpExporter(free_port())
    try:
        assert e.wait_up(), "snmp_exporter did not start"
        samples = e.scrape("ibsnmpd_hardware", bed.target.replace("udp:", ""))
        mtmp = mstreg(bed, lid, "MTMP", "sensor_index=0")
        module = mstlink_module(bed, lid, "25/1")
    finally:
        e.stop()
        bed.simfabric("sim", 'Module "leaf-1-1"[49] RxPower 0 auto')
        bed.simfabric("sim", 'Temperature "leaf-1-1" 0 auto')

    def one(name, **labels):
        key = ("ibsnmpdTemperatureNodeGuid" if name.startswith("ibsnmpdTemperature") else
               "ibsnmpdModuleLaneNodeGuid")
        found = [v for n, l, v in samples if n == name and l.get(key, "").lower() == g and
                 all(l.get(k) == v for k, v in labels.items())]
        assert len(found) == 1, (name, labels, len(found))
        return found[0]
    temp = one("ibsnmpdTemperatureValue", ibsnmpdTemperatureSensor="1",
               ibsnmpdVitalsNodeDescription="leaf-1-1")
    assert temp == round(mtmp["temperature"] * 10 / 8)
    rx = float(module["Rx Power Current [dBm]"].split()[0].split(",")[0])
    power = one("ibsnmpdModuleLaneRxPower", ibsnmpdModuleLanePort="49", ibsnmpdModuleLaneNum="1")
    assert abs(power / 100 - rx) <= 0.02, (power, rx)
