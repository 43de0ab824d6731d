/**
 * The verbs SPI: an InfiniBand-verbs-shaped model of an RDMA NIC (names follow libibverbs and
 * DiSNI), implemented by the embedded software provider ({@code soft}) and, on hardware, by DiSNI.
 *
 * <p>Object graph: {@link io.rdmaflux.verbs.RdmaProvider} → {@link io.rdmaflux.verbs.Device} →
 * {@link io.rdmaflux.verbs.Port}; a {@link io.rdmaflux.verbs.ProtectionDomain} owns
 * {@link io.rdmaflux.verbs.MemoryRegion}s, {@link io.rdmaflux.verbs.QueuePair}s,
 * {@link io.rdmaflux.verbs.SharedReceiveQueue}s and {@link io.rdmaflux.verbs.AddressHandle}s;
 * work requests complete into {@link io.rdmaflux.verbs.CompletionQueue}s as
 * {@link io.rdmaflux.verbs.WorkCompletion}s whose {@link io.rdmaflux.verbs.WcStatus} is the verbs one.
 *
 * <p>Setup calls throw {@link io.rdmaflux.verbs.VerbsException} with a message naming the value and
 * the fix; data-path failures (bad rkey, out-of-bounds access, dead peer) are completions with an
 * error status, never a silent success.
 */
@NullMarked
package io.rdmaflux.verbs;

import org.jspecify.annotations.NullMarked;
