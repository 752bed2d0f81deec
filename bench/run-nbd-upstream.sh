#!/usr/bin/env bash
# Tailor as a proxy in front of one upstream, nbdkit's file plugin on a file of random data (in the page
# cache), the upstream reached over a Unix-domain socket (upstream.unix) or over TCP on 127.0.0.1
# (upstream.host and port), alternated run by run (unix tcp unix tcp ...), a fresh nbdkit and a fresh
# proxy for each run. The clients are bench/run-nbd.sh's fio jobs over fio's nbd engine, on the proxy's
# TCP port (127.0.0.1) whichever way the upstream is reached:
#   4 KiB random read, queue depth 32 per job, 4 jobs (4 connections): IOPS and P99 latency;
#   128 KiB sequential write, queue depth 8, 1 job: bandwidth and P99 latency;
#   128 KiB sequential write, queue depth 8, 4 jobs, each on its own quarter of the file: bandwidth.
# Prints one line per run (with the load average before it, and the CPU time the proxy and nbdkit
# took per I/O over the measured seconds, from /proc/PID/stat), then per upstream transport the median
# and range over the rounds, and the medians' ratio unix / tcp. Progress goes to standard error, the
# table to standard output, fio's JSON to the work directory.
#
# Usage: bench/run-nbd-upstream.sh [--size 512MiB] [--runtime 10] [--ramp 5] [--rounds 3] [--dir DIR]
#   --size     size of the upstream's file, filled with random data once (default 512MiB; K, M, G
#              and T are powers of 1024, so 512MiB is 536,870,912 bytes)
#   --runtime  seconds each job runs after --ramp seconds of warm-up (default 10 and 5)
#   --rounds   runs of each upstream transport, alternated (default 3)
#   --dir      work directory (default bench/target/nbd-upstream)
# Needs fio (with the nbd engine), nbdkit and python3; the JDK is found like ./tailor does, and the CLI
# jar is built when stale. Defaults take about 5 minutes (6 runs of 3 jobs, 15 s a job).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

size=512MiB runtime=10 ramp=5 rounds=3 dir=bench/target/nbd-upstream
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --ramp) ramp=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-nbd-upstream: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || {
  echo "run-nbd-upstream: --rounds: \"$rounds\" (expected: a whole number, 1 or more)" >&2; exit 2; }
for option in runtime ramp; do
  [[ ${!option} =~ ^[1-9][0-9]*$ ]] || {
    echo "run-nbd-upstream: --$option: \"${!option}\" (expected: whole seconds, 1 or more)" >&2; exit 2; }
done
[[ $size =~ ^[1-9][0-9]*([KMGT](i?B)?)?$ ]] || {
  echo "run-nbd-upstream: --size: \"$size\" (expected: bytes, or a number with K, M, G or T, e.g. 512MiB)" >&2; exit 2; }
for program in fio nbdkit python3; do
  command -v "$program" >/dev/null 2>&1 || { echo "run-nbd-upstream: $program is missing" >&2; exit 1; }
done
fio --enghelp=nbd >/dev/null 2>&1 || { echo "run-nbd-upstream: this fio has no nbd engine" >&2; exit 1; }

