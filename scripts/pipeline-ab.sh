#!/usr/bin/env bash
# The main job's efficiency, A/B: alternating runs of `pipeline` from two samples jars in one session, as
# the README's "The main job from its first byte" table was measured.
#
#   scripts/pipeline-ab.sh [--rounds N] BASE_JAR NEW_JAR
#
# Per round and input (16 MiB, 64 MiB, the whole file): BASE with plain java, NEW with plain java, and NEW with
# an AppCDS archive made for it first (as ./rdmaflux runs it). Prints the efficiency each run reports and the
# load average. Reports go to a temporary directory.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROUNDS=3
if [ "${1:-}" = --rounds ]; then ROUNDS="${2:?--rounds needs a number}"; shift 2; fi
BASE="${1:?usage: $0 [--rounds N] BASE_JAR NEW_JAR}"
NEW="${2:?usage: $0 [--rounds N] BASE_JAR NEW_JAR}"
read -r -a FLAGS < "$ROOT/.mvn/jvm-flags"
REP="$(mktemp -d)"
JSA="$REP/new.jsa"
trap 'rm -rf "$REP"' EXIT
java -Xlog:cds*=off -XX:ArchiveClassesAtExit="$JSA" "${FLAGS[@]}" -jar "$NEW" pipeline --no-progress --limit-mib 4 --report-dir "$REP" >/dev/null
eff() { "$@" pipeline --no-progress $SIZE --report-dir "$REP" 2>&1 | awk '/efficiency/ {print $2}'; }
for r in $(seq 1 "$ROUNDS"); do
  for SIZE in "--limit-mib 16" "--limit-mib 64" "--all"; do
    b=$(eff java "${FLAGS[@]}" -jar "$BASE")
    n=$(eff java "${FLAGS[@]}" -jar "$NEW")
    c=$(eff java -Xlog:cds*=off -XX:SharedArchiveFile="$JSA" "${FLAGS[@]}" -jar "$NEW")
    echo "round $r $SIZE: base $b  new $n  new+cds $c  (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
