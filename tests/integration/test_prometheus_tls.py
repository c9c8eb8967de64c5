"""/metrics as exporters secure it (prometheusWebConfig: the exporter-toolkit's
web configuration file): TLS with a client certificate required and
verified, basic auth with a bcrypt hash made by htpasswd, the file's
headers. Checked against tools no one here wrote: Debian's Prometheus
scraping with tls_config and basic_auth (and refused without them), curl
for each refusal (no certificate, a stranger's, an expired one, a wrong
password, plain HTTP on the TLS port), openssl s_client for the protocol
versions; the certificates made by openssl. A SIGHUP's new file takes
effect, a bad one leaves the one before; a bad file or a key others may
read stops the start, naming the file and line. A flood of silent
connections, slow readers and junk from other loopback addresses while
Prometheus scrapes: every scrape answered, SNMP GETs answered."""
import base64
import contextlib
import os
import re
import signal
import socket
import ssl
import statistics
import subprocess
import threading
import time

import pytest

from conftest import TOP, ibsnmpd_bin, snmp_env, start_testbed, stop_testbed, wait_for
from prometheus_server import PROMETHEUS, Prometheus, free_port, scrape_job

SYS_UPTIME = ".1.3.6.1.2.1.1.3.0"
USER, PASSWORD = "prometheus", "s3cret"


def run(*argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, **kw)


def openssl(d, *args):
    out = run("openssl", *args, cwd=d)
    assert out.returncode == 0, out.stderr
    return out


def make_pki(d):
    """A CA; the server's certificate (127.0.0.1); a client's signed by the
    CA, a stranger's (self-signed), an expired one of the CA's"""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl(d, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
            "-subj", "/CN=ibsnmpd test CA")
    for name, san, days in (("server", "IP:127.0.0.1", "30"),
                            ("client", "DNS:prometheus.test", "30"),
                            ("expired", "DNS:prometheus.test", "-1")):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write("subjectAltName=%s\n" % san)
        openssl(d, "req", *ec, "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=" + name)
        openssl(d, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".crt", "-days", days,
                "-extfile", name + ".ext")
    openssl(d, "req", "-x509", *ec, "-keyout", "stranger.key", "-out", "stranger.crt",
            "-days", "30", "-subj", "/CN=stranger")
    for f in os.listdir(d):
        if f.endswith(".key"):
            os.chmod(os.path.join(d, f), 0o600)


def bcrypt_hash(password):
    """htpasswd's bcrypt (apache2-utils), as the exporter-toolkit's docs say"""
    out = run("htpasswd", "-nbBC", "10", "", password)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().lstrip(":")


def web_config(d, password=PASSWORD, extra_tls=""):
    path = os.path.join(d, "web.yml")
    with open(path, "w") as f:
        f.write("# the exporter-toolkit's format, as node_exporter reads it\n"
                "tls_server_config:\n"
                "  cert_file: server.crt\n"
                "  key_file: server.key\n"
                "  client_auth_type: RequireAndVerifyClientCert\n"
                "  client_ca_file: ca.crt\n"
                "  client_allowed_sans: [prometheus.test]\n%s"
                "http_server_config:\n"
                "  headers:\n"
                "    X-Content-Type-Options: nosniff\n"
                "    Strict-Transport-Security: max-age=31536000\n"
                "basic_auth_users:\n"
                "  %s: '%s'\n" % (extra_tls, USER, bcrypt_hash(password)))
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    make_pki(d)
    web_config(d)
    return d


@pytest.fixture(scope="module")
def bed(pki):
    port = free_port()
    b = start_testbed(node="hca1", extra_conf=[
        "prometheusListen 127.0.0.1:%d" % port,
        "prometheusWebConfig %s/web.yml" % pki])
    b.port = port
    b.url = "https://127.0.0.1:%d" % port
    try:
        yield b
    finally:
        stop_testbed(b)


