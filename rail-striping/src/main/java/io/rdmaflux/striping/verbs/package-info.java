/**
 * Rails as verbs RC queue pairs: stripes become RDMA WRITE work requests straight from the
 * registered source buffer into the target buffer (seed 000 §4.3: striping only for RDMA, no
 * reassembly copy at the receiver; seed 002 §3: one-sided put over rails).
 */
@NullMarked
package io.rdmaflux.striping.verbs;

import org.jspecify.annotations.NullMarked;
