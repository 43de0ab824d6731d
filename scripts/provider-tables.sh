#!/usr/bin/env bash
# The OSU tables (latency p50, bw, msg-rate) on every provider and fabric the bench CLI runs on, in
# one run with the configurations interleaved round by round (so a machine getting slower or faster
# affects all alike), beside raw NIO over loopback TCP (scripts/NioReference.java) as the floor:
#
#   soft/mem   the soft provider's in-JVM fabric
#   soft/net   the soft provider's IP fabric on loopback (RC over TCP), both ends in one JVM
#   ucx/sm     the ucx provider (JUCX) over UCX shared memory, both ends in one JVM
#   ucx/tcp    the ucx provider over UCX's tcp transport on loopback
#   nio        raw blocking NIO SocketChannels, TCP_NODELAY (latency and bw only)
#
#   scripts/provider-tables.sh [--rounds N] [--out DIR] [--quick]
#
#   --rounds N   rounds per configuration (default 2); each cell is the median over the rounds
#   --out DIR    where the JSON and logs go (default: a new temporary directory, named at the end)
#   --quick      fewer iterations (-i 1000 for latency, -i 10 for bw/msg-rate): a smoke run
#
# Needs the samples jar (./rdmaflux builds it), python3, and for the ucx columns the system UCX
# library (apt-get install -y libucx0; without it those cells read "n/a"). Holds
# /tmp/rdmaflux-bench.lock while measuring, as every benchmark command of this project does.
# Prints Markdown tables; the last section gives each configuration's ratio to soft/mem.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROUNDS=2
OUT=""
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "provider-tables.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$ROUNDS" in ''|*[!0-9]*|0) echo "provider-tables.sh: --rounds must be a whole number >= 1 but it was '$ROUNDS'" >&2; exit 2 ;; esac
command -v python3 >/dev/null || { echo "provider-tables.sh: needs python3" >&2; exit 2; }
OUT="${OUT:-$(mktemp -d /tmp/rdmaflux-provider-tables.XXXXXX)}"
mkdir -p "$OUT"

"$ROOT/rdmaflux" --help >/dev/null   # builds the samples jar when stale
JAR="$ROOT/samples/target/rdmaflux-samples.jar"
# shellcheck disable=SC2046
BENCH=(java $(cat "$ROOT/.mvn/jvm-flags") -jar "$JAR" bench)

LAT_SIZES="8,64,4k,64k"
BW_SIZES="4k,64k,1m"
LAT_ITERS=()
BW_ITERS=()
NIO_LAT=10000
NIO_BW=100
if [ "$QUICK" = 1 ]; then
  LAT_ITERS=(-i 1000 -x 100 --jit-warmup 2000)
  BW_ITERS=(-i 10 -x 2 --jit-warmup 20)
  NIO_LAT=1000
  NIO_BW=10
fi
CONFIGS=("soft mem" "soft net" "ucx sm" "ucx tcp")

exec 9>/tmp/rdmaflux-bench.lock
flock -w 1800 9 || { echo "provider-tables.sh: /tmp/rdmaflux-bench.lock held for 30 min; another benchmark is running" >&2; exit 1; }
echo "== $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT" >&2

for round in $(seq 1 "$ROUNDS"); do
  for cfg in "${CONFIGS[@]}"; do
    read -r provider fabric <<<"$cfg"
    fab=(--provider "$provider" --fabric "$fabric")
    tag="$provider-$fabric"
    for t in latency bw msg-rate; do
      case "$t" in
        latency) args=(--sizes "$LAT_SIZES" "${LAT_ITERS[@]}") ;;
        bw) args=(--sizes "$BW_SIZES" "${BW_ITERS[@]}") ;;
        msg-rate) args=(--sizes 32 "${BW_ITERS[@]}") ;;
      esac
      echo "== round $round $tag $t" >&2
      if ! "${BENCH[@]}" "$t" "${fab[@]}" "${args[@]}" --json "$OUT/$tag-$t-$round.json" >"$OUT/$tag-$t-$round.log" 2>&1; then
        echo "   failed (see $OUT/$tag-$t-$round.log): $(grep -v WARN "$OUT/$tag-$t-$round.log" | tail -1)" >&2
        rm -f "$OUT/$tag-$t-$round.json"
      fi
    done
  done
  echo "== round $round nio" >&2
  java "$ROOT/scripts/NioReference.java" latency "$LAT_SIZES" "$NIO_LAT" >"$OUT/nio-latency-$round.log" 2>&1 || true
  java "$ROOT/scripts/NioReference.java" bw "$BW_SIZES" "$NIO_BW" 64 >"$OUT/nio-bw-$round.log" 2>&1 || true
done
echo "== $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
configs = ["soft-mem", "soft-net", "ucx-sm", "ucx-tcp"]
def size_name(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"
def bench(cfg, test, key):
    cells = {}
    for r in range(1, rounds + 1):
        p = os.path.join(out, f"{cfg}-{test}-{r}.json")
        if not os.path.exists(p):
            continue
        for row in json.load(open(p))["rows"]:
            cells.setdefault(row["sizeBytes"], []).append(row[key])
    return {k: statistics.median(v) for k, v in cells.items()}
def nio(test, col):
    cells = {}
    for r in range(1, rounds + 1):
        p = os.path.join(out, f"nio-{test}-{r}.log")
        if not os.path.exists(p):
            continue
        for line in open(p):
            f = line.split()
            if f and f[0].isdigit():
                cells.setdefault(int(f[0]), []).append(float(f[col]))
    return {k: statistics.median(v) for k, v in cells.items()}
tables = [
    ("latency, p50 one way (µs; lower is better)", "latency", "p50Us", nio("latency", 2), False),
    ("bw (MB/s; higher is better)", "bw", "bandwidthMBps", nio("bw", 1), True),
    ("msg-rate, 32 B (messages/s; higher is better)", "msg-rate", "messagesPerSec", {}, True),
]
for title, test, key, nio_cells, higher in tables:
    cols = {c: bench(c, test, key) for c in configs}
    sizes = sorted(set().union(*[set(v) for v in cols.values()], set(nio_cells)))
    heads = configs + (["nio"] if nio_cells else [])
    print(f"\n### {title}\n")
    print("| size | " + " | ".join(heads) + " | " + " | ".join(f"{c} / soft-mem" for c in configs[1:]) + " |")
    print("|---" * (1 + len(heads) + len(configs) - 1) + "|")
    for s in sizes:
        vals = [cols[c].get(s) for c in configs] + ([nio_cells.get(s)] if nio_cells else [])
        fmt = lambda v: "n/a" if v is None else (f"{v:,.0f}" if v >= 1000 else f"{v:.2f}")
        base = cols["soft-mem"].get(s)
        ratios = [("n/a" if base in (None, 0) or cols[c].get(s) is None else f"{cols[c][s] / base:.2f}×") for c in configs[1:]]
        print(f"| {size_name(s)} | " + " | ".join(fmt(v) for v in vals) + " | " + " | ".join(ratios) + " |")
print(f"\nMedians over {rounds} round(s); raw results in {out}")
EOF