# shellcheck source=../scripts/find-jdk.sh
. scripts/find-jdk.sh
tailor_find_jdk
./tailor --version >/dev/null   # builds cli/target/tailor.jar when sources changed

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
file=$dir/disk.img
bytes=$(python3 -c "
import re,sys; m=re.fullmatch(r'(\d+)([KMGT]i?B?)?', sys.argv[1]); u={'':0,'K':10,'M':20,'G':30,'T':40}
print(int(m[1]) << u[(m[2] or '')[:1]])" "$size")
if [ ! -f "$file" ] || [ "$(stat -c %s "$file")" != "$bytes" ]; then
  echo "run-nbd-upstream: writing $size of random data to $file" >&2
  rm -f "$file"
  fio --name=fill --filename="$file" --rw=write --bs=1M --size="$bytes" --refill_buffers --output=/dev/null
fi
quarter=$((bytes / 4))
rm -f "$dir"/run-*.out "$dir"/runs.txt

jobs=(randread seqwrite seqwrite4)
for job in "${jobs[@]}"; do
  {
    echo "[global]"
    echo "ioengine=nbd"; echo "uri=\${NBD_URI}"
    echo "time_based=1"; echo "runtime=$runtime"; echo "ramp_time=$ramp"; echo "group_reporting=1"
    case "$job" in
      randread) echo "size=$bytes"; echo "rw=randread"; echo "bs=4k"; echo "iodepth=32"; echo "numjobs=4" ;;
      seqwrite) echo "size=$bytes"; echo "rw=write"; echo "bs=128k"; echo "iodepth=8"; echo "numjobs=1" ;;
      seqwrite4) echo "size=$quarter"; echo "offset_increment=$quarter"; echo "rw=write"; echo "bs=128k"
        echo "iodepth=8"; echo "numjobs=4" ;;
    esac
    echo "[$job]"
  } > "$dir/$job.fio"
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# reachable tcp PORT | unix SOCKET: whether something accepts connections there.
reachable() {
  python3 - "$1" "$2" <<'PY' 2>/dev/null
import socket, sys
kind, where = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET if kind == "tcp" else socket.AF_UNIX)
s.settimeout(1)
s.connect(("127.0.0.1", int(where)) if kind == "tcp" else where)
PY
}

upstream_pid="" proxy_pid=""
stop_all() {
  for p in "$proxy_pid" "$upstream_pid"; do
    if [ -n "$p" ]; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  proxy_pid="" upstream_pid=""
}
trap stop_all EXIT

