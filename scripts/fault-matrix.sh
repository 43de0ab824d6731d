#!/usr/bin/env bash
# Runs the fault matrix (issue 20) for every channel kind and fabric and regenerates the table in
# reactive-core/README.md between the fault-matrix markers.
#   scripts/fault-matrix.sh          the CI-sized run (200 messages a cell; also part of every mvn verify)
#   scripts/fault-matrix.sh --full   10x the messages per cell
# Offline Maven, no install; runs the FaultMatrix* suites of reactive-core (RC send/recv) and
# rdma-eager (eager RDMA), each on the in-JVM fabric (virtual time) and the IP fabric on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=short
props=()
if [[ "${1:-}" == "--full" ]]; then
  mode=full
  props+=("-Dfaultmatrix.full=true")
fi
rm -rf reactive-core/target/fault-matrix rdma-eager/target/fault-matrix
mvn -B -o -q -pl rdma-eager -am verify -DskipITs -Djacoco.skip=true \
  -Dtest='FaultMatrix*' -Dsurefire.failIfNoSpecifiedTests=false "${props[@]}"
java scripts/FaultMatrixTable.java reactive-core/README.md "$mode" \
  reactive-core/target/fault-matrix/cells.tsv rdma-eager/target/fault-matrix/cells.tsv