def curl(pki, url, *args):
    """(curl's exit status, the HTTP status or 0, the headers and body)"""
    out = run("curl", "-s", "-S", "-D", "-", "--max-time", "20", "--cacert",
              os.path.join(pki, "ca.crt"), *args, url, cwd=pki)
    m = re.match(r"HTTP/1\.[01] (\d+)", out.stdout)
    return out.returncode, int(m.group(1)) if m else 0, out.stdout + out.stderr


def basic_auth():
    return "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()


def good(pki):
    return ["--cert", "client.crt", "--key", "client.key", "-u", "%s:%s" % (USER, PASSWORD)]


def metric(text, name, reason):
    m = re.search(r'^%s\{reason="%s"\} (\d+)' % (name, reason), text, re.M)
    return int(m.group(1)) if m else None


def test_curl_is_served_with_everything_and_refused_each_thing_missing(bed, pki):
    # ready once the first discovery is in (the bed may just have started)
    assert wait_for(lambda: curl(pki, bed.url + "/-/ready", *good(pki))[1] == 200, seconds=60)
    rc, status, text = curl(pki, bed.url + "/metrics", *good(pki))
    assert (rc, status) == (0, 200), text
    assert "infiniband_port_link_state" in text
    assert "X-Content-Type-Options: nosniff" in text
    assert "Strict-Transport-Security: max-age=31536000" in text
    offset = bed.log_size()
    # no client certificate where one is required: no HTTP at all
    rc, status, text = curl(pki, bed.url + "/metrics", "-u", "%s:%s" % (USER, PASSWORD))
    assert rc != 0 and status == 0, text
    # a certificate of another CA, and an expired one of ours
    for name in ("stranger", "expired"):
        rc, status, text = curl(pki, bed.url + "/metrics", "--cert", name + ".crt",
                                "--key", name + ".key", "-u", "%s:%s" % (USER, PASSWORD))
        assert rc != 0 and status == 0, (name, text)
    # a wrong password, and none: 401 with the realm
    rc, status, text = curl(pki, bed.url + "/metrics", "--cert", "client.crt",
                            "--key", "client.key", "-u", USER + ":wrong")
    assert status == 401 and 'WWW-Authenticate: Basic realm="ibsnmpd"' in text, text
    rc, status, text = curl(pki, bed.url + "/-/healthy", "--cert", "client.crt",
                            "--key", "client.key")
    assert status == 401, text
    # plain HTTP on the TLS port: no answer
    rc, status, text = curl(pki, "http://127.0.0.1:%d/metrics" % bed.port)
    assert rc != 0 and status == 0, text
    # the landing page and the health check, with everything
    rc, status, text = curl(pki, bed.url + "/", *good(pki))
    assert status == 200 and 'href="/metrics"' in text and "collect[]=vitals" in text
    rc, status, text = curl(pki, bed.url + "/-/healthy", *good(pki))
    assert status == 200
    assert curl(pki, bed.url + "/-/ready", *good(pki))[1] == 200
    # each refusal counted by reason, and logged (at most a line a minute)
    rc, status, text = curl(pki, bed.url + "/metrics?collect[]=agent", *good(pki))
    assert metric(text, "ibsnmpd_http_refused_total", "unauthorized") >= 2, text
    assert metric(text, "ibsnmpd_http_refused_total", "bad_certificate") >= 2, text
    assert metric(text, "ibsnmpd_http_refused_total", "no_request") >= 3, text
    log = "\n".join(bed.log_since(offset))
    assert "failed login(s) (the last: user 'prometheus' from 127.0.0.1)" in log, log
    assert re.search(r"refused \d+ client certificate\(s\).*(expired|NOT trusted)", log), log


READ_RATE = 2 * 1024 * 1024  # the slow reader's pace, octets a second


