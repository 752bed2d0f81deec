#!/usr/bin/env bash
# The low-load experiment with a real client: `tailor nbd serve --loop fifo` vs
# `--loop priority` while the proxy's background work (statistics, health checks, synthetic
# maintenance) runs; one fio job at queue depth 1.
# Now a command of its own: this runs `./tailor nbd experiment low-load` with your options (same names
# and defaults as this script had; `--help` lists them, `--report DIR` adds plots). Work directory by
# default bench/target/eventloop. Needs fio (nbd engine); the defaults take about 4 minutes.
#
# Usage: bench/run-eventloop.sh [--rounds 3] [--runtime 45] [--tasks 8 --busy-us 25 --period-us 1000] [...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec ./tailor nbd experiment low-load "$@"
