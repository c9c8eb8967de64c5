"""Prometheus through Debian's snmp_exporter with the project's module
(conf/prometheus/snmp.yml): a scrape of the simulated fabric, checked against
perfquery and smpquery; the example rules name metrics the module has; the
module is what the generator makes of generator.yml and the MIB modules."""
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import urllib.request

import pytest
import yaml

from conftest import TOP, fields, node_guids, start_testbed, stop_testbed, wait_for

PROM = os.path.join(TOP, "conf", "prometheus")
EXPORTER = shutil.which("prometheus-snmp-exporter")
GENERATOR = shutil.which("prometheus-snmp-generator")
BASE = os.environ.get("IBSNMPD_BASE_MIBS", "/var/cache/ibsnmpd-test/base-mibs")
SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    port = free_port()
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([EXPORTER, "--config.file=" + os.path.join(PROM, "snmp.yml"),
                             "--web.listen-address=127.0.0.1:%d" % port],
                            stdout=log, stderr=log, cwd=tempfile.gettempdir())
    try:
        url = "http://127.0.0.1:%d" % port

        def up():
            try:
                return urllib.request.urlopen(url + "/metrics", timeout=2).status == 200
            except OSError:
                return False
        assert wait_for(up, seconds=30), "snmp_exporter did not start"
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def scrape(url, bed):
    target = bed.target.replace("udp:", "")
    with urllib.request.urlopen("%s/snmp?module=ibsnmpd&target=%s" % (url, target),
                                timeout=60) as r:
        text = r.read().decode()
    samples = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            samples.append((m.group(1), labels, float(m.group(3))))
    return samples


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


def test_the_example_rules_and_scrape_config_name_what_the_module_has():
    module = yaml.safe_load(open(os.path.join(PROM, "snmp.yml")))["ibsnmpd"]
    names = {m["name"] for m in module["metrics"]}
    rules = yaml.safe_load(open(os.path.join(PROM, "ibsnmpd-snmp-rules.yml")))
    for rule in rules["groups"][0]["rules"]:
        used = set(re.findall(r"\bibsnmpd\w+", rule["expr"]))
        assert used and used <= names, (rule["alert"], used - names)
    scrape_conf = yaml.safe_load(open(os.path.join(PROM, "prometheus-snmp-exporter.yml")))
    assert scrape_conf["scrape_configs"][0]["params"]["module"] == ["ibsnmpd"]
    labels = {i["labelname"] for m in module["metrics"] for i in m.get("indexes", [])}
    labels |= {l["labelname"] for m in module["metrics"] for l in m.get("lookups", [])}
    assert {"ibsnmpdPmNodeGuid", "ibsnmpdPmPortNum", "ibsnmpdPmNodeDescription",
            "ibsnmpdFabricPortNodeGuid", "ibsnmpdFabricPortNum",
            "ibsnmpdFabricPortNodeDescription"} <= labels


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

