"""A simulated test bed: ibsim (the fabric), opensm (SM/SA), snmpd (AgentX
master on a loopback UDP port), snmptrapd (writing to a file) and ibsnmpd
attached to one node of the fabric, all in one directory.

Everything a bed starts is recorded in DIR/pids ("NAME PID" lines) and
stopped by its PID; each service's command line is DIR/NAME.cmd (a script
that execs it, so that it can be started again as it first was) and its
output DIR/NAME.out; DIR/env holds the variables `up` prints. The layout
is the command line's (scripts/simfabric): other tools read it."""
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOPOLOGIES = os.path.join(TOP, "tests", "topologies")
UMAD2SIM = os.environ.get("UMAD2SIM", "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
WAIT_SUBNET_S = int(os.environ.get("SIMFABRIC_WAIT_SUBNET_S", "120"))
WAIT_AGENT_S = int(os.environ.get("SIMFABRIC_WAIT_AGENT_S", "60"))
NODE_TYPE = ".1.3.6.1.3.117.3.1.1.4.0"  # ibSmaNodeType.0: ibsnmpd serves
# ibsnmpdMadsSent.0: served without the local node's SMA (a protected
# fabric, no key given: only SMPs read the SMA)
MADS_SENT = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.1.0"
SYS_NAME = ".1.3.6.1.2.1.1.5.0"

# The bed's SNMPv3 user (loopback only; the secrets are the bed's own).
V3_USER, V3_AUTH, V3_PRIV = "simfabric", "simfabric-auth", "simfabric-priv"
SERVICES = ("ibsim", "fabricsim", "opensm", "snmpd", "snmptrapd", "ibsnmpd", "console-holder",
            "fabricsim-2", "ibsnmpd-2", "console-holder-2")


class BedError(Exception):
    """What the command line says as "simfabric: ..." before it exits 1."""


def snmp_env():
    return dict(os.environ, MIBS="")  # numeric OIDs only; no MIB noise


def free_port(kind=socket.SOCK_STREAM):
    """A loopback port free now, for a daemon a test starts that binds it
    later: below the kernel's ephemeral range (ip_local_port_range), since
    a port bind(0) gives can be taken meanwhile as the local port of any
    test's outgoing connection or client socket (seen in the sanitizer
    phase: slurmctld "Address already in use")."""
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rnd = random.Random()
    for _ in range(200):
        port = rnd.randrange(min(20000, low - 1000), low)
        with socket.socket(socket.AF_INET, kind) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, kind) as s:  # a machine that has none free there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_udp_port():
    return free_port(socket.SOCK_DGRAM)


def alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie of ours is not alive
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def holds_udp_port(pid, port):
    """Whether pid has a UDP socket bound to 127.0.0.1:port. A port found free
    is free only until somebody binds it: another bed (tests run beds side by
    side), or any client's ephemeral port. A service that could not bind it
    exits, while a query of the port would be answered by whoever holds it,
    so the test is on the socket itself."""
    want = "0100007F:%04X" % port
    inodes = set()
    try:
        with open("/proc/net/udp") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if len(parts) > 9 and parts[1] == want:
                    inodes.add("socket:[%s]" % parts[9])
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) in inodes:
                    return True
            except OSError:
                continue
    except OSError:
        return False
    return False


