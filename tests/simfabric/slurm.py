"""Slurm's own controller beside a bed: Debian's munged and slurmctld, run as
bed services (stopped by their PIDs with the bed), with a slurm.conf that
names the fabric's hosts at 127.0.0.1 and TopologyPlugin=topology/tree, so
that the topology.conf ibsnmpd writes beside it is read by Slurm itself.
`scontrol show topology` is what Slurm made of the file; `scontrol show
hostnames` expands Slurm's hostlists (Slurm's code, not ours).

yaml=True: the Slurm that reads topology.yaml (Debian unstable's, 25.05 or
later, unpacked by scripts/install-deps and run in its own root by
tests/tools/slurm-next-run) with the system's munged; the file beside
slurm.conf is then topology.yaml, which Slurm reads before topology.conf."""
import os
import re
import shutil
import socket
import subprocess
import time

from .bed import free_port

MUNGED = "/usr/sbin/munged"
SLURMCTLD = "/usr/sbin/slurmctld"
NEXT_ROOT = os.environ.get("SLURM_NEXT_ROOT", "/var/cache/ibsnmpd-test/slurm-next/root")
NEXT_RUN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools",
                        "slurm-next-run")
# what slurmctld says of a topology it cannot take: 22.05's "error: WARNING:
# ...", later ones' "warning: ...", an unknown host's lookup failure, a file
# it cannot read ("fatal:" when it is topology.yaml)
COMPLAINT = re.compile(r"(error|warning|fatal):.*(switch|topology|Invalid hostnames|leaf|block|"
                       r"lookup failure|yaml)", re.I)


def installed(yaml=False):
    if yaml:
        return os.access(NEXT_ROOT + "/usr/sbin/slurmctld-wlm", os.X_OK) and \
            os.access(NEXT_ROOT + "/usr/bin/scontrol", os.X_OK) and os.access(MUNGED, os.X_OK)
    return all(os.access(p, os.X_OK) for p in (MUNGED, SLURMCTLD)) and \
        shutil.which("scontrol") is not None


free_tcp_port = free_port  # a TCP port for a daemon (bed.py says why not bind(0)'s)


