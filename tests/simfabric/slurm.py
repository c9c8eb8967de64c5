"""Slurm's own controller beside a bed: Debian's munged and slurmctld, run as
bed services (stopped by their PIDs with the bed), with a slurm.conf that
names the fabric's hosts at 127.0.0.1 and TopologyPlugin=topology/tree, so
that the topology.conf ibsnmpd writes beside it is read by Slurm itself.
`scontrol show topology` is what Slurm made of the file; `scontrol show
hostnames` expands Slurm's hostlists (Slurm's code, not ours)."""
import os
import re
import shutil
import socket
import subprocess
import time

MUNGED = "/usr/sbin/munged"
SLURMCTLD = "/usr/sbin/slurmctld"


def installed():
    return all(os.access(p, os.X_OK) for p in (MUNGED, SLURMCTLD)) and \
        shutil.which("scontrol") is not None


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slurm:
    """munged and slurmctld for the hosts `hosts` (Slurm's hostlist
    expression, e.g. "h1-[1-4],h2-[1-4]"), configured in DIRECTORY/slurm/
    (made before the bed: ibsnmpd's configuration names it); started as
    services of a bed."""

    def __init__(self, directory, hosts):
        self.bed = None
        self.dir = os.path.join(directory, "slurm")
        os.makedirs(os.path.join(self.dir, "state"), exist_ok=True)
        os.makedirs(os.path.join(self.dir, "spool"), exist_ok=True)
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.topology_file = os.path.join(self.dir, "topology.conf")
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
                    "SelectType=select/linear\n"
                    "TopologyPlugin=topology/tree\n"
                    "ReturnToService=2\n"
                    "NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n"
                    "PartitionName=all Nodes=ALL Default=YES\n"
                    % (host, free_tcp_port(), free_tcp_port(), self.socket, self.dir,
                       self.dir, self.dir, self.log, hosts))
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def reload_command(self):
        """What ibsnmpd runs after it wrote the file (slurmReloadCommand)."""
        return "SLURM_CONF=%s scontrol reconfigure" % self.conf

    def start(self, bed):
        """munged, then slurmctld once munged answers; slurmctld once it
        answers `scontrol ping`."""
        self.bed = bed
        self.bed.write_cmd("munged", [
            MUNGED, "--foreground", "--force", "--socket=" + self.socket,
            "--key-file=" + os.path.join(self.dir, "munge.key"),
            "--pid-file=" + os.path.join(self.dir, "munged.pid"),
            "--log-file=" + os.path.join(self.dir, "munged.log"),
            "--seed-file=" + os.path.join(self.dir, "munged.seed")])
        self.bed.start_service("munged")
        self._wait(lambda: os.path.exists(self.socket), "munged's socket")
        self.bed.write_cmd("slurmctld", ["env", "SLURM_CONF=" + self.conf, SLURMCTLD, "-D",
                                         "-i"])
        self.bed.start_service("slurmctld")
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
        out = subprocess.run(["scontrol"] + list(args), env=self.env, capture_output=True,
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
        return [l for l in self.log_text(offset).splitlines()
                if re.search(r"error:.*(switch|topology|Invalid hostnames|leaf)", l, re.I)]

    def last_reading_errors(self, offset=0):
        """The complaints of slurmctld's last reading of its files since
        offset (it logs them before "reconfigure_controller: completed")."""
        marker = "_slurm_rpc_reconfigure_controller: completed"
        readings = self.log_text(offset).split(marker)
        last = readings[-2] if len(readings) > 1 else ""
        return [l for l in last.splitlines()
                if re.search(r"error:.*(switch|topology|Invalid hostnames|leaf)", l, re.I)]

    def reconfigured(self, offset=0):
        """How many reconfigurations slurmctld finished since offset."""
        return self.log_text(offset).count("_slurm_rpc_reconfigure_controller: completed")
