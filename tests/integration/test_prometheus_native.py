"""ibsnmpd's own /metrics (prometheusListen), scraped by Debian's Prometheus
(2.42) started here: a port's transmitted octets against perfquery -x, an
unlinked port's state and the InfiniBandLinkDown alert of
conf/prometheus/ibsnmpd-rules.yml firing in Prometheus; promtool's lint on a
scrape and its unit tests of the rules; access by address; malformed and
slow HTTP clients leave the daemon serving (a direct-mode bed: both modes
serve /metrics)."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import (fields, ibsnmpd_bin, node_guids, snmp_env, start_testbed,
                      stop_testbed, wait_for)
from prometheus_server import PROM, PROMETHEUS, Prometheus, free_port, scrape_job

PROMTOOL = shutil.which("promtool")
SYS_UPTIME = ".1.3.6.1.2.1.1.3.0"


def fetch(url, accept=None, timeout=30):
    """(status, content type, body) of a GET."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def served(url):
    """Whether url answers 200 now: a refused or reset connection (an
    address the listener does not let in yet) is a no, not an error."""
    try:
        return fetch(url, timeout=10)[0] == 200
    except OSError:
        return False


def start_bed(direct=False):
    port = free_port()
    bed = start_testbed(node="hca1", direct=direct, extra_conf=[
        "prometheusListen 127.0.0.1:%d" % port,
        "cacheLifetime pmCounters 2", "cacheLifetime fabricPorts 2"])
    bed.metrics_url = "http://127.0.0.1:%d/metrics" % port
    return bed


@pytest.fixture(scope="module")
def bed():
    b = start_bed()
    try:
        yield b
    finally:
        stop_testbed(b)


@pytest.fixture(scope="module")
def prometheus(bed):
    if not PROMETHEUS:
        pytest.skip("prometheus not installed")
    p = Prometheus(scrape_job("ibsnmpd", bed.metrics_url.split("/")[2]), free_port())
    try:
        assert p.wait_scraped(), p.log_text()
        yield p
    finally:
        p.stop()


def test_transmitted_octets_are_perfquery_data_times_four(bed, prometheus):
    guids = node_guids(bed)
    sw, sw_lid = guids["sw1"]
    bed.simfabric("sim", 'PerformanceSet "sw1"[2] PortCountersExtended.PortXmitData=987654321')
    # PortXmitData counts 4-octet words; the simulator counts its own MADs,
    # so the counter only rises: read before, then Prometheus, then after
    before = int(fields(bed.run_on_node("perfquery", "-x", str(sw_lid), "2"))["PortXmitData"])
    expr = 'infiniband_port_transmit_bytes_total{node_guid="0x%016x",port="2"}' % sw
    assert wait_for(lambda: (prometheus.one(expr) or 0) >= before * 4, seconds=60)
    value = prometheus.one(expr)
    after = int(fields(bed.run_on_node("perfquery", "-x", str(sw_lid), "2"))["PortXmitData"])
    assert before * 4 <= value <= after * 4
    # the labels: the node as ibnetdiscover names it
    labels = dict(next(iter(prometheus.query(expr))))
    assert labels["node"] == "sw1" and labels["port"] == "2"
    # the scrape is OpenMetrics (Prometheus' first choice), and healthy
    target = prometheus.api("targets")["activeTargets"][0]
    assert target["health"] == "up" and target["lastError"] == ""


