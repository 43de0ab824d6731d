#!/bin/bash
# Issue 19, seed 004's offload of chunk submission to idle cores: the in-JVM soft NICs' engines on one thread
# (--nic-threads one) vs a thread per NIC (--nic-threads per-device), two rails over two devices per host, through the
# reactive API (samples bench); ROUNDS interleaved rounds (the order flips each round), `uptime` before each run.
# Build first:  mvn -o -q -pl samples -am package -DskipTests
# Usage: scripts/nic-offload.sh [ROUNDS] > out.txt     (README "Offloading NIC work to idle cores")
set -u
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
J="java $(cat .mvn/jvm-flags) -jar ${JAR:-samples/target/rdmaflux-samples.jar} bench"
run() { echo "== round $1 $2 | $(uptime)"; shift 2; timeout 180 "$@" 2>&1 | grep -E '^ *[0-9]|rror' ; }
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="per-device one"; else order="one per-device"; fi
  for t in $order; do run $round "bw 64k,1m,4m $t" $J bw --devices 2 --rails 2 --nic-threads $t --sizes 64k,1m,4m -i 300 -x 20; done
  for t in $order; do run $round "msg-rate 32 $t" $J msg-rate --devices 2 --rails 2 --nic-threads $t --sizes 32 -i 5000 -x 100 --jit-warmup 1000; done
  for t in $order; do run $round "latency 64 $t" $J latency --devices 2 --rails 2 --nic-threads $t --sizes 64 -i 30000 -x 1000 --jit-warmup 20000; done
done
echo DONE
