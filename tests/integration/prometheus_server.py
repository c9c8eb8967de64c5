"""Debian's prometheus on a loopback port, scraping every second with the
project's rules (conf/prometheus/ibsnmpd-rules.yml, their `for:` shortened
to seconds), and Debian's snmp_exporter with the project's modules
(conf/prometheus/snmp.yml); the tests read their HTTP APIs. Both stopped
by their PIDs."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request

from conftest import TOP, wait_for
from simfabric.bed import free_port as bed_free_port

PROM = os.path.join(TOP, "conf", "prometheus")
PROMETHEUS = shutil.which("prometheus")
EXPORTER = shutil.which("prometheus-snmp-exporter")
SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')


def free_port():
    """A loopback TCP port free now (for a listener the test starts; below
    the ephemeral range, simfabric.bed.free_port says why)"""
    return bed_free_port()


class Prometheus:
    def __init__(self, scrape_configs, port):
        """scrape_configs: the YAML list under scrape_configs:"""
        self.dir = tempfile.mkdtemp(prefix="ibsnmpd-prometheus.")
        self.port = port
        self.url = "http://127.0.0.1:%d" % self.port
        rules = open(os.path.join(PROM, "ibsnmpd-rules.yml")).read()
        rules = re.sub(r"for: \d+m", "for: 3s", rules)
        with open(os.path.join(self.dir, "ibsnmpd-rules.yml"), "w") as f:
            f.write(rules)
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "  evaluation_interval: 1s\nscrape_configs:\n%s"
                    "rule_files:\n  - ibsnmpd-rules.yml\n" % scrape_configs)
        self.log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + os.path.join(self.dir, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=self.log, cwd=self.dir)

    def api(self, path, **params):
        url = "%s/api/v1/%s?%s" % (self.url, path, urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)["data"]

    def query(self, expr):
        """{frozenset(labels): value} of an instant query."""
        return {frozenset(r["metric"].items()): float(r["value"][1])
                for r in self.api("query", query=expr)["result"]}

    def one(self, expr):
        found = list(self.query(expr).values())
        return found[0] if len(found) == 1 else None

    def alerts(self, name):
        return [a for a in self.api("alerts")["alerts"]
                if a["labels"]["alertname"] == name and a["state"] == "firing"]

    def wait_scraped(self, targets=1):
        """Every target up; False after a minute."""
        def up():
            try:
                active = self.api("targets")["activeTargets"]
            except OSError:
                return False
            return len(active) == targets and all(t["health"] == "up" for t in active)
        return wait_for(up, seconds=60)

    def log_text(self):
        self.log.flush()
        return open(os.path.join(self.dir, "prometheus.log")).read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def scrape_job(name, target, extra=""):
    """One job of scrape_configs, one target"""
    return ("  - job_name: %s\n%s    static_configs:\n      - targets: ['%s']\n" %
            (name, extra, target))


class SnmpExporter:
    def __init__(self, port):
        self.url = "http://127.0.0.1:%d" % port
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [EXPORTER, "--config.file=" + os.path.join(PROM, "snmp.yml"),
             "--web.listen-address=127.0.0.1:%d" % port],
            stdout=self.log, stderr=self.log, cwd=tempfile.gettempdir())

    def wait_up(self):
        def up():
            try:
                return urllib.request.urlopen(self.url + "/metrics", timeout=2).status == 200
            except OSError:
                return False
        return wait_for(up, seconds=30)

    def scrape(self, module, target):
        """[(name, {label: value}, value)] of one /snmp scrape"""
        with urllib.request.urlopen("%s/snmp?module=%s&target=%s" % (self.url, module, target),
                                    timeout=90) as r:
            text = r.read().decode()
        samples = []
        for line in text.splitlines():
            m = SAMPLE.match(line)
            if m:
                labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
                samples.append((m.group(1), labels, float(m.group(3))))
        return samples

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