def test_an_unlinked_port_is_down_and_its_alert_fires(bed, prometheus):
    """The switch's end of hca2's cable: its PortInfo is read at every link
    sweep (hca2 itself is out of reach once unlinked)."""
    guids = node_guids(bed)
    sw, sw_lid = guids["sw1"]
    to_hca2 = 'infiniband_port_info{node="sw1",remote_node="hca2"}'
    assert wait_for(lambda: prometheus.query(to_hca2), seconds=60)
    port = dict(next(iter(prometheus.query(to_hca2))))["port"]
    state = 'infiniband_port_link_state{node_guid="0x%016x",port="%s"}' % (sw, port)
    assert wait_for(lambda: prometheus.one(state) == 4, seconds=60)
    bed.simfabric("sim", 'Unlink "hca2"[1]')
    try:
        assert wait_for(lambda: prometheus.one(state) == 1, seconds=60)
        info = fields(bed.run_on_node("smpquery", "portinfo", str(sw_lid), port))
        assert info["LinkState"] == "Down"

        def firing():
            return [a for a in prometheus.api("alerts")["alerts"]
                    if a["labels"]["alertname"] == "InfiniBandLinkDown" and
                    a["state"] == "firing" and a["labels"]["node"] == "sw1"]
        assert wait_for(firing, seconds=60)
        alert = firing()[0]
        assert alert["labels"]["port"] == port
        assert alert["labels"]["node_guid"] == "0x%016x" % sw
        # the other end, from infiniband_port_info
        assert alert["labels"]["remote_node"] == "hca2"
        assert alert["labels"]["remote_port"] == "1"
        assert alert["annotations"]["summary"] == "sw1 port %s: link down" % port
    finally:
        bed.simfabric("sim", 'ReLink "hca2"[1]')
    assert wait_for(lambda: prometheus.one(state) == 4, seconds=60)


def test_a_scrape_passes_promtool_and_serves_no_series_twice(bed):
    if not PROMTOOL:
        pytest.skip("promtool not installed")
    status, ctype, text = fetch(bed.metrics_url)
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
    out = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and not out.stdout.strip() and not out.stderr.strip(), \
        out.stdout + out.stderr
    samples = [l.rsplit(" ", 1)[0] for l in text.splitlines() if l and not l.startswith("#")]
    assert len(samples) == len(set(samples))
    # every port ibnetdiscover shows has its counters (a port back from the
    # test before: at the counters' sweep after the topology took it)
    def ports():
        text = fetch(bed.metrics_url)[2]
        return set(re.findall(r'^infiniband_port_receive_bytes_total\{node_guid="0x[0-9a-f]+",'
                              r'node="([^"]*)",port="(\d+)"\}', text, re.M))
    expect = set()
    for line in bed.run_on_node("ibnetdiscover", "-p").splitlines():
        # "CA 2 1 0x0000000000100001 4x SDR - SW 1 1 0x... ( 'hca1' - 'sw1' )"
        m = re.match(r"^(?:SW|CA)\s+\d+\s+(\d+)\s+0x[0-9a-f]+.*\( '([^']*)'", line)
        if m:
            expect.add((m.group(2), m.group(1)))
    assert expect and wait_for(lambda: expect <= ports(), seconds=30), expect - ports()
    # OpenMetrics when asked
    status, ctype, om = fetch(bed.metrics_url, accept="application/openmetrics-text;"
                              "version=1.0.0,text/plain;version=0.0.4;q=0.5")
    assert ctype.startswith("application/openmetrics-text; version=1.0.0")
    assert om.endswith("# EOF\n")
    assert "# TYPE infiniband_port_transmit_bytes counter\n" in om


