#!/bin/bash
# Issue 14 figures for ud-reliable/README.md: reliable UD vs RC send/recv through the reactive API (samples bench),
# same fabric, and reliable UD 4 KiB over the net fabric vs raw DatagramChannel (scripts/UdpReference.java);
# ROUNDS interleaved rounds (the order flips each round), `uptime` before each run. Build first:
#   mvn -o -q -pl samples -am package -DskipTests
# Usage: scripts/ud-figures.sh [ROUNDS] > out.txt   (medians: see ud-reliable/README.md "Measured")
set -u
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
J="java $(cat .mvn/jvm-flags) -jar samples/target/rdmaflux-samples.jar bench"
run() { echo "== round $1 $2 | $(uptime)"; shift 2; timeout 180 "$@" 2>&1 | grep -E '^[0-9]|resent|rror' ; }
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="ud rc"; else order="rc ud"; fi
  for fabric in mem net; do
    for t in $order; do run $round "$fabric msg-rate 32 $t" $J msg-rate --fabric $fabric --transport $t --sizes 32 -i 5000 -x 100 --jit-warmup 1000; done
    for t in $order; do run $round "$fabric latency 64 $t" $J latency --fabric $fabric --transport $t --sizes 64 -i 30000 -x 1000 --jit-warmup 20000; done
  done
  for t in $order; do
    if [ $t = ud ]; then run $round "net msg-rate 4k ud" $J msg-rate --fabric net --transport ud --sizes 4k -i 2000 -x 100 --jit-warmup 500
    else run $round "udp-reference msg-rate 4k" java scripts/UdpReference.java 4096 2000 64; fi
  done
done
echo DONE