cpu_ticks() {   # pid: its user + system CPU time so far, in clock ticks (/proc/PID/stat)
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

await() {   # name pid kind where log
  for _ in $(seq 200); do   # up to 20 s
    if reachable "$3" "$4"; then return 0; fi
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-nbd-upstream: $1 did not start on $3 $4; its log:" >&2
  cat "$5" >&2
  exit 1
}

for round in $(seq "$rounds"); do
  for transport in unix tcp; do
    if [ "$transport" = unix ]; then
      where=$dir/upstream.sock
      rm -f "$where"
      nbdkit -f -U "$where" -e bench file "$file" >"$dir/nbdkit.log" 2>&1 &
      printf 'exports:\n  - name: bench\n    upstream:\n      unix: %s\n      export: bench\n' "$where" \
        > "$dir/tailor.yaml"
    else
      where=$(free_port)
      nbdkit -f -i 127.0.0.1 -p "$where" -e bench file "$file" >"$dir/nbdkit.log" 2>&1 &
      printf 'exports:\n  - name: bench\n    upstream:\n      host: 127.0.0.1\n      port: %s\n      export: bench\n' \
        "$where" > "$dir/tailor.yaml"
    fi
    upstream_pid=$!
    await nbdkit "$upstream_pid" "$transport" "$where" "$dir/nbdkit.log"
    port=$(free_port)
    "$JAVA_HOME/bin/java" ${TAILOR_JAVA_OPTS:-} -jar cli/target/tailor.jar nbd serve --config "$dir/tailor.yaml" \
      --listen "127.0.0.1:$port" >"$dir/tailor.log" 2>&1 &
    proxy_pid=$!
    await tailor "$proxy_pid" tcp "$port" "$dir/tailor.log"
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    for job in "${jobs[@]}"; do
      echo "run-nbd-upstream: round $round, upstream over $transport, $job (${ramp}+${runtime} s)" >&2
      out="$dir/run-$round-$transport-$job.out"
      NBD_URI="nbd://127.0.0.1:$port/bench" fio "$dir/$job.fio" --output-format=json > "$out" 2>"$out.err" &
      fio_pid=$!
      sleep "$ramp"
      before="$(cpu_ticks "$proxy_pid") $(cpu_ticks "$upstream_pid")"
      sleep "$runtime"
      echo "$before $(cpu_ticks "$proxy_pid") $(cpu_ticks "$upstream_pid")" > "$out.cpu"
      wait "$fio_pid" || { echo "run-nbd-upstream: fio failed:" >&2; cat "$out.err" >&2; exit 1; }
    done
    echo "$round $transport $load" >> "$dir/runs.txt"
    stop_all
  done
done

python3 - "$dir" "$runtime" "$size" "$(getconf CLK_TCK)" <<'PY'
import json, os, statistics, sys
directory, runtime, size, tick = sys.argv[1], sys.argv[2], sys.argv[3], 1e6 / int(sys.argv[4])

def load(rnd, transport, job):
    path = os.path.join(directory, f"run-{rnd}-{transport}-{job}.out")
    text = open(path).read()
    data = json.loads(text[text.index("{"):])["jobs"][0]
    side = data["read" if job == "randread" else "write"]
    p0, u0, p1, u1 = (int(x) for x in open(path + ".cpu").read().split())
    return {"iops": side["iops"], "mib": side["bw"] / 1024, "p99": side["clat_ns"]["percentile"]["99.000000"] / 1000,
            "cpu": ((p1 - p0) * tick / side["total_ios"], (u1 - u0) * tick / side["total_ios"])}

runs = []
for line in open(os.path.join(directory, "runs.txt")):
    rnd, transport, *loadavg = line.split()
    r, w, w4 = (load(rnd, transport, job) for job in ("randread", "seqwrite", "seqwrite4"))
    runs.append((rnd, transport, " ".join(loadavg),
                 r["iops"], r["p99"], *r["cpu"], w["mib"], w["p99"], *w["cpu"], w4["mib"], *w4["cpu"]))

print(f"fio nbd engine through the proxy (TCP, 127.0.0.1) to nbdkit's file plugin ({size} file in the page "
      f"cache), {runtime} s per job; the upstream over a Unix socket or TCP, alternated; CPU: user + system "
      f"time of the proxy and of nbdkit over the measured seconds, per I/O")
print()
print("| round | upstream | load average before | 4 KiB randread IOPS (QD 32 × 4) | P99 µs | µs CPU/read proxy "
      "| nbdkit | 128 KiB write MiB/s (QD 8) | P99 µs | µs CPU/write proxy | nbdkit "
      "| 128 KiB write, 4 connections, MiB/s | µs CPU/write proxy | nbdkit |")
print("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for rnd, transport, loadavg, *figures in runs:
    cells = [f"{v:,.0f}" if v >= 100 else f"{v:.1f}" for v in figures]
    print(f"| {rnd} | {transport} | {loadavg} | " + " | ".join(cells) + " |")
print()
columns = ("4 KiB randread IOPS", "randread P99 µs", "µs CPU/read proxy", "nbdkit",
           "128 KiB write MiB/s", "write P99 µs", "µs CPU/write proxy", "nbdkit",
           "4-connection write MiB/s", "µs CPU/write proxy", "nbdkit")
medians = {}
for transport in ("unix", "tcp"):
    mine = [run for run in runs if run[1] == transport]
    cells = []
    for i in range(len(columns)):
        values = [run[3 + i] for run in mine]
        medians[transport, i] = statistics.median(values)
        shown = (lambda v: f"{v:,.0f}") if min(values) >= 100 else (lambda v: f"{v:.1f}")
        cells.append(f"{shown(medians[transport, i])} ({shown(min(values))}–{shown(max(values))})")
    print(f"{transport}: median (range) " + "; ".join(f"{c} {v}" for c, v in zip(columns, cells)))
print("unix / tcp, medians: " + "; ".join(
    f"{c} {medians['unix', i] / medians['tcp', i]:.2f}" for i, c in enumerate(columns)))
PY
