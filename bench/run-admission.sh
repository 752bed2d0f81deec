#!/usr/bin/env bash
# The burst experiment with real clients: segment admission off vs on, and the fair dispatch door
# alone, in `tailor nbd serve`, proxy mode, in front of a scarce nbdkit backend; 4 steady fio tenants
# and 1 bursty one. Now a command of its own: this runs `./tailor nbd experiment burst` with your
# options (same names and defaults as this script had, but the door alone is now run too: `--modes
# off,on` leaves it out; `--help` lists them, `--report DIR` adds plots). Work directory by default
# bench/target/admission. Needs fio (nbd engine) and nbdkit; the defaults take about 7 minutes.
#
# Usage: bench/run-admission.sh [--rounds 3] [--runtime 60] [--reserve 0.35] [--report DIR] [...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec ./tailor nbd experiment burst "$@"