def launch(script, *args):
    """Runs a shell command line in the background, in a session of its own
    (a test runner's Ctrl-C is not its) and not as a child of this process
    (its shell exits at once: the service is init's, reaped when it ends,
    whatever runs this); its PID."""
    # the job's stdout is not the pipe its PID comes back on (whatever it
    # opens, however long that takes, this returns at once)
    out = subprocess.run(["bash", "-c", "exec 3>&1 >/dev/null 2>&1; setsid %s 3>&- & echo $! >&3"
                          % script, "launch"] + list(args),
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def start_time(pid):
    """a process's start (clock ticks since boot; None if it is gone): with
    its PID, who it is (a PID is used again once its process is gone)"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def register(pid, name, directory):
    """Every service a bed starts is also written to $IBSNMPD_BED_REGISTRY
    (when set: tests/tools/bed_test.py sets it), "PID START NAME DIR", so
    that a test killed at its deadline, or one that lost its bed's
    directory, still has every process it started stopped by its PID."""
    path = os.environ.get("IBSNMPD_BED_REGISTRY")
    if not path:
        return
    with open(path, "a") as f:
        f.write("%d %s %s %s\n" % (pid, start_time(pid), name, directory))


def first_node(topology):
    """The first node of a topology file: where opensm attaches."""
    import re
    with open(topology) as f:
        for line in f:
            if re.match(r"^(Switch|Hca|Rt)", line):
                m = re.search(r'"([^"]+)"', line)
                if m:
                    return m.group(1)
    raise BedError("no node in topology file %s" % topology)


def find_ibsnmpd(given=None):
    for c in (given, os.environ.get("IBSNMPD_BIN"), os.path.join(TOP, "build", "ibsnmpd"),
              shutil.which("ibsnmpd")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def find_fabricsim(ibsnmpd):
    """The big-fabric simulator of ibsnmpd's build tree, else $FABRICSIM's."""
    for c in (os.environ.get("FABRICSIM"),
              ibsnmpd and os.path.join(os.path.dirname(ibsnmpd), "tests", "fabricsim"),
              os.path.join(TOP, "build", "tests", "fabricsim")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def issm_shim(ibsnmpd):
    """The IsSM shim of ibsnmpd's build tree, else $SIM_ISSM_SHIM's."""
    for c in (os.environ.get("SIM_ISSM_SHIM"),
              os.path.join(os.path.dirname(ibsnmpd), "tests", "sim_issm_shim.so"),
              os.path.join(TOP, "build", "tests", "sim_issm_shim.so")):
        if c and os.path.isfile(c):
            return c
    return None


# ibsnmpd's cache groups read on a period (ibsnmpd.conf(5), cacheLifetime):
# given an hour each, what a fabric answers across a change is the change's
PERIODIC_GROUPS = ("pmCounters", "fabricPorts", "vitalsSensors", "pmSamples", "partitionStatus",
                   "nodeInfo", "switchInfo", "portInfo", "guidInfo", "pKeyTable", "slToVlTable",
                   "vlArbTable", "linearForwarding", "multicastForwarding", "randomForwarding",
                   "smInfo", "vendorDiag", "ledInfo")


class Bed:
    """A bed in its directory: up() makes one, Bed(dir) takes one that runs."""

    def __init__(self, directory):
        self.dir = os.path.abspath(directory)
        self.env = self._read_env()
        self._sockname = None

    # ---- what the bed is -------------------------------------------------------

    def _read_env(self):
        res = {}
        try:
            with open(os.path.join(self.dir, "env")) as f:
                for line in f:
                    if "=" in line:
                        k, v = line.rstrip("\n").split("=", 1)
                        res[k] = v.strip('"')
        except OSError:
            pass
        return res

    @property
    def target(self):
        return self.env["SNMP_TARGET"]

    @property
    def node(self):
        return self.env.get("SIMFABRIC_NODE")

    def path(self, name):
        return os.path.join(self.dir, name)

    def pids(self):
        """[(name, pid)] in the order they were started."""
        try:
            with open(self.path("pids")) as f:
                return [(n, int(p)) for n, p in (l.split() for l in f if l.strip())]
        except (OSError, ValueError):
            return []

    def pid_of(self, name):
        """The last PID recorded for name (None)."""
        found = [p for n, p in self.pids() if n == name]
        return found[-1] if found else None

    @property
    def pid(self):
        """ibsnmpd's."""
        return self.pid_of("ibsnmpd")

    def log(self, name):
        with open(self.path(name), errors="replace") as f:
            return f.read()

    def log_size(self, name="ibsnmpd.log"):
        return os.path.getsize(self.path(name))

    def log_since(self, offset, name="ibsnmpd.log"):
        """The non-empty lines written to name after offset."""
        with open(self.path(name), errors="replace") as f:
            f.seek(offset)
            return [l for l in f.read().splitlines() if l.strip()]

    def rss_kib(self, name="ibsnmpd"):
        with open("/proc/%d/status" % self.pid_of(name)) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def sanitizer_reports(self):
        """ASan and UBSan reports in what ibsnmpd printed (also while exiting)."""
        found = []
        for name in ("ibsnmpd.out", "ibsnmpd-2.out"):
            try:
                text = self.log(name)
            except OSError:
                continue
            found += [l for l in text.splitlines()
                      if "ERROR: AddressSanitizer" in l or "runtime error:" in l]
        return found

    def state(self, lines=12):
        """Which services run, and the end of their logs (shown with a failed
        test: the bed's directory is gone after it)."""
        out = ["%s %d %s" % (n, p, "running" if alive(p) else "exited") for n, p in self.pids()]
        for name in ("ibsnmpd.log", "ibsnmpd.out", "snmpd.log", "snmptrapd.out"):
            try:
                tail = [l for l in self.log(name).splitlines()
                        if not l.startswith("Connection from")][-lines:]
            except OSError:
                continue
            out.append("--- %s" % name)
            out.extend(tail)
        out.extend(self.stacks())
        return "\n".join(out)

    def stacks(self):
        """ibsnmpd's threads as gdb sees them now, if it runs: with a failed
        test, where a daemon that does not answer is."""
        pid = dict(self.pids()).get("ibsnmpd")
        if not pid or not alive(pid) or not shutil.which("gdb"):
            return []
        try:
            got = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                                  "-ex", "thread apply all bt 16"],
                                 capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        return ["--- ibsnmpd's threads (gdb)"] + [l for l in got.splitlines()
                                                  if l.startswith(("#", "Thread"))]

    # ---- services ---------------------------------------------------------------

    def write_cmd(self, name, argv, fabric=1):
        """DIR/NAME.cmd: a script that execs argv in the bed (cwd DIR), on
        one of its fabrics (its simulator's socket, its persistent directory)."""
        with open(self.path(name + ".cmd"), "w") as f:
            f.write("#!/usr/bin/env bash\n")
            f.write("cd %s\n" % shlex.quote(self.dir))
            f.write("export MIBS= SNMP_PERSISTENT_DIR=%s IBSIM_SOCKNAME=%s\n" % (
                shlex.quote(self.path("persist" if fabric == 1 else "persist-%d" % fabric)),
                shlex.quote(self.sockname_of(fabric))))
            f.write("exec %s\n" % " ".join(shlex.quote(a) for a in argv))

    @property
    def ibsim_sockname(self):
        return self.env.get("IBSIM_SOCKNAME") or self._sockname

    def sockname_of(self, fabric=1):
        """The simulator's socket name of fabric 1 (the bed's) or 2 (--fabrics 2)."""
        if fabric == 1:
            return self.ibsim_sockname
        return self.env.get("SIMFABRIC_FABRIC_%d_IBSIM_SOCKNAME" % fabric) or \
            "%s-%d" % (self._sockname, fabric)

    def start_service(self, name):
        """Runs DIR/NAME.cmd in the background and records its PID."""
        if not os.path.isfile(self.path(name + ".cmd")):
            raise BedError("no recorded command for %s in %s" % (name, self.dir))
        if alive(self.pid_of(name)):
            raise BedError("%s is already running" % name)
        pid = launch('bash "$1" </dev/null >>"$2" 2>&1', self.path(name + ".cmd"),
                     self.path(name + ".out"))
        with open(self.path("pids"), "a") as f:
            f.write("%s %d\n" % (name, pid))
        register(pid, name, self.dir)
        if name == "opensm":  # opensm writes no pid file; the partition policy signals it
            with open(self.path("opensm.pid"), "w") as f:
                f.write("%d\n" % pid)
        return pid

    def stop_pid(self, pid):
        """TERM, then KILL after a few seconds."""
        if not alive(pid):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        for _ in range(50):
            if not alive(pid):
                return
            time.sleep(0.1)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        for _ in range(20):
            if not alive(pid):
                return
            time.sleep(0.1)

    def stop(self, name):
        pid = self.pid_of(name)
        if pid:
            self.stop_pid(pid)

    def start(self, name, node=None):
        """Starts a service again with the command line it was first started
        with (node: attached to another node, e.g. to move the SM)."""
        if node:
            import re
            path = self.path(name + ".cmd")
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(re.sub(r"SIM_HOST=[^ ]*", "SIM_HOST=" + node, text))
        return self.start_service(name)

    def down(self):
        """Stops everything it started. Clients of the simulator first, ibsim
        last: opensm whose ibsim is gone can spin instead of exiting."""
        if not os.path.isfile(self.path("pids")):
            raise BedError("no test bed in '%s' (give --dir or SIMFABRIC_DIR)" % self.dir)
        pids = self.pids()
        for name in ("ibsnmpd", "ibsnmpd-2", "snmptrapd", "snmpd", "opensm", "ibsim",
                     "fabricsim", "fabricsim-2", "console-holder", "console-holder-2"):
            for n, p in pids:
                if n == name:
                    self.stop_pid(p)
        for _, p in pids:  # anything else recorded (extra clients started by tests)
            self.stop_pid(p)
        open(self.path("pids"), "w").close()

    # ---- the fabric -------------------------------------------------------------

    def sim(self, command, fabric=1):
        """One command to ibsim's console (fabricsim's of fabric 2)."""
        fifo = self.path("ibsim.console" if fabric == 1 else "ibsim-%d.console" % fabric)
        if not os.path.exists(fifo):
            raise BedError("no ibsim console in %s" % self.dir)
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, (command + "\n").encode())
        finally:
            os.close(fd)

    def answered(self):
        """fabricsim's counts of the MADs it answered so far (its console's
        Stats): {"smp", "pma", "sa", "vendor", "routing"}; SA counts every
        RMPP segment, vendor NVIDIA's class 0x0A and SMPs of vendor
        attributes, routing the SMPs of LinearForwardingTable (neither in
        "smp")"""
        path = self.path("fabricsim.out")
        size = os.path.getsize(path)
        self.sim("Stats")
        for _ in range(200):
            with open(path) as f:
                f.seek(size)
                m = re.findall(r"answered: (\d+) SMPs, (\d+) PerfMgt, (\d+) SA, (\d+) vendor, "
                               r"(\d+) routing", f.read())
            if m:
                return dict(zip(("smp", "pma", "sa", "vendor", "routing"),
                                (int(v) for v in m[-1])))
            time.sleep(0.05)
        raise BedError("fabricsim did not answer Stats")

    def answered_when_quiet(self, quiet=3.0, limit=1800,
                            classes=("smp", "vendor", "pma")):
        """fabricsim's counts (answered()) once it answers at most a MAD of
        each of classes in quiet seconds (what is left is the SM's own
        pace); BedError past limit seconds"""
        last, since, t0 = self.answered(), time.monotonic(), time.monotonic()
        while time.monotonic() - since < quiet:
            if time.monotonic() - t0 > limit:
                raise BedError("fabricsim never went quiet in %d s" % limit)
            time.sleep(0.5)
            now = self.answered()
            if any(now[c] - last[c] > 1 for c in classes):
                last, since = now, time.monotonic()
        return last

    def command(self, *cmd, node=None, fabric=1):
        """argv that runs cmd (e.g. smpquery) attached to a node of the fabric,
        in the bed's directory (libumad2sim writes its fake sysfs, sys-PID/,
        into the current directory and leaves it when the program is killed)."""
        return ["env", "-C", self.dir, "LD_PRELOAD=" + self.env.get("UMAD2SIM", UMAD2SIM),
                "SIM_HOST=" + (node or self.node), "IBSIM_SOCKNAME=" + self.sockname_of(fabric),
                "MIBS="] + list(cmd)

    def run_on_node(self, *cmd, node=None, ok_codes=(0,), timeout=60, fabric=1):
        """Runs an infiniband-diags command attached to a node; its stdout.
        A tool killed by a signal is run again, twice at most: infiniband-diags
        through libumad2sim has crashed now and then (ibqueryerrors with
        SIGSEGV on the 612-node bed, once in CI's load), which says nothing
        of the fabric or of ibsnmpd; the crash is printed."""
        for _ in range(3):
            out = subprocess.run(self.command(*cmd, node=node, fabric=fabric),
                                 capture_output=True, text=True, timeout=timeout)
            if out.returncode >= 0:
                break
            print("%s killed by signal %d: run again" % (" ".join(cmd), -out.returncode))
        if out.returncode not in ok_codes:
            raise AssertionError("%s failed (status %d): %s ... %s"
                                 % (" ".join(cmd), out.returncode, out.stderr[-2000:],
                                    out.stdout[-500:]))
        return out.stdout

    def spawn(self, name, *cmd, node=None):
        """Starts cmd in the background attached to a node, recorded as name
        (stop(name) or down() stops it by PID); output in DIR/NAME.out."""
        if name in SERVICES or "/" in name or not name:
            raise BedError("spawn: '%s' is not a name for an extra service" % name)
        self.write_cmd(name, ["env", "LD_PRELOAD=" + self.env.get("UMAD2SIM", UMAD2SIM),
                              "SIM_HOST=" + (node or self.node)] + list(cmd))
        return self.start_service(name)

    # ---- the command line's commands, in-process ------------------------------

    def simfabric(self, *args, check=True):
        """A command of scripts/simfabric on this bed (down, sim, stop, start,
        spawn), as the command line would run it: a CompletedProcess, or
        (check) CalledProcessError when it fails."""
        sub, rest = args[0], list(args[1:])
        try:
            if sub == "down":
                self.down()
            elif sub == "sim":
                fabric = 1
                if rest[:1] == ["--fabric"] and len(rest) > 1:
                    fabric, rest = int(rest[1]), rest[2:]
                self.sim(" ".join(rest), fabric=fabric)
            elif sub == "stop":
                self.stop(rest[0])
            elif sub == "start":
                self.start(rest[0], node=rest[2] if len(rest) > 2 and rest[1] == "--node"
                           else None)
            elif sub == "spawn":
                node = None
                cmd = rest[1:]
                if cmd[:1] == ["--node"]:
                    node, cmd = cmd[1], cmd[2:]
                if cmd[:1] == ["--"]:
                    cmd = cmd[1:]
                self.spawn(rest[0], *cmd, node=node)
            else:
                raise BedError("'%s' is not a command for a running bed" % sub)
        except BedError as e:
            if check:
                raise subprocess.CalledProcessError(1, ["simfabric"] + list(args), "",
                                                    "simfabric: %s\n" % e) from e
            return subprocess.CompletedProcess(["simfabric"] + list(args), 1, "",
                                               "simfabric: %s\n" % e)
        return subprocess.CompletedProcess(["simfabric"] + list(args), 0, "", "")

    # ---- a manager --------------------------------------------------------------

    def snmp(self, tool, *args, community="public", extra=(), target=None, timeout=2, retries=1):
        return subprocess.run([tool, "-v2c", "-c", community, "-On", "-t", str(timeout), "-r",
                               str(retries)] + list(extra) + [target or self.target] +
                              list(args), capture_output=True, text=True, env=snmp_env(),
                              timeout=60 + timeout * 10)

    def v3(self, tool, context, *args, extra=()):
        """An SNMPv3 request (the bed's user) in a context."""
        return subprocess.run([tool] + self.env["SNMP_V3_ARGS"].split() +
                              ["-n", context, "-On", "-t", "3", "-r", "1"] + list(extra) +
                              [self.target] + list(args),
                              capture_output=True, text=True, env=snmp_env(), timeout=120)