class Slurm:
    """munged and slurmctld for the hosts `hosts` (Slurm's hostlist
    expression, e.g. "h1-[1-4],h2-[1-4]"), configured in DIRECTORY/slurm/
    (made before the bed: ibsnmpd's configuration names it); started as
    services of a bed."""

    def __init__(self, directory, hosts, yaml=False):
        self.bed = None
        self.yaml = yaml
        self.dir = os.path.join(directory, "slurm")
        os.makedirs(os.path.join(self.dir, "state"), exist_ok=True)
        os.makedirs(os.path.join(self.dir, "spool"), exist_ok=True)
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.topology_file = os.path.join(self.dir, "topology.yaml" if yaml else "topology.conf")
        self.socket = os.path.join(self.dir, "munge.socket")
        self.log = os.path.join(self.dir, "slurmctld.log")
        key = os.path.join(self.dir, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        host = socket.gethostname().split(".")[0]
        with open(self.conf, "w") as f:
            f.write("ClusterName=ibsnmpd\n"
                    "SlurmctldHost=%s(127.0.0.1)\n"
                    "SlurmctldPort=%d\n"
                    "SlurmdPort=%d\n"
                    "AuthType=auth/munge\n"
                    "AuthInfo=socket=%s\n"
                    "CredType=cred/munge\n"
                    "SlurmUser=root\n"
                    "StateSaveLocation=%s/state\n"
                    "SlurmdSpoolDir=%s/spool\n"
                    "SlurmctldPidFile=%s/slurmctld.pid\n"
                    "SlurmctldLogFile=%s\n"
                    "SlurmctldDebug=info\n"
                    "ProctrackType=proctrack/linuxproc\n"
                    "TaskPlugin=task/none\n"
                    "SchedulerType=sched/builtin\n"
                    # topology/tree needs select/cons_tres from 24.05 on;
                    # topology.yaml names each topology's plugin
                    "%s"
                    "ReturnToService=2\n"
                    "NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n"
                    "PartitionName=all Nodes=ALL Default=YES\n"
                    % (host, free_tcp_port(), free_tcp_port(), self.socket, self.dir,
                       self.dir, self.dir, self.log,
                       "SelectType=select/cons_tres\n" if yaml else
                       "SelectType=select/linear\nTopologyPlugin=topology/tree\n", hosts))
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def _program(self, name):
        """The command line that runs Slurm's program name."""
        if self.yaml:
            return [NEXT_RUN, {"slurmctld": "/usr/sbin/slurmctld-wlm",
                               "scontrol": "/usr/bin/scontrol"}[name]]
        return [{"slurmctld": SLURMCTLD, "scontrol": "scontrol"}[name]]

    def reload_command(self):
        """What ibsnmpd runs after it wrote the file (slurmReloadCommand)."""
        return "SLURM_CONF=%s %s reconfigure" % (self.conf, " ".join(self._program("scontrol")))

    def start(self, bed):
        """munged, then slurmctld once munged answers; slurmctld once it
        answers `scontrol ping`."""
        self.bed = bed
        # its services' names: a bed may run both Slurms (the demo does)
        munged, slurmctld = ("munged-next", "slurmctld-next") if self.yaml else \
            ("munged", "slurmctld")
        self.bed.write_cmd(munged, [
            MUNGED, "--foreground", "--force", "--socket=" + self.socket,
            "--key-file=" + os.path.join(self.dir, "munge.key"),
            "--pid-file=" + os.path.join(self.dir, "munged.pid"),
            "--log-file=" + os.path.join(self.dir, "munged.log"),
            "--seed-file=" + os.path.join(self.dir, "munged.seed")])
        self.bed.start_service(munged)
        self._wait(lambda: os.path.exists(self.socket), "munged's socket")
        self.bed.write_cmd(slurmctld, ["env", "SLURM_CONF=" + self.conf] +
                           self._program("slurmctld") + ["-D", "-i"])
        self.bed.start_service(slurmctld)
        self._wait(lambda: "is UP" in self.scontrol("ping", check=False), "slurmctld's answer")

    def _wait(self, predicate, what, seconds=60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if predicate():
                return
            time.sleep(0.2)
        raise AssertionError("no %s in %d s; slurmctld.log: %s" % (
            what, seconds, self.log_text()[-2000:]))

    def scontrol(self, *args, check=True):
        out = subprocess.run(self._program("scontrol") + list(args), env=self.env,
                             capture_output=True,
                             text=True, timeout=60)
        if check and out.returncode:
            raise AssertionError("scontrol %s: %s %s" % (" ".join(args), out.stdout,
                                                         out.stderr))
        return out.stdout

    def hostnames(self, hostlist):
        """Slurm's own expansion of a hostlist."""
        if not hostlist:
            return []
        return self.scontrol("show", "hostnames", hostlist).split()

    def topology(self):
        """{switch: (level, {hosts below it}, {switches under it})} as
        slurmctld holds the tree (`scontrol show topology`)."""
        tree = {}
        for line in self.scontrol("show", "topology").splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "SwitchName" not in fields:
                continue
            tree[fields["SwitchName"]] = (
                int(fields.get("Level", "0")), set(self.hostnames(fields.get("Nodes", ""))),
                set(self.hostnames(fields.get("Switches", ""))))
        return tree

    def blocks(self, topology):
        """{block: {hosts}} of a block topology as slurmctld holds it
        (`scontrol show topology NAME`), the base blocks only."""
        blocks = {}
        for line in self.scontrol("show", "topology", topology).splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "BlockName" in fields:
                blocks[fields["BlockName"]] = set(self.hostnames(fields.get("Nodes", "")))
        return blocks

    def leaf_of(self):
        """{host: its level-0 switch} as slurmctld holds the tree."""
        return {h: name for name, (level, hosts, _) in self.topology().items() if level == 0
                for h in hosts}

    def log_text(self, offset=0):
        try:
            with open(self.log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def topology_errors(self, offset=0):
        """slurmctld's complaints about the file (topology.conf(5)) since
        offset: unknown hosts, a host under two leaves, hosts no switch
        reaches."""
        return [l for l in self.log_text(offset).splitlines() if COMPLAINT.search(l)]

    def _readings(self, offset):
        """The texts slurmctld logged while it read its files anew, since
        offset, one a finished reconfiguration: 22.05 logs them before
        "_slurm_rpc_reconfigure_controller: completed"; later ones start
        again in place ("Attempting to reconfigure" ... "Running as primary
        controller")."""
        text = self.log_text(offset)
        if not self.yaml:
            return text.split("_slurm_rpc_reconfigure_controller: completed")[:-1]
        done = "Running as primary controller"
        return [r.split(done)[0] for r in text.split("Attempting to reconfigure")[1:]
                if done in r]

    def last_reading_errors(self, offset=0):
        """The complaints of slurmctld's last reading of its files since
        offset."""
        readings = self._readings(offset)
        last = readings[-1] if readings else ""
        return [l for l in last.splitlines() if COMPLAINT.search(l)]

    def reconfigured(self, offset=0):
        """How many reconfigurations slurmctld finished since offset."""
        return len(self._readings(offset))