def test_the_rules_pass_their_unit_tests():
    if not PROMTOOL:
        pytest.skip("promtool not installed")
    out = subprocess.run([PROMTOOL, "test", "rules", "ibsnmpd-rules.test.yml"], cwd=PROM,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    # every rule of the file has a test
    rules = set(re.findall(r"^\s+- alert: (\w+)", open(os.path.join(PROM,
                                                                    "ibsnmpd-rules.yml")).read(),
                           re.M))
    tested = set(re.findall(r"alertname: (\w+)", open(os.path.join(PROM,
                                                                   "ibsnmpd-rules.test.yml")).read()))
    assert rules and rules == tested
    for f in ("ibsnmpd-rules.yml", "ibsnmpd-snmp-rules.yml"):
        out = subprocess.run([PROMTOOL, "check", "rules", f], cwd=PROM, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr


def refused_connection(url):
    """Whether a connection to url is closed without an answer."""
    host, port = url.split("/")[2].split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            return s.recv(100) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def test_only_the_allowed_addresses_may_scrape(bed, tmp_path):
    conf = bed.path("ibsnmpd.conf")
    original = open(conf).read()
    offset = bed.log_size()
    # a list without loopback: loopback is refused, after a SIGHUP
    with open(conf, "a") as f:
        f.write("prometheusAllow 192.0.2.0/24 2001:db8::/32\n")
    os.kill(bed.pid, signal.SIGHUP)
    try:
        assert wait_for(lambda: refused_connection(bed.metrics_url), seconds=30)
        assert wait_for(lambda: any("refused" in l and "prometheusAllow" in l
                                    for l in bed.log_since(offset)), seconds=10)
        assert bed.get(SYS_UPTIME)  # SNMP goes on
    finally:
        with open(conf, "w") as f:
            f.write(original)
        os.kill(bed.pid, signal.SIGHUP)
    assert wait_for(lambda: served(bed.metrics_url), seconds=30)
    # a listener beyond loopback without prometheusAllow does not start
    path = tmp_path / "ibsnmpd.conf"
    path.write_text("prometheusListen 0.0.0.0:%d\n" % free_port())
    out = subprocess.run([ibsnmpd_bin(), "-f", "-Le", "-c", str(path), "-x",
                          "unix:%s/none.sock" % tmp_path], capture_output=True, text=True,
                         env=snmp_env(), timeout=60)
    assert out.returncode == 1, out.stderr
    assert "refusing to start without prometheusAllow" in out.stderr
    # a bad line names its file and line
    path.write_text("madTimeout 500\nprometheusListen localhost:9683\n")
    out = subprocess.run([ibsnmpd_bin(), "-f", "-Le", "-c", str(path), "-x",
                          "unix:%s/none.sock" % tmp_path], capture_output=True, text=True,
                         env=snmp_env(), timeout=60)
    assert out.returncode == 1
    assert re.search(r"ibsnmpd.conf: line 2: .*prometheusListen", out.stderr), out.stderr


def raw_request(url, data, read_timeout=10):
    """What the listener answers to the octets data (b'' if it closes)."""
    host, port = url.split("/")[2].split(":")
    with socket.create_connection((host, int(port)), timeout=read_timeout) as s:
        try:
            s.sendall(data)
        except (ConnectionResetError, BrokenPipeError):
            return b""
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        return got


def test_bad_and_slow_clients_leave_the_daemon_serving():
    bed = start_bed(direct=True)
    held = []
    try:
        url = bed.metrics_url
        base = "http://" + url.split("/")[2]
        assert fetch(base + "/nowhere")[0] == 404
        assert fetch(base + "/")[0] == 200
        answer = raw_request(url, b"DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 405") and b"Allow: GET, HEAD" in answer
        # a header larger than the listener keeps for a request: refused or closed
        answer = raw_request(url, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                             b"a" * 200000 + b"\r\n\r\n")
        assert answer == b"" or re.match(rb"HTTP/1\.1 4\d\d", answer), answer[:100]
        for junk in (b"\x00\x01\x02\x03 nonsense\r\n\r\n", b"GET\r\n\r\n",
                     b"GET /metrics HTTP/9.9\r\n\r\n", b"GET /metrics HTTP/1.1\r\n" * 50):
            answer = raw_request(url, junk, read_timeout=5)
            assert answer == b"" or re.match(rb"HTTP/1\.[01] [45]\d\d", answer), answer[:100]
        # slow clients: half a request, and a scrape nobody reads
        host, port = url.split("/")[2].split(":")
        for data in (b"GET /metr", b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"):
            s = socket.create_connection((host, int(port)), timeout=5)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(data)
            held.append(s)
        # while they wait: SNMP in both ways and a whole scrape
        started = time.monotonic()
        out = bed.snmp("snmpget", SYS_UPTIME, target=bed.env["SNMP_DIRECT_TARGET"])
        assert out.returncode == 0, out.stderr
        status, _, text = fetch(url)
        assert status == 200 and "infiniband_port_link_state" in text
        assert time.monotonic() - started < 30
        # more connections than one address may have: the extra are closed
        many = []
        for _ in range(16):
            try:
                many.append(socket.create_connection((host, int(port)), timeout=5))
            except OSError:
                break
        for s in many:
            s.close()

        # refused (reset) until the listener has seen those go
        assert wait_for(lambda: served(url), seconds=30)
        assert os.path.exists("/proc/%d" % bed.pid)
    finally:
        for s in held:
            s.close()
        stop_testbed(bed)