def _check_tools(topology, ibsnmpd, with_agent, big=None):
    if not big and not os.path.isfile(topology):
        raise BedError("topology file %s not found" % topology)
    if not os.path.isfile(UMAD2SIM):
        raise BedError("%s not found: apt-get install libumad2sim0 ibsim-utils" % UMAD2SIM)
    for b in (("snmpd", "snmptrapd") if big else ("ibsim", "opensm", "snmpd", "snmptrapd")):
        if not shutil.which(b):
            raise BedError("%s not found (see README.md: install the dependencies)" % b)
    if with_agent and not ibsnmpd:
        raise BedError("ibsnmpd binary not found: build it (cmake --build build) or pass "
                       "--ibsnmpd")


def _wait_for(secs, what, bed, predicate):
    """Polls predicate; BedError when secs have passed."""
    for _ in range(secs * 5):
        if predicate():
            return
        time.sleep(0.2)
    raise BedError("timed out after %ds waiting for %s (logs in %s)" % (secs, what, bed.dir))


def _file_has(path, text):
    try:
        with open(path, errors="replace") as f:
            return text in f.read()
    except OSError:
        return False


def _start_on_free_port(bed, name, write_conf):
    """Up to 5 times: a free port, NAME's configuration for it, NAME started;
    done when it holds the port, another try when it exited (the port was
    taken meanwhile). The port."""
    import sys
    for attempt in range(1, 6):
        port = free_udp_port()
        write_conf(port)
        pid = bed.start_service(name)
        for _ in range(100):
            if holds_udp_port(pid, port):
                return port
            if not alive(pid):
                break
            time.sleep(0.2)
        print("simfabric: %s did not bind udp:127.0.0.1:%d (try %d)" % (name, port, attempt),
              file=sys.stderr)
        bed.stop_pid(pid)
        # its PID may be another's later: not recorded any more
        kept = [(n, p) for n, p in bed.pids() if not (n == name and p == pid)]
        with open(bed.path("pids"), "w") as f:
            f.writelines("%s %d\n" % np for np in kept)
    return None


