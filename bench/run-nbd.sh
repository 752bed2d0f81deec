#!/usr/bin/env bash
# Serves one file with Tailor (tailor nbd serve), qemu-nbd and nbdkit's file plugin in turn, over TCP
# and over a Unix socket, drives each with the same fio jobs over fio's nbd engine, runs the same jobs
# straight on the file (the physical limit: fio's io_uring and psync engines, no NBD at all), and
# prints a Markdown table side by side, with each server's ratio to a baseline server on the same
# transport and, for random reads, to the file:
#   4 KiB random read, queue depth 32 per job, 4 jobs (4 connections): IOPS and P99 latency;
#   128 KiB sequential write, queue depth 8, 1 job: bandwidth and P99 latency;
#   128 KiB sequential write, queue depth 8, 4 jobs (4 connections, NBD_FLAG_CAN_MULTI_CONN's use),
#   each on its own quarter of the file: bandwidth.
# Progress goes to standard error, the table to standard output, fio's JSON to the work directory.
#
# Usage: bench/run-nbd.sh [--size 1GiB] [--runtime 20] [--ramp 5] [--rounds 1] [--dir DIR]
#                         [--servers tailor,qemu-nbd,nbdkit] [--transports tcp,unix]
#                         [--file-engines io_uring,psync] [--baseline nbdkit] [--tailor-args "OPTIONS"]
#   --size         size of the served file, filled with random data once (default 1GiB; K, M, G, T
#                  with or without iB are powers of 1024)
#   --runtime      seconds each job runs after --ramp seconds of warm-up (default 20 and 5)
#   --rounds       run every case this many times, interleaved, and keep each one's best (default 1)
#   --dir          work directory (default bench/target/nbd)
#   --transports   tcp (127.0.0.1) and/or unix (a socket in the work directory)
#   --file-engines fio engines for the physical-limit rows on the file itself ("" for none);
#                  io_uring runs at the jobs' queue depths, psync at one request per job
#   --baseline     the server the ratios are to (default nbdkit; one of --servers)
#   --tailor-args  more options for tailor nbd serve, split on spaces (default none), e.g.
#                  "--fair-dispatch on" for the fair dispatch door
# Needs fio (with the nbd engine), qemu-nbd (qemu-utils), nbdkit and python3; the JDK is found like
# ./tailor does, and the CLI jar is built when stale. Defaults take about 11 minutes per round (3
# servers × 2 transports and 2 file engines, 3 jobs each, 25 s a job). All servers read the same file
# through the page cache (it fits in memory), so the figures compare the servers' own overhead per
# request, on this machine, at the same time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

size=1GiB runtime=20 ramp=5 rounds=1 dir=bench/target/nbd servers=tailor,qemu-nbd,nbdkit
transports=tcp,unix file_engines=io_uring,psync baseline=nbdkit tailor_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --ramp) ramp=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --transports) transports=$2; shift 2 ;;
    --file-engines) file_engines=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --tailor-args) tailor_args=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-nbd: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
IFS=, read -r -a names <<< "$servers"
IFS=, read -r -a transport_list <<< "$transports"
IFS=, read -r -a engines <<< "$file_engines"
read -r -a tailor_extra <<< "$tailor_args"
for transport in "${transport_list[@]}"; do
  case "$transport" in
    tcp|unix) ;;
    *) echo "run-nbd: --transports: \"$transport\" (expected: tcp and/or unix)" >&2; exit 2 ;;
  esac
done
case ",$servers," in
  *",$baseline,"*) ;;
  *) echo "run-nbd: --baseline: \"$baseline\" is not one of --servers ($servers)" >&2; exit 2 ;;
esac
for program in fio qemu-nbd nbdkit python3; do
  command -v "$program" >/dev/null 2>&1 || { echo "run-nbd: $program is missing" >&2; exit 1; }
done
fio --enghelp=nbd >/dev/null 2>&1 || { echo "run-nbd: this fio has no nbd engine" >&2; exit 1; }
for engine in "${engines[@]}"; do   # fio --enghelp lists the engines (an engine without options exits 1)
  fio --enghelp 2>/dev/null | grep -qx "[[:space:]]*$engine" || {
    echo "run-nbd: this fio has no $engine engine" >&2; exit 1; }