def read_closed_early(pki, port):
    """A scrape asked with Connection: close through a small window, read
    from 1.5 s later and slowly: (status line and headers, body, seconds
    the reading took)."""
    ctx = tls_context(pki)
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(60)
    raw.connect(("127.0.0.1", port))
    s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    s.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               "Accept: application/openmetrics-text; version=1.0.0\r\n"
               "Authorization: %s\r\n\r\n" % basic_auth()).encode())
    time.sleep(1.5)
    got = b""
    began = time.monotonic()
    try:
        while True:
            # slowly: READ_RATE on a schedule, slower than the listener
            # writes but well within what it allows a reader (64 KiB/s, a
            # scrape in 120 s). A fixed pause after each read made the pace
            # the machine's: through the small window, a read is a few KiB,
            # and a loaded machine wakes a sleeper late (under a CPU hog,
            # beside the sanitizer build's beds, 14 MB took over 120 s and
            # the listener cut it, as it should). Behind the schedule it
            # reads at once.
            chunk = s.recv(16384)
            if not chunk:
                break
            got += chunk
            ahead = len(got) / READ_RATE - (time.monotonic() - began)
            if ahead > 0:
                time.sleep(ahead)
    except ssl.SSLError as e:  # a close without close_notify would be one
        pytest.fail("the TLS stream ended badly after %d octets: %s" % (len(got), e))
    finally:
        s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    return head, body, time.monotonic() - began


def scrape_size(pki, target):
    out = run("curl", "-s", "-o", "/dev/null", "-w", "%{size_download}", "--cacert", "ca.crt",
              *good(pki), "https://%s/metrics" % target, cwd=pki)
    return int(out.stdout or 0)


def assert_whole(head, body, seconds, log=()):
    """The whole scrape came; else what the listener said meanwhile (a cut
    is logged) and how long the reading took."""
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    assert len(body) > 5000 and body.rstrip(b"\r\n0").endswith(b"# EOF"), (
        "%d octets in %.1f s, cut: %s; listener: %s" % (
            len(body), seconds, body[-100:],
            [l for l in log if "prometheus" in l.lower() or "drain" in l][-5:]))


def test_a_scrape_closed_early_reaches_a_slow_reader_whole(bed, pki):
    """Connection: close, a small window, read late: MHD closes once the
    answer is encrypted; what the socket had not taken still comes, then
    the TLS close (on fabricsim's bigger fabric too: see the flood's test)"""
    offset = bed.log_size()
    assert_whole(*read_closed_early(pki, bed.port), log=bed.log_since(offset))


def s_client(pki, port, *args):
    """openssl s_client's handshake: the protocol it agreed, or None"""
    out = run("openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-CAfile", "ca.crt",
              "-cert", "client.crt", "-key", "client.key", *args, cwd=pki,
              input="GET /-/healthy HTTP/1.0\r\n\r\n")
    m = re.search(r"^New, (TLSv1\.\d), Cipher is (\S+)", out.stdout, re.M)
    return m.group(1) if m and m.group(2) != "(NONE)" else None


def test_the_protocol_versions_are_tls12_and_up(bed, pki):
    assert s_client(pki, bed.port, "-tls1_3") == "TLSv1.3"
    assert s_client(pki, bed.port, "-tls1_2") == "TLSv1.2"
    # a client willing to speak TLS 1.1 (its own floor lowered) is refused
    assert s_client(pki, bed.port, "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0") is None