def _agent_serves(bed, port, name="ibsnmpd", context=None, oid=NODE_TYPE):
    """ibsnmpd is up when ibSmaNodeType.0 (or oid) has a value (in its
    fabric's context, asked as the bed's SNMPv3 user); true at once if it
    died (the caller sees it is gone)."""
    if not alive(bed.pid_of(name)):
        return True
    who = ["-v3", "-l", "authPriv", "-u", V3_USER, "-a", "SHA", "-A", V3_AUTH, "-x", "AES",
           "-X", V3_PRIV, "-n", context] if context else ["-v2c", "-c", "public"]
    out = subprocess.run(["snmpget"] + who + ["-t", "1", "-r", "0", "-Oqv",
                          "udp:127.0.0.1:%d" % port, oid],
                         capture_output=True, text=True, env=snmp_env())
    return out.stdout.strip().isdigit()


def up(topology=None, node=None, directory=None, ibsnmpd=None, conf_extra=(), snmpd_extra=(),
       with_agent=True, direct=False, preload=None, debug=None, traps=True, partitions=True,
       warn=None, big=None):
    """Starts a bed; waits until the subnet is up and ibsnmpd has registered;
    returns the Bed. On failure what it started is stopped and BedError says
    why. warn(text): where the bed's notes go (stderr by default).

    big: a dict {"hosts": N, "radix": R, "layout": L, "speed": S} starts the
    project's simulator of big fabrics (fabricsim) in place of ibsim and
    opensm: no partition policy there (no opensm to apply it). With
    "names": "real" its nodes are described as real fabrics' are (a
    model's switches alike, hosts "HOST mlx5_N") and the bed writes a
    node-name map naming the leaf switches (SIMFABRIC_NODE_NAME_MAP), which
    ibsnmpd reads (nodeNameMap)."""
    import sys
    warn = warn or (lambda text: print(text, file=sys.stderr))
    topology = topology or os.path.join(TOPOLOGIES, "switch-3ca.net")
    ibsnmpd = find_ibsnmpd(ibsnmpd)
    _check_tools(topology, ibsnmpd, with_agent, big)
    if big:
        if not find_fabricsim(ibsnmpd):
            raise BedError("fabricsim not found: build the project (cmake --build build) or "
                           "set FABRICSIM")
        sm_node = "srv-1-hca1" if big.get("layout") == "rail" else "host-1"
        partitions = False
    else:
        topology = os.path.abspath(topology)
        sm_node = first_node(topology)
    node = node or sm_node
    directory = directory or tempfile.mkdtemp(prefix="simfabric.", dir="/tmp")
    for d in (directory, os.path.join(directory, "persist"), os.path.join(directory, "osm-cache")):
        os.makedirs(d, exist_ok=True)
    bed = Bed(directory)
    if os.path.exists(bed.path("pids")) and os.path.getsize(bed.path("pids")):
        raise BedError("%s already holds a test bed (simfabric down --dir %s)" % (bed.dir, bed.dir))
    open(bed.path("pids"), "w").close()
    # unique per bed: ibsim's socket name, UDP ports, the AgentX socket
    bed._sockname = "simfabric-%s-%d" % (os.path.basename(bed.dir), os.getpid())
    try:
        if big:
            topology = _start_fabricsim(bed, ibsnmpd, big)
            if int(big.get("fabrics") or 1) == 2:
                os.makedirs(bed.path("persist-2"), exist_ok=True)
                _start_fabricsim(bed, ibsnmpd, big, fabric=2)
            if big.get("names") == "real":
                conf_extra = list(conf_extra) + ["nodeNameMap " + _write_name_map(bed, topology)]
        else:
            _start_ibsim_opensm(bed, topology, sm_node)
        _up(bed, topology, node, sm_node, ibsnmpd, conf_extra, snmpd_extra, with_agent, direct,
            preload, debug, traps and not big, partitions, warn, big_traps=bool(traps and big),
            fabrics=int((big or {}).get("fabrics") or 1),
            keyless=bool(big and big.get("mkey")
                         and str(big.get("mkey_protect") or 3) not in ("0", "1")
                         and not any(line.split()[:1] == ["mKey"] for line in conf_extra)))
    except BaseException:
        bed.down()
        raise
    return bed


