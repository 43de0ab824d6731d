/**
 * The soft provider's IP fabric ({@code net://<ip>:<port>}): a {@link io.rdmaflux.verbs.soft.FrameTransport}
 * that carries the soft NIC's frames as UDP datagrams (UD, as RoCEv2 carries the IB transport over
 * UDP) and over TCP streams (RC, as iWARP carries RDMA over TCP), plus an {@code rdma_cm}-like
 * {@link io.rdmaflux.verbs.soft.net.NetConnectionManager} over TCP.
 *
 * <p>Everything here is non-blocking NIO driven by the owning provider's engine (its DEDICATED
 * thread, or {@code progress(nowNs)} in INVOKER mode): the package starts no threads.
 */
@NullMarked
package io.rdmaflux.verbs.soft.net;

import org.jspecify.annotations.NullMarked;
