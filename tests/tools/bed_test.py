#!/usr/bin/env python3
"""Runs one integration test file (the command after --) with a deadline,
then stops whatever its test beds left running, by PID.

ctest's own TIMEOUT kills the test's process and the children it can see,
but a bed's services are started in sessions of their own and belong to
init (tests/simfabric/bed.py, launch): a test killed at ctest's timeout, or
one that removed its bed's directory while it ran, left its simulator,
snmpd and ibsnmpd running, and they loaded every test after it. So:

- every service a bed starts is written to a registry file of this run
  ($IBSNMPD_BED_REGISTRY: "PID START NAME DIR", bed.py's register());
- the test runs in a process group of its own, with a deadline: past it,
  the group gets SIGTERM, then SIGKILL 10 s later, and the run fails
  saying so;
- at the end, pass, fail or deadline, every registered process still alive
  with its recorded start time (a PID is used again once its process is
  gone) gets SIGTERM, then SIGKILL, and is named: a test that leaves a
  process behind has it stopped here, and it is said.

Usage: bed_test.py --deadline SECONDS -- COMMAND [ARGS...]"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time


def start_time(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def registered(path):
    """[(pid, start, name, dir)] of the registry's lines"""
    res = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split(None, 3)
                if len(parts) == 4 and parts[0].isdigit():
                    res.append((int(parts[0]), parts[1], parts[2], parts[3].strip()))
    except OSError:
        pass
    return res


def still_running(entries):
    return [e for e in entries if start_time(e[0]) is not None and start_time(e[0]) == e[1]
            and not zombie(e[0])]


def zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def stop(entries):
    """TERM, then KILL after 5 s, each registered process still alive"""
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
        left = still_running(entries)
        for pid, _, _, _ in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        end = time.monotonic() + wait_s
        while still_running(left) and time.monotonic() < end:
            time.sleep(0.1)


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deadline", type=float, required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    fd, registry = tempfile.mkstemp(prefix="ibsnmpd-beds.", suffix=".txt")
    os.close(fd)
    env = dict(os.environ, IBSNMPD_BED_REGISTRY=registry)
    proc = subprocess.Popen(command, env=env, start_new_session=True)
    # ctest stopping this run (its own TIMEOUT, Ctrl-C) stops the test too
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _: kill_group(proc.pid, s))
    late = False
    try:
        rc = proc.wait(timeout=args.deadline)
    except subprocess.TimeoutExpired:
        late = True
        kill_group(proc.pid, signal.SIGTERM)
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid, signal.SIGKILL)
            rc = proc.wait()
    kill_group(proc.pid, signal.SIGKILL)  # what the test itself left in its group
    left = still_running(registered(registry))
    stop(left)
    os.unlink(registry)
    if late:
        print("bed_test: %s ran past its deadline of %d s and was stopped"
              % (" ".join(command[-1:]), args.deadline))
    if left:
        print("bed_test: stopped what the test's beds left running: %s" % ", ".join(
            "%s %d (%s)" % (name, pid, d) for pid, _, name, d in left))
    sys.exit(1 if late else rc)


if __name__ == "__main__":
    main()