def _write_name_map(bed, links):
    """An operator's node-name map (ib-node-name-map's format) naming every
    leaf switch by the console's name, from the generated fabric's file;
    the spines keep their factory description, the core switches the
    one their operator set."""
    path = bed.path("ib-node-name-map")
    with open(links) as f, open(path, "w") as out:
        out.write("# node GUID, \"name\" (written by simfabric for its leaf switches)\n")
        for line in f:
            parts = line.split()
            if parts[0] == "node" and parts[1] == "switch" and parts[5].startswith("leaf-"):
                out.write('%s "%s"\n' % (parts[2], " ".join(parts[5:])))
    return path


def _suffix(fabric):
    return "" if fabric == 1 else "-%d" % fabric


def _console_fifo(bed, fabric=1):
    """The simulator's console: a fifo held open by a sleeper."""
    fifo = bed.path("ibsim%s.console" % _suffix(fabric))
    os.mkfifo(fifo)
    holder = launch('sleep infinity 1<>"$1" </dev/null', fifo) # read-write: no wait
    with open(bed.path("pids"), "a") as f:
        f.write("console-holder%s %d\n" % (_suffix(fabric), holder))
    register(holder, "console-holder" + _suffix(fabric), bed.dir)
    return fifo


def _start_fabricsim(bed, ibsnmpd, big, fabric=1):
    """fabricsim in place of ibsim and opensm; its console is the same fifo
    (simfabric sim). The generated fabric's file (nodes and links) is the
    bed's topology. A second fabric (--fabrics 2) has its own simulator,
    console and socket, and GUIDs apart from the first's."""
    fifo = _console_fifo(bed, fabric)
    links = bed.path("fabric%s.links" % _suffix(fabric))
    argv = [find_fabricsim(ibsnmpd), "--hosts", str(big["hosts"]), "--links", links,
            "--fabric-id", str(fabric - 1)]
    for key in ("radix", "layout", "speed", "mkey", "mkey_protect"):
        if big.get(key) is not None and big.get(key) != "":
            argv += ["--" + key.replace("_", "-"), str(big[key])]
    if big.get("names") == "real":
        argv.append("--real-names")
    name = "fabricsim" + _suffix(fabric)
    bed.write_cmd(name, argv, fabric=fabric)
    with open(bed.path(name + ".cmd")) as f:
        text = f.read().rstrip("\n")
    with open(bed.path(name + ".cmd"), "w") as f:
        f.write(text + " <" + shlex.quote(fifo) + "\n")
    bed.start_service(name)
    _wait_for(60, name + " to start", bed, lambda: _file_has(bed.path(name + ".out"), "sim>"))
    if not alive(bed.pid_of(name)):
        raise BedError("%s exited: %s" % (name, bed.log(name + ".out").strip()))
    return links


