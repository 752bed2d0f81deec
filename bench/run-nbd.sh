#!/usr/bin/env bash
# Serves one file with Tailor (tailor nbd serve), qemu-nbd and nbdkit's file plugin in turn, drives
# each with the same fio jobs over fio's nbd engine, and prints a Markdown table side by side, with
# each server's ratio to qemu-nbd:
#   4 KiB random read, queue depth 32 per job, 4 jobs (4 connections): IOPS and P99 latency;
#   128 KiB sequential write, queue depth 8, 1 job: bandwidth and P99 latency.
# Progress goes to standard error, the table to standard output, fio's JSON to the work directory.
#
# Usage: bench/run-nbd.sh [--size 1GiB] [--runtime 20] [--ramp 5] [--rounds 1] [--dir DIR]
#                         [--servers tailor,qemu-nbd,nbdkit]
#   --size     size of the served file, filled with random data once (default 1GiB; fio units)
#   --runtime  seconds each job runs after --ramp seconds of warm-up (default 20 and 5)
#   --rounds   run every server this many times, interleaved, and keep each one's best (default 1)
#   --dir      work directory (default bench/target/nbd)
# Needs fio (with the nbd engine), qemu-nbd (qemu-utils), nbdkit and python3; the JDK is found like
# ./tailor does, and the CLI jar is built when stale. Defaults take about 3 minutes. All servers read
# the same file through the page cache (it fits in memory), so the figures compare the servers'
# own overhead per request, on this machine, at the same time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

size=1GiB runtime=20 ramp=5 rounds=1 dir=bench/target/nbd servers=tailor,qemu-nbd,nbdkit
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --ramp) ramp=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-nbd: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
for program in fio qemu-nbd nbdkit python3; do
  command -v "$program" >/dev/null 2>&1 || { echo "run-nbd: $program is missing" >&2; exit 1; }
done
fio --enghelp=nbd >/dev/null 2>&1 || { echo "run-nbd: this fio has no nbd engine" >&2; exit 1; }

# shellcheck source=../scripts/find-jdk.sh
. scripts/find-jdk.sh
tailor_find_jdk
./tailor --version >/dev/null   # builds cli/target/tailor.jar when sources changed

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
file=$dir/disk.img
if [ ! -f "$file" ] || [ "$(stat -c %s "$file")" != "$(python3 -c "
import re,sys; m=re.fullmatch(r'(\d+)([KMGT]i?B?)?', sys.argv[1]); u={'':0,'K':10,'M':20,'G':30,'T':40}
print(int(m[1]) << u[(m[2] or '')[:1]])" "$size")" ]; then
  echo "run-nbd: writing $size of random data to $file" >&2
  rm -f "$file"
  fio --name=fill --filename="$file" --rw=write --bs=1M --size="$size" --refill_buffers --output=/dev/null
fi
printf 'exports:\n  - name: bench\n    file: %s\n' "$file" > "$dir/tailor.yaml"

for job in randread seqwrite; do
  {
    echo "[global]"
    echo "ioengine=nbd"
    echo "uri=\${NBD_URI}"
    echo "time_based=1"
    echo "runtime=$runtime"
    echo "ramp_time=$ramp"
    echo "size=$size"
    echo "group_reporting=1"
    if [ "$job" = randread ]; then
      echo "rw=randread"; echo "bs=4k"; echo "iodepth=32"; echo "numjobs=4"
    else
      echo "rw=write"; echo "bs=128k"; echo "iodepth=8"; echo "numjobs=1"
    fi
    echo "[$job]"
  } > "$dir/$job.fio"
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pid=""
stop_server() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
trap stop_server EXIT

start_server() {   # name port
  case "$1" in
    tailor) "$JAVA_HOME/bin/java" ${TAILOR_JAVA_OPTS:-} -jar cli/target/tailor.jar nbd serve \
        --config "$dir/tailor.yaml" --listen "127.0.0.1:$2" >"$dir/$1.log" 2>&1 & ;;
    qemu-nbd) qemu-nbd -f raw -x bench -b 127.0.0.1 -p "$2" -t -e 16 "$file" >"$dir/$1.log" 2>&1 & ;;
    nbdkit) nbdkit -f -i 127.0.0.1 -p "$2" -e bench file "$file" >"$dir/$1.log" 2>&1 & ;;
    *) echo "run-nbd: unknown server $1" >&2; exit 2 ;;
  esac
  pid=$!
  for _ in $(seq 200); do   # up to 20 s
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-nbd: $1 did not start; its log:" >&2
  cat "$dir/$1.log" >&2
  exit 1
}

IFS=, read -r -a names <<< "$servers"
for round in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    port=$(free_port)
    start_server "$name" "$port"
    for job in randread seqwrite; do
      echo "run-nbd: round $round, $name, $job (${ramp}+${runtime} s)" >&2
      NBD_URI="nbd://127.0.0.1:$port/bench" fio "$dir/$job.fio" --output-format=json \
        > "$dir/$name-$job-$round.out" 2>"$dir/$name-$job-$round.err" || {
          echo "run-nbd: fio failed against $name:" >&2; cat "$dir/$name-$job-$round.err" >&2; exit 1; }
    done
    stop_server
  done
done

python3 - "$dir" "$rounds" "$servers" "$runtime" "$size" <<'PY'
import json, os, sys
directory, rounds, runtime, size = sys.argv[1], int(sys.argv[2]), sys.argv[4], sys.argv[5]
servers = sys.argv[3].split(",")

def load(name, job, rnd):
    text = open(os.path.join(directory, f"{name}-{job}-{rnd}.out")).read()
    data = json.loads(text[text.index("{"):])["jobs"][0]
    side = data["read" if job == "randread" else "write"]
    return {"iops": side["iops"], "mib": side["bw"] / 1024, "p99": side["clat_ns"]["percentile"]["99.000000"] / 1000}

best = {}
for name in servers:
    for job in ("randread", "seqwrite"):
        runs = [load(name, job, r) for r in range(1, rounds + 1)]
        best[name, job] = max(runs, key=lambda r: r["iops"])

def ratio(name, job, key):
    if "qemu-nbd" not in servers:
        return "–"
    return f"{best[name, job][key] / best['qemu-nbd', job][key]:.2f}"

print(f"fio nbd engine, {size} file in the page cache, {runtime} s per job, best of {rounds} round(s)")
print()
print("| server | 4 KiB randread IOPS (QD 32 × 4 jobs) | × qemu-nbd | P99 µs "
      "| 128 KiB seq write MiB/s (QD 8) | × qemu-nbd | P99 µs |")
print("|---|--:|--:|--:|--:|--:|--:|")
for name in servers:
    r, w = best[name, "randread"], best[name, "seqwrite"]
    print(f"| {name} | {r['iops']:,.0f} | {ratio(name, 'randread', 'iops')} | {r['p99']:,.0f} "
          f"| {w['mib']:,.0f} | {ratio(name, 'seqwrite', 'mib')} | {w['p99']:,.0f} |")
PY
