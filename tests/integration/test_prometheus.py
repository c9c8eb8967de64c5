"""Prometheus through Debian's snmp_exporter with the project's module
(conf/prometheus/snmp.yml): a scrape of the simulated fabric, checked against
perfquery and smpquery; the example rules name metrics the module has; the
module is what the generator makes of generator.yml and the MIB modules."""
import glob
import os
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import TOP, fields, node_guids, start_testbed, stop_testbed, wait_for
from prometheus_server import EXPORTER, SnmpExporter, free_port

PROM = os.path.join(TOP, "conf", "prometheus")
GENERATOR = shutil.which("prometheus-snmp-generator")
BASE = os.environ.get("IBSNMPD_BASE_MIBS", "/var/cache/ibsnmpd-test/base-mibs")


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(node="hca1", extra_conf=["cacheLifetime pmCounters 2",
                                               "cacheLifetime fabricPorts 2"])
    try:
        yield b
    finally:
        stop_testbed(b)


@pytest.fixture(scope="module")
def exporter():
    if not EXPORTER:
        pytest.skip("prometheus-snmp-exporter not installed")
    e = SnmpExporter(free_port())
    try:
        assert e.wait_up(), "snmp_exporter did not start"
        yield e
    finally:
        e.stop()


def scrape(exporter, bed):
    return exporter.scrape("ibsnmpd", bed.target.replace("udp:", ""))


def guid_label(guid):
    return "0x%016x" % guid


def one(samples, name, node, port):
    found = [v for n, l, v in samples if n == name and l.get("ibsnmpdPmNodeDescription",
             l.get("ibsnmpdFabricPortNodeDescription")) == node and
             l.get("ibsnmpdPmPortNum", l.get("ibsnmpdFabricPortNum")) == str(port)]
    return found[0] if len(found) == 1 else None


def test_a_scrape_shows_every_port_with_its_labels_and_counters(bed, exporter):
    guids = node_guids(bed)
    sw_guid, sw_lid = guids["sw1"]
    set_to = 123456789012
    bed.simfabric("sim", 'PerformanceSet "sw1"[2] PortCountersExtended.PortXmitData=%d' % set_to)

    def scraped():
        v = one(scrape(exporter, bed), "ibsnmpdPmXmitOctets", "sw1", 2)
        return v if v is not None and v >= set_to * 4 else None
    assert wait_for(scraped, seconds=60)
    samples = scrape(exporter, bed)
    octets = one(samples, "ibsnmpdPmXmitOctets", "sw1", 2)
    ext = fields(bed.run_on_node("perfquery", "-x", str(sw_lid), "2"))
    # the simulator counts its own MAD traffic: perfquery, read later, may be ahead
    assert set_to * 4 <= octets <= int(ext["PortXmitData"]) * 4
    # labels: GUID, port and description of the node, on both tables
    row = [l for n, l, v in samples if n == "ibsnmpdPmXmitOctets" and
           l.get("ibsnmpdPmNodeDescription") == "sw1" and l.get("ibsnmpdPmPortNum") == "2"][0]
    assert row["ibsnmpdPmNodeGuid"] == guid_label(sw_guid)
    ports = {(l.get("ibsnmpdPmNodeDescription"), l.get("ibsnmpdPmPortNum"))
             for n, l, v in samples if n == "ibsnmpdPmXmitOctets"}
    assert len(ports) == 11  # sw1's 8 ports and the three CAs'
    # a link's state as smpquery reads it (LinkState: 4 Active)
    hca1_lid = guids["hca1"][1]
    info = fields(bed.run_on_node("smpquery", "portinfo", str(hca1_lid), "1"))
    state = one(samples, "ibsnmpdFabricPortLinkState", "hca1", 1)
    assert state == 4 and info["LinkState"] == "Active"


def test_the_example_rules_and_scrape_config_name_what_the_modules_have():
    modules = yaml.safe_load(open(os.path.join(PROM, "snmp.yml")))
    names = {m: {x["name"] for x in modules[m]["metrics"]} for m in modules}
    rules = yaml.safe_load(open(os.path.join(PROM, "ibsnmpd-snmp-rules.yml")))
    # a group of rules for each module, in the scrape config's order
    scrape_conf = yaml.safe_load(open(os.path.join(PROM, "prometheus-snmp-exporter.yml")))
    jobs = [job["params"]["module"][0] for job in scrape_conf["scrape_configs"]]
    assert jobs == ["ibsnmpd", "ibsnmpd_hardware"] and len(rules["groups"]) == 2
    for module, group in zip(jobs, rules["groups"]):
        for rule in group["rules"]:
            used = set(re.findall(r"\bibsnmpd\w+", rule["expr"]))
            assert used and used <= names[module], (rule["alert"], used - names[module])
    labels = {m: {i["labelname"] for x in modules[m]["metrics"] for i in x.get("indexes", [])} |
              {l["labelname"] for x in modules[m]["metrics"] for l in x.get("lookups", [])}
              for m in modules}
    assert {"ibsnmpdPmNodeGuid", "ibsnmpdPmPortNum", "ibsnmpdPmNodeDescription",
            "ibsnmpdFabricPortNodeGuid", "ibsnmpdFabricPortNum",
            "ibsnmpdFabricPortNodeDescription"} <= labels["ibsnmpd"]
    # every label of the hardware module is renamed by the scrape config
    relabel = scrape_conf["scrape_configs"][1]["metric_relabel_configs"]
    for label in labels["ibsnmpd_hardware"]:
        assert any(r["action"] == "labelmap" and re.fullmatch(r["regex"], label)
                   for r in relabel), label
        assert re.fullmatch(relabel[-1]["regex"], label), label


def test_the_module_is_what_the_generator_makes_of_the_mibs(tmp_path):
    if not GENERATOR:
        pytest.skip("prometheus-snmp-generator not installed")
    base = glob.glob(os.path.join(BASE, "usr/lib/erlang/lib/snmp-*/mibs"))
    if not base:
        pytest.skip("base MIB modules not extracted to %s (run scripts/install-deps)" % BASE)
    shutil.copy(os.path.join(PROM, "generator.yml"), tmp_path)
    env = dict(os.environ, MIBDIRS="%s:/usr/share/snmp/mibs:%s" % (base[0],
                                                                    os.path.join(TOP, "mibs")))
    out = subprocess.run([GENERATOR, "generate"], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "snmp.yml").read_text() == open(os.path.join(PROM, "snmp.yml")).read()

