#!/usr/bin/env bash
# A/B comparison of two benchmark jars in one run, rounds interleaved (base, new, base, new, ...),
# so that a machine getting slower or faster during the run affects both sides alike.
#
#   scripts/bench-compare.sh [options] BASE_JAR NEW_JAR [JMH_REGEX] [JMH args...]
#   scripts/bench-compare.sh [options] --build-base REV NEW_JAR [JMH_REGEX] [JMH args...]
#
#   JMH_REGEX     benchmarks to run; default 'core\.' (benchmarks/src/main/java/io/rdmaflux/benchmarks/core)
#   JMH args      passed to every run after the defaults -f 1 -wi 2 -w 1 -i 3 -r 1; an option given here
#                 replaces its default (e.g. -i 5), -p narrows params (-p threading=SHARED -p await=spin)
#   --rounds N    runs per side, default 2
#   --build-base REV
#                 build the base jar from commit REV: a git worktree at /tmp/rdmaflux-base-<sha>
#                 (reused if it exists; removed with 'git worktree remove /tmp/rdmaflux-base-<sha>'),
#                 'mvn -B -q -o package -DskipTests -pl benchmarks -am' there (package, never install:
#                 ~/.m2 is shared), then uses its benchmarks/target/benchmarks.jar
#   --rebuild     with --build-base: build again even if the jar is there
#   --no-lock     do not hold /tmp/rdmaflux-bench.lock while measuring (held by default, as every
#                 benchmark command of this project is: benchmarks share the machine's 2 cores)
#
# The JVM flags of .mvn/jvm-flags go to the JMH host JVM, and JMH's forks inherit them (JMH passes the
# host's JVM options to a fork unless -jvmArgs is given); the benchmarks' @Fork(jvmArgsAppend) adds the
# same list again. Each run writes -rf json -rff to a temporary directory, kept and named at the end
# with the JMH logs. Prints, per benchmark and parameter set, the mean score of each side over its
# rounds, the ratio new/base, the unit, and the largest deviation of a single round from its side's
# mean (the noise to read the ratio against); the last line names the worst ratio (lowest for
# throughput, highest for time modes). Needs python3.
# Example: scripts/bench-compare.sh --build-base HEAD~1 benchmarks/target/benchmarks.jar 'core\.MessageRate' -p threading=SHARED
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROUNDS=2
BUILD_REV=""
REBUILD=0
LOCK=1
LOCK_FILE=/tmp/rdmaflux-bench.lock
LOCK_WAIT=1800
DEFAULT_REGEX='core\.'

usage() {
  sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//' >&2
  echo "(see the header of $0 for the options)" >&2
  exit 2
}
log() { echo "[bench-compare] $*" >&2; }
die() { log "$*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="${2:?}"; shift 2 ;;
    --build-base) BUILD_REV="${2:?}"; shift 2 ;;
    --rebuild) REBUILD=1; shift ;;
    --no-lock) LOCK=0; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) log "unknown option $1"; usage ;;
    *) break ;;
  esac
done
case "$ROUNDS" in ''|*[!0-9]*|0) die "--rounds needs a positive integer" ;; esac
command -v python3 >/dev/null || die "python3 is needed to read JMH's JSON results"
command -v java >/dev/null || die "java is not on PATH"