def _start_ibsim_opensm(bed, topology, sm_node):
    # --- ibsim, its console on a fifo held open by a sleeper ---------------------
    fifo = _console_fifo(bed)
    bed.write_cmd("ibsim", ["ibsim", "-s", topology])
    with open(bed.path("ibsim.cmd")) as f:
        text = f.read().rstrip("\n")
    with open(bed.path("ibsim.cmd"), "w") as f:
        f.write(text + " <" + shlex.quote(fifo) + "\n")
    bed.start_service("ibsim")
    _wait_for(20, "ibsim to start", bed, lambda: _file_has(bed.path("ibsim.out"), "sim>"))

    # --- opensm, SM/SA of the simulated subnet --------------------------------------
    with open(bed.path("opensm.conf"), "w") as f:
        f.write("force_log_flush TRUE\nlog_file %s\npartition_config_file %s\n"
                "dump_files_dir %s\n" % (bed.path("opensm.log"), bed.path("partitions.conf"),
                                         bed.path("osm-cache")))
    with open(bed.path("partitions.conf"), "w") as f:
        f.write("Default=0x7fff, ipoib : ALL=full ;\n")
    bed.write_cmd("opensm", ["env", "LD_PRELOAD=" + UMAD2SIM, "SIM_HOST=" + sm_node,
                             "OSM_CACHE_DIR=" + bed.path("osm-cache"), "OSM_TMP_DIR=" + bed.dir,
                             "opensm", "-F", bed.path("opensm.conf")])
    bed.start_service("opensm")
    _wait_for(WAIT_SUBNET_S, "opensm: SUBNET UP", bed,
              lambda: _file_has(bed.path("opensm.log"), "SUBNET UP") or
              _file_has(bed.path("opensm.out"), "SUBNET UP"))


