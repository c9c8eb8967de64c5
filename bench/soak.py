#!/usr/bin/env python3
"""A soak: everything a manager and the fabric do, for MINUTES, on a fat tree;
what ibsnmpd holds must end flat (the run itself: the test-bed package's
simfabric/soak.py, which the soak test shares).

Usage: bench/soak.py MINUTES (CI: 1). Environment as bench/faults.py."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from simfabric import soak  # noqa: E402

if __name__ == "__main__":
    soak.main()