def test_prometheus_scrapes_over_tls_and_is_refused_without(bed, pki):
    if not PROMETHEUS:
        pytest.skip("prometheus not installed")
    target = "127.0.0.1:%d" % bed.port
    tls = ("    scheme: https\n    tls_config:\n      ca_file: %s/ca.crt\n"
           "      cert_file: %s/client.crt\n      key_file: %s/client.key\n" % (pki, pki, pki))
    auth = "    basic_auth:\n      username: %s\n      password: %s\n" % (USER, PASSWORD)
    no_ca = ("    scheme: https\n    tls_config:\n      cert_file: %s/client.crt\n"
             "      key_file: %s/client.key\n" % (pki, pki))
    p = Prometheus(scrape_job("good", target, tls + auth) + scrape_job("no_auth", target, tls) +
                   scrape_job("no_ca", target, no_ca + auth) +
                   scrape_job("plain", target, auth), free_port())
    try:
        def health():
            try:
                return {t["labels"]["job"]: (t["health"], t["lastError"])
                        for t in p.api("targets")["activeTargets"]}
            except OSError:
                return {}
        def as_expected(h):
            """each job's last scrape, as its credentials make it (a scrape
            the machine's load made outrun the 1 s scrape timeout is
            "context deadline exceeded", and the next one, a second later,
            says what is wrong)"""
            return (len(h) == 4 and h["good"][0] == "up" and
                    h["no_auth"][0] == "down" and "401" in h["no_auth"][1] and
                    h["no_ca"][0] == "down" and "certificate" in h["no_ca"][1] and
                    h["plain"][0] == "down")
        assert wait_for(lambda: as_expected(health()), seconds=90), (health(), p.log_text())
        assert wait_for(lambda: (p.one('infiniband_port_link_state{job="good"} > 0') or 0) > 0
                        or p.query('count(infiniband_port_link_state{job="good"})'),
                        seconds=30)
    finally:
        p.stop()


@contextlib.contextmanager
def web_file_kept(bed, pki):
    """The bed's web configuration as it was after the block, by SIGHUP"""
    path = os.path.join(pki, "web.yml")
    original = open(path).read()
    try:
        yield path, original
    finally:
        with open(path, "w") as f:
            f.write(original)
        os.kill(bed.pid, signal.SIGHUP)
    assert wait_for(lambda: curl(pki, bed.url + "/-/healthy", *good(pki))[1] == 200,
                    seconds=30)


def test_a_sighup_takes_a_new_file_and_keeps_the_one_before_a_bad_one(bed, pki):
    offset = bed.log_size()
    with web_file_kept(bed, pki) as (path, original):
        # a file with an error: the one before serves on
        with open(path, "w") as f:
            f.write(original.replace("client_auth_type:", "client_auth_typ:"))
        os.kill(bed.pid, signal.SIGHUP)
        assert wait_for(lambda: any("keeping the previous settings" in l or
                                    "the configuration before stays" in l
                                    for l in bed.log_since(offset)), seconds=30)
        assert any(re.search(r"web\.yml:5: unknown key 'client_auth_typ'", l)
                   for l in bed.log_since(offset)), bed.log_since(offset)
        assert curl(pki, bed.url + "/-/healthy", *good(pki))[1] == 200
        # a new password and TLS 1.3 only
        web_config(pki, password="n3w-pass", extra_tls="  min_version: TLS13\n")
        os.kill(bed.pid, signal.SIGHUP)
        new = ["--cert", "client.crt", "--key", "client.key", "-u", USER + ":n3w-pass"]
        assert wait_for(lambda: curl(pki, bed.url + "/-/healthy", *new)[1] == 200, seconds=30)
        assert curl(pki, bed.url + "/-/healthy", *good(pki))[1] == 401
        assert s_client(pki, bed.port, "-tls1_2") is None
        assert s_client(pki, bed.port, "-tls1_3") == "TLSv1.3"
        assert bed.get(SYS_UPTIME)


def start_alone(tmp_path, lines):
    conf = tmp_path / "ibsnmpd.conf"
    conf.write_text("".join(l + "\n" for l in lines))
    return run(ibsnmpd_bin(), "-f", "-Le", "-c", str(conf), "-x",
               "unix:%s/none.sock" % tmp_path, env=snmp_env())


