/**
 * The embedded software RDMA provider ({@code soft}): a software NIC that implements the verbs SPI
 * in Java.
 *
 * <h2>Structure</h2>
 * <ul>
 *   <li>{@link io.rdmaflux.verbs.soft.SoftProvider} owns {@link io.rdmaflux.verbs.soft.SoftDevice}s
 *       (one software NIC each) and runs their agents, either on one named thread
 *       ({@code rdmaflux-soft-<name>}, {@link io.rdmaflux.verbs.ThreadingMode#DEDICATED}) or when the
 *       caller invokes {@link io.rdmaflux.verbs.soft.SoftProvider#progress(long)}
 *       ({@link io.rdmaflux.verbs.ThreadingMode#INVOKER}).</li>
 *   <li>All QP semantics live in the NIC: the state machine, requester (transmit, retry, RNR retry,
 *       completion, flush) and responder (PSN check, receive consumption, rkey/bounds/access checks,
 *       data placement). See {@link io.rdmaflux.verbs.soft.SoftQueuePair}.</li>
 *   <li>How frames travel between NICs is the pluggable {@link io.rdmaflux.verbs.soft.FrameTransport}
 *       of a {@link io.rdmaflux.verbs.soft.SoftFabric}: {@link io.rdmaflux.verbs.soft.MemTransport}
 *       ({@code mem://}, in-JVM) here; an IP transport ({@code net://}) plugs in the same way.</li>
 *   <li>The rail model of every port ({@link io.rdmaflux.verbs.soft.RailConfig}: bandwidth, latency,
 *       MTU, {@link io.rdmaflux.verbs.soft.LossGenerator}, UD faults, and RC faults: loss,
 *       duplication, reordering, off by default) is applied by the NIC on egress, driven by the
 *       provider's injected clock, so the same fabric runs in real or virtual time. Under RC faults
 *       the QPs recover by go-back-N, as an RC NIC on a lossy link does.</li>
 * </ul>
 *
 * <h2>Threading model</h2>
 * Each device's engine state (requester and responder state of its QPs, its CQs' producer side) is
 * touched only by the thread that runs the provider's agent. Application threads only post into
 * rings (send, receive, SRQ) and poll CQs; both are single-producer/single-consumer hand-offs.
 * NICs talk to each other only through frames. Posting takes a per-queue spin lock (one CAS)
 * unless the provider was built with a thread domain
 * ({@link io.rdmaflux.verbs.soft.SoftProvider.Builder#threadDomain(boolean)}).
 *
 * <h2>Hot path</h2>
 * No allocation per work request: send and receive rings and CQs are preallocated parallel arrays,
 * frames come from a per-NIC pool, frames cross NICs through an intrusive lock-free inbox in batches
 * (one CAS per engine pass per destination) and go back to their pool the same way, and ACKs are
 * cumulative (one per engine pass per QP). An unshaped rail (bandwidth {@link Long#MAX_VALUE},
 * latency 0) computes no shaping at all.
 *
 * <h2>Testing support</h2>
 * {@link io.rdmaflux.verbs.soft.SoftResources} counts live providers, regions, allocated bytes, QPs
 * and CQs JVM-wide; the verbs test-jar adds {@code io.rdmaflux.verbs.testing.SoftTwoNodes} (two
 * INVOKER providers on one fabric and one {@link io.rdmaflux.verbs.VirtualClock}),
 * {@code VerbsLeakCheck} / {@code NoLeaksExtension} (leak and stray-thread assertions) and the
 * provider TCK ({@code io.rdmaflux.verbs.tck.ProviderTck}, {@code RailModelTck}).
 */
@NullMarked
package io.rdmaflux.verbs.soft;

import org.jspecify.annotations.NullMarked;
