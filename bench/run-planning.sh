#!/usr/bin/env bash
# Measures HEART's planning time per round on synthetic clusters (paper-100/400/1000, large-10000),
# HEART's defaults against the per-replica min-cost-flow baseline without the slow-link filter, and
# prints a Markdown table (paste it into a README) on standard output. Progress goes to standard
# error, JMH's full log to bench/target/planning.log.
#
# Usage: bench/run-planning.sh [--rebuild] [PlanningReport options]
#   --rebuild                 build bench/target/benchmarks.jar even if it looks up to date
#   --shapes a,b              subset of paper-100,paper-400,paper-1000,large-10000 (default: all)
#   --warm-state              also measure a round that carries the state of a previous round
#   --warmup-iterations N     default 10     --iterations N        default 5
#   --iteration-seconds N     default 2      --forks N             default 1
#   --log FILE                default bench/target/planning.log
# Defaults take about 5 minutes on 2 cores; the 20 s warm-up per run is what C2 needs there to
# compile the planner. The JDK is found like ./tailor does (JDK >= 21).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rebuild=false
args=()
for arg in "$@"; do
  case "$arg" in
    --rebuild) rebuild=true ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$arg") ;;
  esac
done

# shellcheck source=../scripts/find-jdk.sh
. scripts/find-jdk.sh
tailor_find_jdk

jar=bench/target/benchmarks.jar
stale() {   # true when a source or POM of the modules in the jar is newer than the jar
  [ ! -f "$jar" ] && return 0
  [ -n "$(find pom.xml testkit heart sim bench \( -name '*.java' -o -name pom.xml \) -not -path '*/target/*' \
      -newer "$jar" -print -quit)" ]
}
if $rebuild || stale; then
  echo "run-planning: building $jar with $JAVA_HOME" >&2
  ./mvnw -q -B -ntp -pl bench -am package -DskipTests >&2
fi

echo "run-planning: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- heart bench 2>/dev/null || echo ' (with uncommitted changes)'), JDK $JAVA_HOME" >&2
exec "$JAVA_HOME/bin/java" -Xmx512m -cp "$jar" dev.tailor.bench.PlanningReport ${args[@]+"${args[@]}"}