def _up(bed, topology, node, sm_node, ibsnmpd, conf_extra, snmpd_extra, with_agent, direct,
        preload, debug, traps, partitions, warn, big_traps=False, fabrics=1, keyless=False):

    # --- snmptrapd -> file -------------------------------------------------------------
    def snmptrapd_conf(port):
        with open(bed.path("snmptrapd.conf"), "w") as f:
            f.write("snmpTrapdAddr udp:127.0.0.1:%d\ndisableAuthorization yes\n" % port)

    bed.write_cmd("snmptrapd", ["snmptrapd", "-f", "-C", "-c", bed.path("snmptrapd.conf"), "-Lf",
                                bed.path("traps.log"), "-p", bed.path("snmptrapd.pid"), "-On"])
    trap_port = _start_on_free_port(bed, "snmptrapd", snmptrapd_conf)
    if not trap_port:
        raise BedError("snmptrapd could not bind a port (logs in %s)" % bed.dir)

    # --- snmpd, AgentX master on loopback ------------------------------------------
    def snmpd_conf(port):
        with open(bed.path("snmpd.conf"), "w") as f:
            f.write("agentaddress udp:127.0.0.1:%d\n" % port)
            f.write("master agentx\nagentxsocket unix:%s\nagentxperms 0600 0700\n"
                    % bed.path("agentx.sock"))
            f.write("rocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1\n")
            f.write("trap2sink 127.0.0.1:%d public\n" % trap_port)
            f.write("sysName simfabric-%s\n" % os.path.basename(bed.dir))
            f.write("# an SNMPv3 user that may read and write every context: each node of the\n"
                    "# subnet is served in a context of its own (ib-<node GUID>)\n")
            f.write('createUser %s SHA "%s" AES "%s"\n' % (V3_USER, V3_AUTH, V3_PRIV))
            f.write("view simfabricAll included .1\ngroup simfabricV3 usm %s\n" % V3_USER)
            f.write('access simfabricV3 "" usm priv prefix simfabricAll simfabricAll none\n')
            for line in snmpd_extra:
                f.write(line + "\n")

    bed.write_cmd("snmpd", ["snmpd", "-f", "-C", "-c", bed.path("snmpd.conf"), "-Lf",
                            bed.path("snmpd.log"), "-p", bed.path("snmpd.pid")])
    snmp_port = _start_on_free_port(bed, "snmpd", snmpd_conf)
    if not snmp_port:
        raise BedError("snmpd could not bind a port (logs in %s)" % bed.dir)
    _wait_for(20, "snmpd", bed, lambda: subprocess.run(
        ["snmpget", "-v2c", "-c", "public", "-t", "1", "-r", "0",
         "udp:127.0.0.1:%d" % snmp_port, SYS_NAME], capture_output=True,
        env=snmp_env()).returncode == 0)
    direct_port = free_udp_port() if direct else None  # checked below: ibsnmpd must hold it

    # --- ibsnmpd attached to the chosen node (one a fabric) ------------------------------
    with open(bed.path("ibsnmpd.conf"), "w") as f:
        f.write("# written by simfabric\n")
        if fabrics > 1:
            f.write("fabricName fabric-1\n")
        if not direct:
            f.write("agentxPingInterval 2\n")
        f.write("madTimeout 500\n")
        if direct:
            # direct mode: its own port, the same access as the bed's snmpd
            f.write("agentaddress udp:127.0.0.1:%d\n" % direct_port)
            f.write("rocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1\n")
            f.write('createUser %s SHA "%s" AES "%s"\n' % (V3_USER, V3_AUTH, V3_PRIV))
            f.write("view simfabricAll included .1\ngroup simfabricV3 usm %s\n" % V3_USER)
            f.write('access simfabricV3 "" usm priv prefix simfabricAll simfabricAll none\n')
            f.write("trap2sink 127.0.0.1:%d public\n" % trap_port)
        if traps:
            # opensm's default SM_Key; its log also says which traps it saw
            f.write("saKey 0x1\nosmLogFile %s\n" % bed.path("opensm.log"))
        if big_traps:
            f.write("# fabricsim is the SM: its Reports need no IsSM port, no SM_Key\n")
        if partitions:
            f.write("partitionFile %s\nopensmPidFile %s\n" % (bed.path("partitions.conf"),
                                                              bed.path("opensm.pid")))
        for line in conf_extra:
            f.write(line + "\n")
    if traps and not big_traps and not preload and ibsnmpd:
        # ibsim hands SA Reports (the traps opensm forwards) only to IsSM
        # clients: the test-only shim makes ibsnmpd's port one
        preload = issm_shim(ibsnmpd)
        if not preload:
            warn("simfabric: sim_issm_shim.so not found (build the project or set "
                 "SIM_ISSM_SHIM): IB traps will not reach ibsnmpd")
    for fabric in range(1, fabrics + 1):
        name = "ibsnmpd" + _suffix(fabric)
        if fabric > 1:  # the same settings, its own fabric's name
            with open(bed.path("ibsnmpd.conf")) as f:
                text = f.read().replace("fabricName fabric-1\n", "fabricName fabric-%d\n" % fabric)
            with open(bed.path(name + ".conf"), "w") as f:
                f.write(text)
        bed.write_cmd(name, ["env", "LD_PRELOAD=" + ((preload + " ") if preload else "") +
                             UMAD2SIM, "SIM_HOST=" + node, ibsnmpd or "ibsnmpd", "-f", "-Lf",
                             bed.path(name + ".log"), "-c", bed.path(name + ".conf"), "-x",
                             "unix:" + bed.path("agentx.sock"), "-p", bed.path(name + ".pid")] +
                      (["-D" + debug] if debug else []), fabric=fabric)
    with open(bed.path("env"), "w") as f:
        f.write("SIMFABRIC_DIR=%s\n" % bed.dir)
        f.write("SNMP_TARGET=udp:127.0.0.1:%d\n" % snmp_port)
        f.write("SNMP_COMMUNITY=public\nSNMP_RW_COMMUNITY=private\n")
        f.write('SNMP_V3_ARGS="-v3 -l authPriv -u %s -a SHA -A %s -x AES -X %s"\n'
                % (V3_USER, V3_AUTH, V3_PRIV))
        if direct_port:
            f.write("SNMP_DIRECT_TARGET=udp:127.0.0.1:%d\n" % direct_port)
        f.write("TRAP_LOG=%s\n" % bed.path("traps.log"))
        f.write("TRAP_TARGET=udp:127.0.0.1:%d\n" % trap_port)
        f.write("IBSIM_SOCKNAME=%s\n" % bed.ibsim_sockname)
        f.write("SIMFABRIC_NODE=%s\nSIMFABRIC_SM_NODE=%s\n" % (node, sm_node))
        f.write("SIMFABRIC_TOPOLOGY=%s\nUMAD2SIM=%s\n" % (topology, UMAD2SIM))
        if os.path.exists(bed.path("ib-node-name-map")):
            f.write("SIMFABRIC_NODE_NAME_MAP=%s\n" % bed.path("ib-node-name-map"))
        if fabrics > 1:
            f.write("SIMFABRIC_FABRICS=%d\n" % fabrics)
            for fabric in range(1, fabrics + 1):
                s = _suffix(fabric)
                for key, value in (("CONTEXT", "fabric-%d" % fabric),
                                   ("IBSIM_SOCKNAME", bed.sockname_of(fabric)),
                                   ("TOPOLOGY", bed.path("fabric%s.links" % s)),
                                   ("CONSOLE", bed.path("ibsim%s.console" % s)),
                                   ("IBSNMPD_LOG", bed.path("ibsnmpd%s.log" % s)),
                                   ("IBSNMPD_CONF", bed.path("ibsnmpd%s.conf" % s)),
                                   ("PERSISTENT_DIR",
                                    bed.path("persist" if fabric == 1 else "persist%s" % s))):
                    f.write("SIMFABRIC_FABRIC_%d_%s=%s\n" % (fabric, key, value))
    bed.env = bed._read_env()
    ready_oid = MADS_SENT if keyless else NODE_TYPE
    for fabric in range(1, fabrics + 1 if with_agent else 1):
        name = "ibsnmpd" + _suffix(fabric)
        bed.start_service(name)
        port = direct_port or snmp_port
        context = "fabric-%d" % fabric if fabrics > 1 else None
        why = None
        try:
            _wait_for(WAIT_AGENT_S, name + " to register", bed,
                      lambda: _agent_serves(bed, port, name, context, ready_oid))
            if not alive(bed.pid_of(name)):
                why = "%s exited (logs in %s)" % (name, bed.dir)
            elif direct_port and not holds_udp_port(bed.pid_of("ibsnmpd"), direct_port):
                why = "ibsnmpd does not hold udp:127.0.0.1:%d" % direct_port
        except BedError as e:
            why = str(e)
        if why:
            try:
                warn("\n".join(bed.log(name + ".log").splitlines()[-5:]))
            except OSError:
                pass
            raise BedError(why)