def test_a_bad_file_or_an_open_key_stops_the_start(pki, tmp_path):
    listen = "prometheusListen 127.0.0.1:%d" % free_port()
    bad = tmp_path / "bad.yml"
    bad.write_text("tls_server_config:\n  cert_file: %s/server.crt\n  key_file: %s/server.key\n"
                   "  min_version: TLS1.2\n" % (pki, pki))
    out = start_alone(tmp_path, [listen, "prometheusWebConfig %s" % bad])
    assert out.returncode == 1, out.stderr
    assert re.search(r"ibsnmpd.conf: line 2: .*bad\.yml:4: 'min_version' takes", out.stderr), \
        out.stderr
    key = tmp_path / "open.key"
    key.write_text(open(os.path.join(pki, "server.key")).read())
    key.chmod(0o644)
    bad.write_text("tls_server_config:\n  cert_file: %s/server.crt\n  key_file: open.key\n" % pki)
    out = start_alone(tmp_path, [listen, "prometheusWebConfig %s" % bad])
    assert out.returncode == 1, out.stderr
    assert "key_file %s: mode 0644" % key in out.stderr and "chmod 600" in out.stderr, out.stderr
    # a key that is not the certificate's
    key.chmod(0o600)
    key.write_text(open(os.path.join(pki, "client.key")).read())
    out = start_alone(tmp_path, [listen, "prometheusWebConfig %s" % bad])
    assert out.returncode == 1 and "the certificate and key" in out.stderr, out.stderr


def test_the_example_file_serves_as_it_says(bed, pki):
    """conf/prometheus/web-config.yml (the package's example) with this
    test's certificate and a hash of htpasswd's in it, taken by a SIGHUP: a
    curl with the password is served, the headers it names are sent"""
    example = open(os.path.join(TOP, "conf", "prometheus", "web-config.yml")).read()
    for name in ("server.crt", "server.key"):
        target = os.path.join(pki, "ibsnmpd." + name.split(".")[1])
        with open(target, "w") as f:
            f.write(open(os.path.join(pki, name)).read())
        os.chmod(target, 0o600)
    with web_file_kept(bed, pki) as (path, _):
        with open(path, "w") as f:
            f.write(re.sub(r"\$2y\$10\$[./A-Za-z0-9]{53}", lambda m: bcrypt_hash(PASSWORD),
                           example))
        os.kill(bed.pid, signal.SIGHUP)
        url = bed.url + "/-/healthy"
        password = ["-u", "%s:%s" % (USER, PASSWORD)]
        # no client certificate needed any more: the example leaves it out
        assert wait_for(lambda: curl(pki, url, *password)[1] == 200, seconds=30)
        rc, status, text = curl(pki, url, *password)
        assert "Strict-Transport-Security: max-age=31536000" in text, text
        assert curl(pki, url, "-u", USER + ":wrong")[1] == 401


def tls_context(pki):
    ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
    ctx.load_cert_chain(os.path.join(pki, "client.crt"), os.path.join(pki, "client.key"))
    return ctx


def flood(pki, port, stop, counts):
    """From 127.0.0.2 and .3 (never Prometheus' 127.0.0.1), until stop:
    silent connections held open, plain HTTP on the TLS port, and scrapes
    read a few octets a second. Bounded: at most 40 sockets open at once."""
    ctx = tls_context(pki)
    held = []
    auth = basic_auth()
    while not stop.is_set():
        for source in ("127.0.0.2", "127.0.0.3"):
            s = socket.socket()
            try:
                # a small window: the scrape stays in the listener, not in our buffers
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.settimeout(2)
                s.bind((source, 0))
                s.connect(("127.0.0.1", port))
                counts["opened"] += 1
            except OSError:
                s.close()
                counts["refused"] += 1
                continue
            kind = counts["opened"] % 3
            try:
                if kind == 1:
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                    s.close()
                    continue
                if kind == 2:
                    t = ctx.wrap_socket(s, server_hostname="127.0.0.1")
                    t.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n"
                               % auth).encode())
                    s = t
                held.append(s)
            except (OSError, ssl.SSLError):
                s.close()
                counts["refused"] += 1
        for s in held:
            try:
                s.settimeout(0.01)
                s.recv(16)  # a slow reader
            except (OSError, ssl.SSLError):
                pass
        while len(held) > 40:
            held.pop(0).close()
        time.sleep(0.2)
    for s in held:
        s.close()


