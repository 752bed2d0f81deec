#!/usr/bin/env bash
# The burst experiment with real clients (issue 7): segment admission off vs on in `tailor nbd serve`,
# proxy mode in front of a scarce backend shared by every tenant.
#   Backend: nbdkit's memory plugin behind the delay filter, --servers request threads each holding a
#   request --delay-ms (a k-server FIFO queue: k ÷ delay requests per second at most), reached
#   through a second nbdkit (nbd plugin, shared=true) so that every tenant's requests share those k
#   threads through one connection, in arrival order. Its capacity is measured (fio, queue depth 64,
#   4 KiB random reads, 5 s) and admission's budget set from it: capacityCostUnitsPerSecond =
#   measured IOPS × 117,399 (a 4 KiB random read in admission's default cost model).
#   Tenants: --steady fio jobs (4 KiB random reads, queue depth 4, --steady-iops each) and one bursty
#   job (queue depth --burst-qd, unthrottled for --burst-on ms of I/O, then idle for --burst-off ms),
#   each on its own export (its own 1 GiB virtual disk, --segment-size segments) of one proxy with
#   one event loop. Each round runs admission off, then on (A B A B ...), a fresh proxy each time.
# Prints, as Markdown: the steady tenants' latency percentiles (submission + completion) pooled over all steady jobs and
# rounds (fio's latency histograms), each run's figures, the bursty tenant's, and admission's counters
# from the proxy's metrics file. Progress goes to standard error, fio's JSON and the metrics files to
# the work directory.
#
# Usage: bench/run-admission.sh [--runtime 60] [--ramp 5] [--rounds 2] [--steady 4] [--steady-iops 100]
#                               [--burst-qd 256] [--burst-on 100] [--burst-off 400] [--servers 8]
#                               [--delay-ms 5] [--segment-size 256MiB] [--reserve 0.2]
#                               [--capacity-factor 1.0] [--dir DIR]
#   --runtime, --ramp   seconds measured after seconds of warm-up, per run (default 60 and 5)
#   --rounds            rounds of (off, on) (default 2)
#   --reserve           admission.reserveFraction (default 0.2, admission's default)
#   --capacity-factor   admission's budget as a multiple of the measured capacity (default 1.0)
#   --dir               work directory (default bench/target/admission)
# Needs fio (with the nbd engine), nbdkit (memory and nbd plugins, delay filter) and python3; the JDK
# is found like ./tailor does, and the CLI jar is built when stale. Defaults take about 5 minutes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

runtime=60 ramp=5 rounds=2 steady=4 steady_iops=100 burst_qd=256 burst_on=100 burst_off=400
servers=8 delay_ms=5 segment_size=256MiB reserve=0.2 capacity_factor=1.0 dir=bench/target/admission
while [ $# -gt 0 ]; do
  case "$1" in
    --runtime) runtime=$2; shift 2 ;;
    --ramp) ramp=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --steady) steady=$2; shift 2 ;;
    --steady-iops) steady_iops=$2; shift 2 ;;
    --burst-qd) burst_qd=$2; shift 2 ;;
    --burst-on) burst_on=$2; shift 2 ;;
    --burst-off) burst_off=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --delay-ms) delay_ms=$2; shift 2 ;;
    --segment-size) segment_size=$2; shift 2 ;;
    --reserve) reserve=$2; shift 2 ;;
    --capacity-factor) capacity_factor=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-admission: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
for program in fio nbdkit python3; do
  command -v "$program" >/dev/null 2>&1 || { echo "run-admission: $program is missing" >&2; exit 1; }
done
fio --enghelp=nbd >/dev/null 2>&1 || { echo "run-admission: this fio has no nbd engine" >&2; exit 1; }
nbdkit --filter=delay memory --dump-plugin >/dev/null 2>&1 \
  || { echo "run-admission: nbdkit has no delay filter or memory plugin" >&2; exit 1; }
nbdkit nbd --dump-plugin >/dev/null 2>&1 || { echo "run-admission: nbdkit has no nbd plugin" >&2; exit 1; }