class running:
    """A bed for the time of a with-block (the benches, the fault and soak
    runs): its directory is made first (conf lines may name it as {dir}),
    the bed is brought up on entering and down, its directory removed
    (unless IBSNMPD_KEEP_TESTBED), on leaving. Every bed up is in
    running.beds, for stop_all_on_sigterm()."""

    beds = []

    def __init__(self, topology, node, conf=(), snmpd_conf=(), preload=None, direct=False,
                 debug=None, binary=None, minimal=True, prefix="ibsnmpd-bench.", big=None):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        if topology and not os.path.isabs(topology):
            topology = os.path.join(TOPOLOGIES, topology)
        self.args = dict(topology=topology, node=node, directory=self.dir,
                         conf_extra=[l.replace("{dir}", self.dir) for l in conf],
                         snmpd_extra=list(snmpd_conf), preload=preload, direct=direct,
                         debug=debug, ibsnmpd=binary, traps=not minimal,
                         partitions=not minimal, big=big)
        self.bed = None

    def __enter__(self):
        import sys
        try:
            self.bed = up(**self.args)
        except BedError as e:
            shutil.rmtree(self.dir, ignore_errors=True)
            sys.exit("simfabric up failed: %s" % e)
        running.beds.append(self)
        return self.bed

    def __exit__(self, *exc):
        if self in running.beds:
            running.beds.remove(self)
        if self.bed:
            self.bed.down()
        if not os.environ.get("IBSNMPD_KEEP_TESTBED"):
            shutil.rmtree(self.dir, ignore_errors=True)


def stop_all_on_sigterm(*files):
    """A run stopped with SIGTERM takes its beds down (and removes files)
    before it exits."""
    def stop(*_):
        for r in list(running.beds):
            r.__exit__()
        for f in files:
            if os.path.exists(f):
                os.unlink(f)
        os._exit(1)
    signal.signal(signal.SIGTERM, stop)
