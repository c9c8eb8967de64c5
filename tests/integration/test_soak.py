"""bench/soak.py for one minute (after its warm-up): polling, traps, SETs,
link flaps, rediscoveries and SIGHUPs on a fat tree; ibsnmpd's descriptors
and AgentX sessions end where they began and its memory (in the plain build)
within the bench's slack. (bench/README.md has a 30-minute run.)"""
import os
import subprocess
import sys

from conftest import TOP


def test_one_minute_soak_ends_flat(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(TOP, "bench", "soak.py"), "1"],
                         capture_output=True, text=True, cwd=str(tmp_path))
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
