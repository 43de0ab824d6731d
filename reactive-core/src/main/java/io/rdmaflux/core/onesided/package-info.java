/**
 * One-sided RDMA on a connection (seed 002, Vishnu et al., MPI-2 one sided communication on multi-rail
 * InfiniBand): memory one side exposes ({@link io.rdmaflux.core.onesided.RemoteRegion}) and the other
 * puts into or gets from ({@link io.rdmaflux.core.onesided.OneSided}), striped over the connection's
 * rails, with access epochs ended by a synchronization message per subchannel
 * ({@link io.rdmaflux.core.onesided.Epoch}).
 */
@NullMarked
package io.rdmaflux.core.onesided;

import org.jspecify.annotations.NullMarked;