if [ -n "$BUILD_REV" ]; then
  [ $# -ge 1 ] || usage
  SHA="$(git -C "$ROOT" rev-parse --verify --quiet "${BUILD_REV}^{commit}")" || die "not a commit: $BUILD_REV"
  WT="/tmp/rdmaflux-base-${SHA:0:12}"
  if [ -e "$WT" ]; then
    [ "$(git -C "$WT" rev-parse HEAD 2>/dev/null)" = "$SHA" ] || die "$WT exists but is not a worktree at $SHA; remove it"
    log "reusing worktree $WT ($BUILD_REV = ${SHA:0:12})"
  else
    log "git worktree add $WT ($BUILD_REV = ${SHA:0:12})"
    git -C "$ROOT" worktree add --detach --quiet "$WT" "$SHA"
  fi
  BASE_JAR="$WT/benchmarks/target/benchmarks.jar"
  if [ "$REBUILD" = 1 ] || [ ! -f "$BASE_JAR" ]; then
    log "building $BASE_JAR (mvn -B -q -o package -DskipTests -pl benchmarks -am)"
    (cd "$WT" && mvn -B -q -o package -DskipTests -pl benchmarks -am) || die "building the base at $BUILD_REV failed"
  else
    log "reusing $BASE_JAR (--rebuild to build again)"
  fi
else
  [ $# -ge 2 ] || usage
  BASE_JAR="$1"; shift
fi
NEW_JAR="$1"; shift
[ -f "$BASE_JAR" ] || die "no such jar: $BASE_JAR"
[ -f "$NEW_JAR" ] || die "no such jar: $NEW_JAR"
BASE_JAR="$(cd "$(dirname "$BASE_JAR")" && pwd)/$(basename "$BASE_JAR")"
NEW_JAR="$(cd "$(dirname "$NEW_JAR")" && pwd)/$(basename "$NEW_JAR")"

REGEX="$DEFAULT_REGEX"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  REGEX="$1"; shift
fi
EXTRA=("$@")

# defaults, each dropped when the extra arguments give the same option (JMH rejects an option given twice)
ARGS=()
for pair in "-f 1" "-wi 2" "-w 1" "-i 3" "-r 1"; do
  opt="${pair%% *}"
  given=0
  for a in "${EXTRA[@]+"${EXTRA[@]}"}"; do [ "$a" = "$opt" ] && given=1; done
  [ "$given" = 1 ] || ARGS+=("$opt" "${pair#* }")
done
for a in "${EXTRA[@]+"${EXTRA[@]}"}"; do
  case "$a" in -rf|-rff) die "$a is set by this script (JSON results per run)" ;; esac
done

read -r -a JVM_FLAGS < "$ROOT/.mvn/jvm-flags"
OUT="$(mktemp -d /tmp/bench-compare.XXXXXX)"
log "base: $BASE_JAR"
log "new:  $NEW_JAR"
log "runs: java \$(cat .mvn/jvm-flags) -jar JAR '$REGEX' ${ARGS[*]} ${EXTRA[*]+${EXTRA[*]}} -rf json -rff $OUT/<side>-<round>.json"

if [ "$LOCK" = 1 ] && command -v flock >/dev/null; then
  exec 9>"$LOCK_FILE"
  if ! flock -n 9; then
    log "waiting for $LOCK_FILE (another benchmark is running; --no-lock to skip)"
    flock -w "$LOCK_WAIT" 9 || die "$LOCK_FILE stayed taken for ${LOCK_WAIT}s"
  fi
fi

run() { # side round jar
  local side="$1" round="$2" jar="$3" t0 t1
  t0=$(date +%s)
  if ! java "${JVM_FLAGS[@]}" -jar "$jar" "$REGEX" "${ARGS[@]}" "${EXTRA[@]+"${EXTRA[@]}"}" \
      -rf json -rff "$OUT/$side-$round.json" > "$OUT/$side-$round.log" 2>&1; then
    tail -n 30 "$OUT/$side-$round.log" >&2
    die "the $side run of round $round failed; log: $OUT/$side-$round.log"
  fi
  [ -s "$OUT/$side-$round.json" ] || die "the $side run of round $round wrote no results (does '$REGEX' match a benchmark in $jar?); log: $OUT/$side-$round.log"
  t1=$(date +%s)
  log "round $round/$ROUNDS $side: $((t1 - t0)) s"
}

for r in $(seq 1 "$ROUNDS"); do
  run base "$r" "$BASE_JAR"
  run new "$r" "$NEW_JAR"
done
[ "$LOCK" = 1 ] && exec 9>&- || true

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, sys, os
out, rounds = sys.argv[1], int(sys.argv[2])
PREFIX = 'io.rdmaflux.benchmarks.'

def load(side):
    """{(bench, params, metric): (mode, unit, [score per round])}"""
    res = {}
    for r in range(1, rounds + 1):
        for b in json.load(open(os.path.join(out, '%s-%d.json' % (side, r)))):
            name = b['benchmark'][len(PREFIX):] if b['benchmark'].startswith(PREFIX) else b['benchmark']
            params = tuple(sorted((b.get('params') or {}).items()))
            metrics = [('', b['primaryMetric'])] + sorted((b.get('secondaryMetrics') or {}).items())
            for metric, m in metrics:
                key = (name, params, metric)
                res.setdefault(key, (b['mode'], m['scoreUnit'], []))[2].append(float(m['score']))
    return res

base, new = load('base'), load('new')
mean = lambda xs: sum(xs) / len(xs)
def spread(xs):
    m = mean(xs)
    return max(abs(x - m) for x in xs) / abs(m) if m else 0.0
def fmt(x):
    if x is None: return '-'
    a = abs(x)
    return '{:,.0f}'.format(x) if a >= 1000 else '{:.4g}'.format(x)

# a parameter with one value in every row of a benchmark goes under the table, not in each row
values = {}
for name, params, metric in set(base) | set(new):
    for k, v in params:
        values.setdefault((name, k), set()).add(v)
fixed = {}
for (name, k), vs in sorted(values.items()):
    if len(vs) == 1:
        fixed.setdefault(name, []).append('%s=%s' % (k, next(iter(vs))))
def shown(name, params):
    return ', '.join('%s=%s' % (k, v) for k, v in params if len(values[(name, k)]) > 1)

rows, worst = [], None
def order(key):
    name, params, metric = key
    return (name, [(k, (0, int(v), '') if v.isdigit() else (1, 0, v)) for k, v in params], metric)
for key in sorted(set(base) | set(new), key=order):
    name, allparams, metric = key
    params = shown(name, allparams)
    b, n = base.get(key), new.get(key)
    mode, unit = (b or n)[0], (b or n)[1]
    bm = mean(b[2]) if b else None
    nm = mean(n[2]) if n else None
    ratio = nm / bm if (bm and nm is not None) else None
    noise = max(spread(b[2]) if b else 0, spread(n[2]) if n else 0)
    label = name + (':' + metric if metric else '')
    rows.append((label, params, mode, fmt(bm), fmt(nm), '-' if ratio is None else '%.3f' % ratio, unit,
                 '%.1f%%' % (100 * noise)))
    if ratio is not None and ratio > 0 and not metric:
        goodness = ratio if mode == 'thrpt' else 1 / ratio   # time modes: lower is better
        if worst is None or goodness < worst[0]:
            worst = (goodness, ratio, label, ', '.join('%s=%s' % kv for kv in allparams), mode, noise)

head = ('benchmark', 'params', 'mode', 'base', 'new', 'new/base', 'unit', 'noise')
w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
right = {3, 4, 5, 7}
line = lambda r: '  '.join(str(c).rjust(w[i]) if i in right else str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip()
print(line(head))
print(line(tuple('-' * x for x in w)))
for r in rows:
    print(line(r))
print()
for name in sorted(fixed):
    print('%s, every row: %s' % (name, ', '.join(fixed[name])))
print('base and new: mean of %d round(s) each, run alternately; noise: the largest deviation of one round '
      'from its side\'s mean; %s rows are secondary metrics (not ranked)' % (rounds, "'bench:metric'"))
if worst is None:
    print('worst: none (no benchmark measured on both sides)')
else:
    goodness, ratio, label, params, mode, noise = worst
    better = 'higher' if mode == 'thrpt' else 'lower'
    change = (1 - goodness) * 100
    verdict = ('%.1f %% worse' % change) if change > 0 else ('%.1f %% better' % -change)
    within = ', within the noise' if abs(1 - goodness) <= noise else ''
    print('worst: %s [%s] new/base = %.3f (%s, %s is better): %s%s'
          % (label, params or 'no params', ratio, mode, better, verdict, within))
PY
log "JSON results and JMH logs: $OUT"
