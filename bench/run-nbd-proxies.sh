#!/usr/bin/env bash
# Several NBD proxies (two by default, up to four) in front of one scarce backend, with real clients: how
# each proxy's admission budget should be set when it does not see the others' load (docs/nbd.md, Admission, Several proxies
# on one backend). The backend is the burst experiment's: nbdkit's memory plugin behind the delay filter,
# SERVERS threads of DELAY_MS each (a k-server FIFO queue), reached through a second nbdkit (nbd
# plugin, shared=true) so that all proxies' requests share those threads. Each proxy serves two
# steady fio tenants (4 KiB random reads, queue depth 4, 100 IOPS each) and one bursty one (queue
# depth 256; on proxy A 100 ms of I/O then 400 ms idle, on B 150 then 600, on C 125 then 500, on D 175
# then 700, so their bursts sometimes overlap and sometimes not). Modes, each with every proxy fresh,
# round after round:
#   off       admission off on each
#   whole     each proxy budgets the backend's whole capacity (--admission-iops C: over-committed)
#   fixed     each budgets its share of it (--admission-iops C / PROXIES)
#   door      admission off, the fair dispatch door alone on each
#   door-split  the door alone, each proxy's depth SERVERS / PROXIES (rounded down): the backend never holds more than its threads
#   whole-split  whole, with each door's depth SERVERS / PROXIES
# Every admission mode has the door behind it (Tailor's variant), depth SERVERS per proxy unless said. C is the
# backend's capacity, measured first with fio. Prints one line per run, then per mode the median over
# the rounds: the steady tenants' pooled P99 / P99.9 / P99.99 (fio's lat, ms, every proxy) and the
# bursty tenants' reads per second, together. Needs fio (nbd engine), nbdkit and python3; about
# 3 minutes a round with the defaults. Files in bench/target/nbd-proxies (runs.txt: the lines).
#
# Usage: bench/run-nbd-proxies.sh [ROUNDS=3] [RUNTIME=30] [MODES="off whole fixed door"] [PROXIES=2]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS=${1:-3}
RUNTIME=${2:-30}
MODES=${3:-off whole fixed door}
PROXIES=${4:-2}
case $PROXIES in 2 | 3 | 4) ;; *) echo "run-nbd-proxies: PROXIES $PROXIES (expected: 2, 3 or 4)" >&2; exit 2 ;; esac
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "run-nbd-proxies: ROUNDS $ROUNDS (expected: a whole number, 1 or more)" >&2; exit 2; }
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || { echo "run-nbd-proxies: RUNTIME $RUNTIME (expected: whole seconds, 1 or more)" >&2; exit 2; }
for mode in $MODES; do
    case $mode in off | whole | fixed | door | door-split | whole-split) ;;
        *) echo "run-nbd-proxies: unknown mode $mode (expected: off, whole, fixed, door, door-split or whole-split)" >&2; exit 2 ;;
    esac
done
[ -n "${MODES// /}" ] || { echo "run-nbd-proxies: MODES is empty (expected: one or more of off, whole, fixed, door, door-split, whole-split)" >&2; exit 2; }
NAMES=$(echo a b c d | cut -d' ' -f1-"$PROXIES")
RAMP=5
SERVERS=8
DELAY_MS=5
DIR=bench/target/nbd-proxies
for tool in fio nbdkit python3; do
    command -v "$tool" >/dev/null || { echo "run-nbd-proxies: needs $tool" >&2; exit 2; }