done

# shellcheck source=../scripts/find-jdk.sh
. scripts/find-jdk.sh
bytes=$(python3 -c "
import re,sys; m=re.fullmatch(r'(\d+)([KMGT]i?B?)?', sys.argv[1]); u={'':0,'K':10,'M':20,'G':30,'T':40}
if not m or int(m[1]) == 0:
    sys.exit(f'run-nbd: --size: \"{sys.argv[1]}\" (expected: a whole number of bytes > 0, or with K, M, G or T, as 512MiB)')
print(int(m[1]) << u[(m[2] or '')[:1]])" "$size") || exit 2
tailor_find_jdk
./tailor --version >/dev/null   # builds cli/target/tailor.jar when sources changed

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
file=$dir/disk.img
if [ ! -f "$file" ] || [ "$(stat -c %s "$file")" != "$bytes" ]; then
  echo "run-nbd: writing $size of random data to $file" >&2
  rm -f "$file"
  # fio reads "MiB" as 10^6 bytes (its kb_base quirk): give it the byte count this script means.
  fio --name=fill --filename="$file" --rw=write --bs=1M --size="$bytes" --refill_buffers --output=/dev/null
fi
printf 'exports:\n  - name: bench\n    file: %s\n' "$file" > "$dir/tailor.yaml"
quarter=$((bytes / 4))

jobs=(randread seqwrite seqwrite4)
# write_job JOB TARGET: fio's job file; TARGET is nbd (the URI from $NBD_URI) or a file engine.
write_job() {
  {
    echo "[global]"
    if [ "$2" = nbd ]; then
      echo "ioengine=nbd"; echo "uri=\${NBD_URI}"
    else
      echo "ioengine=$2"; echo "filename=$file"
    fi
    echo "time_based=1"
    echo "runtime=$runtime"
    echo "ramp_time=$ramp"
    echo "group_reporting=1"
    case "$1" in
      randread) echo "size=$bytes"; echo "rw=randread"; echo "bs=4k"; echo "iodepth=32"; echo "numjobs=4" ;;
      seqwrite) echo "size=$bytes"; echo "rw=write"; echo "bs=128k"; echo "iodepth=8"; echo "numjobs=1" ;;
      seqwrite4) echo "size=$quarter"; echo "offset_increment=$quarter"; echo "rw=write"; echo "bs=128k"
        echo "iodepth=8"; echo "numjobs=4" ;;
    esac
    echo "[$1]"
  } > "$dir/$1-$2.fio"
}
for job in "${jobs[@]}"; do
  write_job "$job" nbd
  for engine in "${engines[@]}"; do
    write_job "$job" "$engine"
  done
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

pid=""
stop_server() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
trap stop_server EXIT

start_server() {   # name transport port-or-socket
  local listen=() log="$dir/$1-$2.log"
  case "$1:$2" in
    tailor:tcp) listen=(--listen "127.0.0.1:$3") ;;
    tailor:unix) listen=(--unix "$3") ;;
    qemu-nbd:tcp) listen=(-b 127.0.0.1 -p "$3") ;;
    qemu-nbd:unix) listen=(-k "$3") ;;
    nbdkit:tcp) listen=(-i 127.0.0.1 -p "$3") ;;
    nbdkit:unix) listen=(-U "$3") ;;
    *) echo "run-nbd: unknown server $1" >&2; exit 2 ;;
  esac
  case "$1" in
    tailor) "$JAVA_HOME/bin/java" ${TAILOR_JAVA_OPTS:-} -jar cli/target/tailor.jar nbd serve \
        --config "$dir/tailor.yaml" "${listen[@]}" ${tailor_extra[@]+"${tailor_extra[@]}"} >"$log" 2>&1 & ;;
    qemu-nbd) qemu-nbd -f raw -x bench "${listen[@]}" -t -e 16 "$file" >"$log" 2>&1 & ;;
    nbdkit) nbdkit -f "${listen[@]}" -e bench file "$file" >"$log" 2>&1 & ;;
  esac
  pid=$!
  for _ in $(seq 200); do   # up to 20 s
    if reachable "$2" "$3"; then return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-nbd: $1 did not start on $2; its log:" >&2
  cat "$log" >&2
  exit 1
}

