#!/bin/bash
# Issue 14, "DR acknowledgement over RC too": the cost of ChannelKind.RC_DR (DR's CRC32C + acknowledgement on an RC
# queue pair) against plain RC send/recv through the reactive API (samples bench), same fabric, ROUNDS interleaved
# rounds (the order flips each round), `uptime` before each run. Build first:
#   mvn -o -q -pl samples -am package -DskipTests
# Usage: scripts/rcdr-figures.sh [ROUNDS] [FABRICS] > out.txt   (FABRICS default "mem net"; ud-reliable/README.md "DR over RC")
set -u
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
FABRICS=${2:-mem net}
J="java $(cat .mvn/jvm-flags) -jar ${JAR:-samples/target/rdmaflux-samples.jar} bench"
run() { echo "== round $1 $2 | $(uptime)"; shift 2; timeout 180 "$@" 2>&1 | grep -E '^ *[0-9]|rror' ; }
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="rc-dr rc"; else order="rc rc-dr"; fi
  for fabric in $FABRICS; do
    for t in $order; do run $round "$fabric msg-rate 32 $t" $J msg-rate --fabric $fabric --transport $t --sizes 32 -i 5000 -x 100 --jit-warmup 1000; done
    for t in $order; do run $round "$fabric latency 64 $t" $J latency --fabric $fabric --transport $t --sizes 64 -i 30000 -x 1000 --jit-warmup 20000; done
    for t in $order; do run $round "$fabric bw 64k,1m $t" $J bw --fabric $fabric --transport $t --sizes 64k,1m -i 200 -x 20; done
  done
done
echo DONE