done
./tailor --version >/dev/null # builds the jar when missing or older than the sources, once, before the proxies start
mkdir -p "$DIR"
rm -f "$DIR"/run-*.json "$DIR"/*.log "$DIR/runs.txt"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
await_port() {
    for _ in $(seq 1 300); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "run-nbd-proxies: nothing listens on port $1 after 30 s ($2)" >&2
    exit 1
}

device=$(port)
nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$device" --threads "$SERVERS" --filter=delay memory 1G \
    rdelay=${DELAY_MS}ms wdelay=${DELAY_MS}ms >"$DIR/device.log" 2>&1 &
pids+=($!)
await_port "$device" device
backend=$(port)
nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$backend" --threads 600 nbd hostname=127.0.0.1 port="$device" \
    shared=true >"$DIR/backend.log" 2>&1 &
pids+=($!)
await_port "$backend" backend

fio --name=capacity --ioengine=nbd --uri="nbd://127.0.0.1:$backend/" --rw=randread --bs=4k --iodepth=64 \
    --size=1G --time_based --runtime=5 --ramp_time=1 --output-format=json --output="$DIR/capacity.json" >/dev/null
capacity=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' \
    "$DIR/capacity.json")
echo "run-nbd-proxies: the backend serves $capacity IOPS ($SERVERS × $DELAY_MS ms); $PROXIES proxies;" \
    "$ROUNDS round$([ "$ROUNDS" = 1 ] || echo s) of: $MODES"

config() { # proxy-name tenants...
    local name=$1
    shift
    {
        echo "eventLoopThreads: 1"
        echo "admission: {segmentSize: 256MiB, queueCapacityPerSegment: 256}"
        echo "exports:"
        for t in "$@"; do
            echo "  - {name: $t, tenant: $t, upstream: {host: 127.0.0.1, port: $backend, connections: 1}}"
        done
    } >"$DIR/$name.yaml"
}
for name in $NAMES; do config "$name" "steady-${name}1" "steady-${name}2" "bursty-$name"; done

burst() { # proxy-name: fio's think time and I/O time of its bursty tenant
    case $1 in
        a) echo "400ms 100ms" ;;
        b) echo "600ms 150ms" ;;
        c) echo "500ms 125ms" ;;
        d) echo "700ms 175ms" ;;
    esac
}

jobs() { # port per proxy, in the order of NAMES
    cat <<EOF
[global]
ioengine=nbd
rw=randread
bs=4k
size=1G
time_based=1
runtime=$RUNTIME
ramp_time=$RAMP
lat_percentiles=1
percentile_list=50:99:99.9:99.99
EOF
    for name in $NAMES; do
        local p=$1
        shift
        for t in "steady-${name}1" "steady-${name}2" "bursty-$name"; do
            echo
            echo "[$t]"
            echo "uri=nbd://127.0.0.1:$p/$t"
            if [ "$t" = "bursty-$name" ]; then
                read -r think io <<<"$(burst "$name")"
                echo "iodepth=256"
                echo "thinktime=$think"
                echo "thinktime_iotime=$io"
            else
                echo "iodepth=4"
                echo "rate_iops=100"
            fi
        done
    done
}

options() { # mode
    case $1 in
        off) echo "--admission off" ;;
        door) echo "--admission off --fair-dispatch on --fair-dispatch-depth $SERVERS" ;;
        door-split) echo "--admission off --fair-dispatch on --fair-dispatch-depth $((SERVERS / PROXIES))" ;;
        whole-split) echo "--admission on --admission-iops $capacity --fair-dispatch-depth $((SERVERS / PROXIES))" ;;
        whole) echo "--admission on --admission-iops $capacity --fair-dispatch-depth $SERVERS" ;;
        fixed) echo "--admission on --admission-iops $((capacity / PROXIES)) --fair-dispatch-depth $SERVERS" ;;
        *) echo "run-nbd-proxies: unknown mode $1 (expected: off, whole, fixed, door, door-split or whole-split)" >&2; exit 2 ;;
    esac
}

for round in $(seq 1 "$ROUNDS"); do
    for mode in $MODES; do
        proxies=()
        ports=()
        for name in $NAMES; do
            p=$(port)
            # shellcheck disable=SC2046
            ./tailor nbd serve --config "$DIR/$name.yaml" --listen "127.0.0.1:$p" $(options "$mode") \
                >"$DIR/run-$mode-$round-$name.log" 2>&1 &
            proxies+=($!)
            pids+=($!)
            ports+=("$p")
        done
        for i in "${!ports[@]}"; do await_port "${ports[$i]}" "proxy $((i + 1))"; done
        jobs "${ports[@]}" >"$DIR/tenants.fio"
        fio "$DIR/tenants.fio" --output-format=json+ --output="$DIR/run-$mode-$round.json" >/dev/null
        for p in "${proxies[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
        python3 - "$DIR/run-$mode-$round.json" "$mode" "$round" <<'PY' | tee -a "$DIR/runs.txt"
import json, sys
jobs = {j["jobname"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
def pooled(names):
    bins = {}
    for n in names:
        for ns, c in jobs[n]["read"]["lat_ns"].get("bins", {}).items():
            bins[int(ns)] = bins.get(int(ns), 0) + c
    total = sum(bins.values())
    out, keys = [], sorted(bins)
    for q in (0.99, 0.999, 0.9999):
        seen = 0
        for k in keys:
            seen += bins[k]
            if seen >= q * total:
                out.append(k / 1e6)
                break
    return out
steady = [n for n in jobs if n.startswith("steady")]
p = pooled(steady)
bursty = sum(jobs[n]["read"]["iops"] for n in jobs if n.startswith("bursty"))
print(f"{sys.argv[2]:11} round {sys.argv[3]}: steady P99 / P99.9 / P99.99 {p[0]:.1f} / {p[1]:.1f} / {p[2]:.1f} ms,"
      f" bursty {bursty:.0f} reads/s")
PY
    done
done
python3 - "$DIR/runs.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+)\s+round \d+: steady P99 / P99.9 / P99.99 ([\d.]+) / ([\d.]+) / ([\d.]+) ms, bursty (\d+)", line)
    if m:
        runs.setdefault(m.group(1), []).append([float(x) for x in m.groups()[1:]])
print("median over the rounds:")
for mode, rows in runs.items():
    med = [statistics.median(col) for col in zip(*rows)]
    print(f"  {mode:11} steady P99 / P99.9 / P99.99 {med[0]:.1f} / {med[1]:.1f} / {med[2]:.1f} ms, bursty {med[3]:.0f} reads/s")
PY