run_fio() {   # label job target uri round
  echo "run-nbd: round $5, $1, $2 (${ramp}+${runtime} s)" >&2
  NBD_URI="$4" fio "$dir/$2-$3.fio" --output-format=json > "$dir/$1-$2-$5.out" 2>"$dir/$1-$2-$5.err" || {
    echo "run-nbd: fio failed for $1, $2:" >&2; cat "$dir/$1-$2-$5.err" >&2; exit 1; }
}

for round in $(seq "$rounds"); do
  for transport in "${transport_list[@]}"; do
    for name in "${names[@]}"; do
      if [ "$transport" = tcp ]; then
        where=$(free_port)
        uri="nbd://127.0.0.1:$where/bench"
      else
        where="$dir/$name.sock"
        rm -f "$where"
        uri="nbd+unix:///bench?socket=$where"
      fi
      start_server "$name" "$transport" "$where"
      for job in "${jobs[@]}"; do
        run_fio "$name-$transport" "$job" nbd "$uri" "$round"
      done
      stop_server
    done
  done
  for engine in "${engines[@]}"; do
    for job in "${jobs[@]}"; do
      run_fio "file-$engine" "$job" "$engine" "" "$round"
    done
  done
done

python3 - "$dir" "$rounds" "$servers" "$runtime" "$size" "$transports" "$file_engines" "$baseline" <<'PY'
import json, os, sys
directory, rounds, runtime, size = sys.argv[1], int(sys.argv[2]), sys.argv[4], sys.argv[5]
servers, transports = sys.argv[3].split(","), sys.argv[6].split(",")
engines, baseline = [e for e in sys.argv[7].split(",") if e], sys.argv[8]
jobs = ("randread", "seqwrite", "seqwrite4")

def load(label, job, rnd):
    text = open(os.path.join(directory, f"{label}-{job}-{rnd}.out")).read()
    data = json.loads(text[text.index("{"):])["jobs"][0]
    side = data["read" if job == "randread" else "write"]
    return {"iops": side["iops"], "mib": side["bw"] / 1024, "p99": side["clat_ns"]["percentile"]["99.000000"] / 1000}

rows = [(f"{name}", transport, f"{name}-{transport}") for transport in transports for name in servers]
rows += [(f"file ({engine})", "–", f"file-{engine}") for engine in engines]
best = {}
for _, _, label in rows:
    for job in jobs:
        runs = [load(label, job, r) for r in range(1, rounds + 1)]
        best[label, job] = max(runs, key=lambda r: r["iops"])

def ratio(label, transport, job, key):
    if transport == "–":
        return "–"
    return f"{best[label, job][key] / best[f'{baseline}-{transport}', job][key]:.2f}"

file_label = f"file-{engines[0]}" if engines else None

def to_file(label):
    return "–" if file_label is None else f"{best[label, 'randread']['iops'] / best[file_label, 'randread']['iops']:.2f}"

print(f"fio nbd engine, {size} file in the page cache, {runtime} s per job, best of {rounds} round(s); "
      f"ratios to {baseline} on the same transport" + (f" and to the file ({engines[0]})" if engines else ""))
print()
print(f"| server | transport | 4 KiB randread IOPS (QD 32 × 4 jobs) | × {baseline} | × file | P99 µs "
      f"| 128 KiB seq write MiB/s (QD 8) | × {baseline} | P99 µs "
      f"| 128 KiB seq write, 4 connections, MiB/s | × {baseline} |")
print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for shown, transport, label in rows:
    r, w, w4 = best[label, "randread"], best[label, "seqwrite"], best[label, "seqwrite4"]
    print(f"| {shown} | {transport} | {r['iops']:,.0f} | {ratio(label, transport, 'randread', 'iops')} "
          f"| {to_file(label)} | {r['p99']:,.0f} "
          f"| {w['mib']:,.0f} | {ratio(label, transport, 'seqwrite', 'mib')} | {w['p99']:,.0f} "
          f"| {w4['mib']:,.0f} | {ratio(label, transport, 'seqwrite4', 'mib')} |")
PY
