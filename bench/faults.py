#!/usr/bin/env python3
"""Faults with figures: what a manager sees while the fabric, the master
agent, the SM or the daemon's own inputs fail, one fault after the other on
one test bed (the faults, the manager and the trap source: the test-bed
package's simfabric/faults.py, which the fault matrix test shares).

Usage: bench/faults.py [--hold S] [--stop-hold S] [--only NAME[,NAME...]] [--json FILE]
Environment: IBSNMPD_BIN (else build/ibsnmpd), SIM_TRAP_INJECTOR and
SIM_ISSM_SHIM (else under build/tests)."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from simfabric import faults  # noqa: E402

if __name__ == "__main__":
    faults.main()