def test_a_flood_leaves_every_scrape_and_get_answered(pki):
    """On fabricsim's fabric of 200 hosts: a scrape (megaoctets) that a slow
    reader's small window keeps in the listener"""
    if not PROMETHEUS:
        pytest.skip("prometheus not installed")
    port = free_port()
    bed = start_testbed(big={"hosts": 200}, debug="ibsnmpd:http", extra_conf=[
        "prometheusListen 127.0.0.1:%d" % port, "prometheusWebConfig %s/web.yml" % pki])
    target = "127.0.0.1:%d" % port
    tls = ("    scrape_interval: 5s\n    scrape_timeout: 4s\n"
           "    scheme: https\n    tls_config:\n      ca_file: %s/ca.crt\n"
           "      cert_file: %s/client.crt\n      key_file: %s/client.key\n"
           "    basic_auth:\n      username: %s\n      password: %s\n"
           % (pki, pki, pki, USER, PASSWORD))
    p = Prometheus(scrape_job("ibsnmpd", target, tls), free_port())
    stop, counts = threading.Event(), {"opened": 0, "refused": 0}
    try:
        assert p.wait_scraped(), p.log_text()
        # megaoctets (once the sweeps have filled them): the last of them
        # left to send after MHD has closed
        assert wait_for(lambda: scrape_size(pki, target) > 2000000, seconds=300)
        offset = bed.log_size()
        head, body, seconds = read_closed_early(pki, port)
        assert_whole(head, body, seconds, log=bed.log_since(offset))
        print("closed early: %d octets in %.1f s" % (len(body), seconds))
        # whether the listener had records left at the close depends on the
        # two sides' pace: said, not required (whole is what is required)
        print("closed early: %s" % ("drained after the close" if any(
            "draining" in l for l in bed.log_since(offset)) else "all sent before the close"))

        def get_ms():
            t = time.monotonic()
            bed.get(SYS_UPTIME)
            return (time.monotonic() - t) * 1000
        quiet = [get_ms() for _ in range(10)]
        time.sleep(3)
        began = time.time()
        worker = threading.Thread(target=flood, args=(pki, port, stop, counts))
        worker.start()
        loud = []
        errors = set()
        while time.time() - began < 30:
            loud.append(get_ms())
            errors |= {t["lastError"] for t in p.api("targets")["activeTargets"]
                       if t["lastError"]}
            time.sleep(0.5)
        stop.set()
        worker.join()
        ended = time.time()
        # every scrape of those 30 s answered: up was 1 each time
        window = int(ended - began) - 2
        ups = p.query("count_over_time(up[%ds])" % window)
        downs = p.query("count_over_time(up[%ds]) - sum_over_time(up[%ds])" % (window, window))
        print("flood: %d connections opened, %d refused or cut; scrapes in %d s: %s, down: %s;"
              " GET median %.1f ms quiet, %.1f ms in the flood (worst %.1f); errors: %s"
              % (counts["opened"], counts["refused"], window, list(ups.values()),
                 list(downs.values()), statistics.median(quiet), statistics.median(loud),
                 max(loud), errors))
        rc, status, text = curl(pki, "https://%s/metrics?collect[]=agent" % target, *good(pki))
        assert status == 200
        print("".join(l + "\n" for l in text.splitlines() if l.startswith("ibsnmpd_http")))
        # scrapes went on (every 5 s: some 5 in the window; Prometheus on a
        # loaded machine is late now and then), and each one was whole
        assert ups and list(ups.values())[0] >= window / 5 - 2, ups
        assert not downs or max(downs.values()) == 0, downs
        assert len(loud) >= 10  # every GET answered (bed.get asserts it), however slow
        assert metric(text, "ibsnmpd_http_refused_total", "slow_scrape") >= 1, text
        assert (metric(text, "ibsnmpd_http_refused_total", "connections_per_address") +
                metric(text, "ibsnmpd_http_refused_total", "slow_request")) >= 1, text
    finally:
        stop.set()
        p.stop()
        stop_testbed(bed)
