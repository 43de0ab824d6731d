/**
 * DR-style reliability over any lossy datagram path (seed 003 &sect;3.1 and &sect;4.2, after Open MPI's DR
 * PML): PSN per peer and direction, the VFRAG as the unit of acknowledgement, ACKs that carry a cumulative
 * PSN and a selective bitmap, coalesced ACKs, a local-completion timer and a retransmission timer with an RTO
 * from measured RTT, selective retransmission, duplicate drop, reordering by PSN/ESN, CRC32C over header and
 * payload, and failover to another rail after repeated retries.
 *
 * <p>The protocol engine is {@link io.rdmaflux.ud.dr.DrEndpoint} (one peer, driven by {@code doWork(nowNs)}, no
 * threads, no clock of its own); {@link io.rdmaflux.ud.dr.Dr#link} puts it behind a Reactor {@code Flux}/{@code Mono}
 * pair over any datagram sink and source.
 */
@NullMarked
package io.rdmaflux.ud.dr;

import org.jspecify.annotations.NullMarked;
