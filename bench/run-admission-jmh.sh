#!/usr/bin/env bash
# Measures the cost of one admission decision: every benchmark of AdmissionBenchmark
# in one JMH run — AdmissionController.acquire next to Bucket4j's tryConsume and Guava's
# RateLimiter.tryAcquire, on one thread and on two threads sharing one limiter — since the target compares
# them "in the same JMH run". JMH's table goes to standard output, progress to standard error, the full
# log and the JSON result to bench/target/admission-<time>.{log,json}.
#
# Usage: bench/run-admission-jmh.sh [--rebuild] [--forks N] [--warmup-iterations N] [--iterations N]
#                               [--lock FILE|none]
#   --rebuild                 build bench/target/benchmarks.jar even if it looks up to date
#   --forks N                 JVM forks (default 3); each runs every benchmark
#   --warmup-iterations N     default 5 (2 s each)     --iterations N     default 5 (2 s each)
#   --lock FILE               hold flock(1) on FILE while JMH runs, so that two JMH runs on one machine
#                             do not measure each other (default /tmp/jmh.lock; none: no lock)
# Defaults take about 8 minutes on 2 cores. The two-thread figures need both cores: on a machine shared
# with other work they vary from run to run by more than the differences measured, so compare runs made
# one after the other, several times. The JDK is found like ./tailor does (JDK >= 21).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rebuild=false forks=3 warmup=5 iterations=5 lock=/tmp/jmh.lock
value() {   # option, its value (or nothing): the value, or exit 2 naming the option
  [ $# -ge 2 ] && [ -n "$2" ] || { echo "run-admission-jmh: $1: missing value (try --help)" >&2; exit 2; }
  printf '%s' "$2"
}
count() {   # option, value, minimum: exit 2 unless the value is a whole number >= minimum
  case "$2" in
    ''|*[!0-9]*) echo "run-admission-jmh: $1: \"$2\" (expected: a whole number >= $3)" >&2; exit 2 ;;
  esac
  [ "$2" -ge "$3" ] || { echo "run-admission-jmh: $1: $2 (expected: a whole number >= $3)" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
  case "$1" in
    --rebuild) rebuild=true; shift ;;
    --forks) forks=$(value "$@") || exit 2; count --forks "$forks" 1; shift 2 ;;
    --warmup-iterations) warmup=$(value "$@") || exit 2; count --warmup-iterations "$warmup" 0; shift 2 ;;
    --iterations) iterations=$(value "$@") || exit 2; count --iterations "$iterations" 1; shift 2 ;;
    --lock) lock=$(value "$@") || exit 2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-admission-jmh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

# shellcheck source=../scripts/find-jdk.sh
. scripts/find-jdk.sh
tailor_find_jdk

jar=bench/target/benchmarks.jar
stale() {   # true when a source or POM of the modules in the jar is newer than the jar
  [ ! -f "$jar" ] && return 0
  [ -n "$(find pom.xml testkit heart sim admission bench \( -name '*.java' -o -name pom.xml \) \
      -not -path '*/target/*' -newer "$jar" -print -quit)" ]
}
if $rebuild || stale; then
  echo "run-admission-jmh: building $jar with $JAVA_HOME" >&2
  ./mvnw -q -B -ntp -pl bench -am package -DskipTests >&2
fi

stamp=$(date +%Y%m%d-%H%M%S)
log=bench/target/admission-$stamp.log
json=bench/target/admission-$stamp.json
command=("$JAVA_HOME/bin/java" -jar "$jar" AdmissionBenchmark -f "$forks" -wi "$warmup" -i "$iterations"
  -rf json -rff "$json")
echo "run-admission-jmh: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- \
admission bench 2>/dev/null || echo ' (with uncommitted changes)'), JDK $JAVA_HOME" >&2
echo "run-admission-jmh: ${command[*]}" >&2
if [ "$lock" != none ] && command -v flock >/dev/null 2>&1; then
  echo "run-admission-jmh: waiting for $lock (another JMH run may hold it)" >&2
  flock "$lock" "${command[@]}" > "$log" 2>&1
else
  "${command[@]}" > "$log" 2>&1
fi
echo "run-admission-jmh: log $log, result $json" >&2
sed -n '/^Benchmark /,/^$/p' "$log"