# shellcheck source=../scripts/find-jdk.sh
. scripts/find-jdk.sh
tailor_find_jdk
./tailor --version >/dev/null   # builds cli/target/tailor.jar when sources changed

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -f "$dir"/run-*.json "$dir"/run-*.prom "$dir"/run-*.log "$dir"/run-*.err

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_port() {   # name port pid
  for _ in $(seq 200); do   # up to 20 s
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-admission: $1 did not start; its log:" >&2
  cat "$dir/$1.log" >&2
  exit 1
}

pids=()
proxy=""
stop_proxy() {
  if [ -n "$proxy" ]; then
    kill "$proxy" 2>/dev/null || true
    wait "$proxy" 2>/dev/null || true
    proxy=""
  fi
}
cleanup() {
  stop_proxy
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# The backend: k threads of `delay` ms each, behind one shared connection; the front nbdkit has a
# thread per request the bursty tenant may have in flight, so its requests queue at the k threads.
device_port=$(free_port)
nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$device_port" --threads "$servers" \
  --filter=delay memory 1G "rdelay=${delay_ms}ms" >"$dir/device.log" 2>&1 &
pids+=($!)
wait_port device "$device_port" "$!"
backend_port=$(free_port)
nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$backend_port" --threads "$((burst_qd + 16))" \
  nbd hostname=127.0.0.1 "port=$device_port" shared=true >"$dir/backend.log" 2>&1 &
pids+=($!)
wait_port backend "$backend_port" "$!"

echo "run-admission: measuring the backend ($servers × ${delay_ms} ms, nominal $((servers * 1000 / delay_ms)) IOPS), 5 s" >&2
fio --name=capacity --ioengine=nbd --uri="nbd://127.0.0.1:$backend_port/" --rw=randread --bs=4k \
  --iodepth=64 --size=1G --time_based --runtime=5 --ramp_time=1 --output-format=json \
  --output="$dir/capacity.json" >/dev/null 2>"$dir/capacity.err" \
  || { echo "run-admission: fio failed against the backend:" >&2; cat "$dir/capacity.err" >&2; exit 1; }
capacity_iops=$(python3 -c '
import json, sys
t = open(sys.argv[1]).read()
print(round(json.loads(t[t.index("{"):])["jobs"][0]["read"]["iops"]))' "$dir/capacity.json")
cost_units=$(python3 -c 'import sys; print(f"{float(sys.argv[1]) * float(sys.argv[2]) * 117399:.6g}")' \
  "$capacity_iops" "$capacity_factor")
echo "run-admission: backend serves $capacity_iops IOPS; admission budget $cost_units cost units/s" >&2

# The proxy: one export (virtual disk) per tenant, all proxied to the backend; one event loop.
tenants=()
for i in $(seq "$steady"); do tenants+=("steady$i"); done
tenants+=(bursty)
{
  echo "eventLoopThreads: 1"
  echo "admission:"
  echo "  capacityCostUnitsPerSecond: $cost_units"
  echo "  segmentSize: $segment_size"
  echo "  reserveFraction: $reserve"
  echo "  queueCapacityPerSegment: $burst_qd   # the bursty client's queue depth: nothing is refused"
  echo "loop:"
  echo "  metricsFile: $dir/metrics.prom   # absolute: a relative one is taken from the working directory"
  echo "  metricsPeriodMillis: 500"
  echo "exports:"
  for t in "${tenants[@]}"; do
    printf '  - name: %s\n    tenant: %s\n    upstream: {host: 127.0.0.1, port: %s, connections: 1}\n' \
      "$t" "$t" "$backend_port"
  done
} > "$dir/tailor.yaml"

{
  echo "[global]"
  echo "ioengine=nbd"
  echo "rw=randread"
  echo "bs=4k"
  echo "size=1G"
  echo "time_based=1"
  echo "runtime=$runtime"
  echo "ramp_time=$ramp"
  echo "lat_percentiles=1   # submission + completion: the nbd engine can spend a request's wait in either"
  echo "percentile_list=50:99:99.9:99.99"
  for t in "${tenants[@]}"; do
    echo
    echo "[$t]"
    echo "uri=nbd://127.0.0.1:\${PROXY_PORT}/$t"
    if [ "$t" = bursty ]; then
      echo "iodepth=$burst_qd"
      echo "thinktime=${burst_off}ms"
      echo "thinktime_iotime=${burst_on}ms"
    else
      echo "iodepth=4"
      echo "rate_iops=$steady_iops"
    fi
  done
} > "$dir/tenants.fio"

for round in $(seq "$rounds"); do
  for mode in off on; do
    port=$(free_port)
    rm -f "$dir/metrics.prom"
    # shellcheck disable=SC2086 # TAILOR_JAVA_OPTS holds several options
    "$JAVA_HOME/bin/java" ${TAILOR_JAVA_OPTS:-} -jar cli/target/tailor.jar nbd serve --config "$dir/tailor.yaml" \
      --listen "127.0.0.1:$port" --admission "$mode" >"$dir/run-$mode-$round.log" 2>&1 &
    proxy=$!
    wait_port "run-$mode-$round" "$port" "$proxy"
    echo "run-admission: round $round, admission $mode (${ramp}+${runtime} s)" >&2
    PROXY_PORT=$port fio "$dir/tenants.fio" --output-format=json+ --output="$dir/run-$mode-$round.json" \
      >/dev/null 2>"$dir/run-$mode-$round.err" || {
        echo "run-admission: fio failed against the proxy:" >&2; cat "$dir/run-$mode-$round.err" >&2; exit 1; }
    sleep 1   # one more metrics export after the last request
    cp "$dir/metrics.prom" "$dir/run-$mode-$round.prom" 2>/dev/null || true
    stop_proxy
  done
done

python3 - "$dir" "$rounds" "$steady" "$runtime" "$capacity_iops" "$servers" "$delay_ms" "$cost_units" \
  "$steady_iops" "$burst_qd" "$burst_on" "$burst_off" "$segment_size" "$reserve" <<'PY'
import json, os, re, sys
(directory, rounds, steady, runtime, capacity, servers, delay, cost_units, steady_iops, burst_qd,
 burst_on, burst_off, segment_size, reserve) = sys.argv[1:]
rounds, steady = int(rounds), int(steady)
PCTS = (50, 99, 99.9, 99.99)
READ_COST = 117399   # a 4 KiB random read in admission's default cost model

def load(mode, rnd):
    text = open(os.path.join(directory, f"run-{mode}-{rnd}.json")).read()
    return {j["jobname"]: j for j in json.loads(text[text.index("{"):])["jobs"]}

def percentile(bins, p):
    """bins: {ns: count} (fio's lat histogram); the smallest bin with p % of the samples at or below."""
    need = sum(bins.values()) * p / 100.0
    seen = 0
    for ns in sorted(bins):
        seen += bins[ns]
        if seen >= need:
            return ns / 1e3
    return float("nan")

def merge(jobs):
    bins = {}
    for j in jobs:
        for ns, n in j["read"]["lat_ns"]["bins"].items():
            bins[int(ns)] = bins.get(int(ns), 0) + n
    return bins

def metrics(mode, rnd):
    """{(name, label value or ''): value} from the proxy's last metrics export."""
    out = {}
    path = os.path.join(directory, f"run-{mode}-{rnd}.prom")
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r'^(tailor_\w+)(?:\{\w+="([^"]*)"\})? (\S+)$', line.strip())
            if m:
                out[m[1], m[2] or ""] = float(m[3])
    return out

def fmt(x, digits=0):
    return "–" if x is None or x != x else f"{x:,.{digits}f}"

steady_names = [f"steady{i}" for i in range(1, steady + 1)]
modes = ("off", "on")
runs = {(m, r): load(m, r) for m in modes for r in range(1, rounds + 1)}
pooled = {m: merge([runs[m, r][n] for r in range(1, rounds + 1) for n in steady_names]) for m in modes}

print(f"Backend: {servers} threads × {delay} ms (nbdkit delay filter, one shared connection), measured "
      f"{int(capacity):,} IOPS; admission budget {float(cost_units):.3g} cost units/s, reserve {reserve}. "
      f"{steady} steady tenants × {steady_iops} IOPS (4 KiB random reads, QD 4) and one bursty tenant (QD "
      f"{burst_qd}, {burst_on} ms of I/O then {burst_off} ms idle), each its own 1 GiB export ({segment_size} "
      f"segments); one proxy event loop; {runtime} s per run, {rounds} round(s) of off, on.")
print()
print("Steady tenants' latency (fio lat: submission + completion), pooled over the steady tenants and rounds, µs:")
print()
print("| admission | samples | P50 | P99 | P99.9 | P99.99 | max |")
print("|---|--:|--:|--:|--:|--:|--:|")
for m in modes:
    b = pooled[m]
    print(f"| {m} | {sum(b.values()):,} | " + " | ".join(fmt(percentile(b, p)) for p in PCTS)
          + f" | {fmt(max(b) / 1e3)} |")
print()
change = " · ".join(f"P{p}: {(percentile(pooled['on'], p) / percentile(pooled['off'], p) - 1) * 100:+.0f} %"
                    for p in PCTS[1:])
print(f"Admission on vs off, steady tenants: {change}.")
print()
print("Each run: steady tenants pooled, the bursty tenant alone (µs; IOPS over the run):")
print()
print("| run | steady samples | steady P99 | P99.9 | P99.99 | steady IOPS | bursty IOPS | bursty P50 | P99 "
      "| P99.9 | health-check age max ms (since start) | loop dispatch delay max ms (since start) |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for r in range(1, rounds + 1):
    for m in modes:
        jobs = runs[m, r]
        b = merge([jobs[n] for n in steady_names])
        bb = merge([jobs["bursty"]])
        met = metrics(m, r)
        print(f"| {m} {r} | {sum(b.values()):,} | " + " | ".join(fmt(percentile(b, p)) for p in PCTS[1:])
              + f" | {fmt(sum(jobs[n]['read']['iops'] for n in steady_names))}"
              + f" | {fmt(jobs['bursty']['read']['iops'])} | "
              + " | ".join(fmt(percentile(bb, p)) for p in PCTS[:3])
              + f" | {fmt(met.get(('tailor_nbd_loop_health_check_max_age_seconds', '0'), float('nan')) * 1e3, 1)}"
              + f" | {fmt(met.get(('tailor_nbd_loop_io_dispatch_delay_max_seconds', '0'), float('nan')) * 1e3, 1)} |")
print()
print("Admission's counters (the proxy's metrics file at the end of each run with admission on); "
      "reserve and borrowing in 4 KiB reads' worth of cost:")
print()
print("| run | tenants | requests | arrived hot | waited | mean wait ms | max wait ms "
      "| admitted steady | reserve drawn | reserve lent to hot | borrowed (bursts) | refused |")
print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for r in range(1, rounds + 1):
    met = metrics("on", r)
    if not met:
        continue
    for label, names in (("steady", steady_names), ("bursty", ["bursty"])):
        get = lambda k: sum(met.get((f"tailor_nbd_admission_export_{k}", n), 0) for n in names)
        req, hot, queued = get("requests_total"), get("arrived_hot_total"), get("queued_total")
        wait = get("queue_wait_seconds_total")
        wmax = max(met.get(("tailor_nbd_admission_export_queue_wait_max_seconds", n), 0) for n in names)
        g = lambda k: met.get((f"tailor_nbd_admission_{k}", ""), float("nan"))
        common = (f" | {fmt(g('admitted_steady_total'))} | {fmt(g('drawn_reserve_cost_units_total') / READ_COST)}"
                  f" | {fmt(g('lent_reserve_cost_units_total') / READ_COST)}"
                  f" | {fmt(g('borrowed_cost_units_total') / READ_COST)} ({fmt(g('bursts_borrowing_total'))})"
                  f" | {fmt(g('refused_total'))} |") if label == "steady" else " | | | | | |"
        print(f"| on {r} | {label} | {fmt(req)} | {hot / req * 100 if req else 0:.1f} % | "
              f"{queued / req * 100 if req else 0:.1f} % | {fmt(wait / queued * 1e3 if queued else 0, 1)} | "
              f"{fmt(wmax * 1e3, 1)}" + common)
PY
