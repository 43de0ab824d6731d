#!/usr/bin/env bash
# Runs the fault matrix (issue 20) for every channel kind and fabric and regenerates the table in
# reactive-core/README.md between the fault-matrix markers.
#   scripts/fault-matrix.sh          the CI-sized run (200 messages a cell; also part of every mvn verify)
#   scripts/fault-matrix.sh --full   10x the messages per cell
# Offline Maven, no install; runs the FaultMatrix* suites of reactive-core (RC send/recv), rdma-eager
# (eager RDMA) and ud-reliable (reliable UD), each on the in-JVM fabric (virtual time) and the IP fabric
# on loopback. A cell that fails is written as FAILS with its error; the script then still rewrites the
# table (so the failure shows) and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=short
props=()
if [[ "${1:-}" == "--full" ]]; then
  mode=full
  props+=("-Dfaultmatrix.full=true")
fi
rm -rf reactive-core/target/fault-matrix rdma-eager/target/fault-matrix ud-reliable/target/fault-matrix
rc=0
mvn -B -o -q -pl rdma-eager,ud-reliable -am verify -DskipITs -Djacoco.skip=true -Dmaven.test.failure.ignore=true \
  -Dtest='FaultMatrix*' -Dsurefire.failIfNoSpecifiedTests=false "${props[@]}" || rc=$?
java scripts/FaultMatrixTable.java reactive-core/README.md "$mode" \
  reactive-core/target/fault-matrix/cells.tsv rdma-eager/target/fault-matrix/cells.tsv ud-reliable/target/fault-matrix/cells.tsv
if grep -qs "	FAILS" reactive-core/target/fault-matrix/cells.tsv rdma-eager/target/fault-matrix/cells.tsv ud-reliable/target/fault-matrix/cells.tsv; then
  echo "fault-matrix: some cells FAIL (see the table; known failures are skipped in the build, others fail it)" >&2
  grep -hs "	FAILS" */target/fault-matrix/cells.tsv | cut -f1-4 >&2
  [ "$rc" = 0 ] && rc=1
fi
exit "$rc"
