/**
 * Virtual channels over several rails: the communication scheduler, multiplexing and striping
 * policies, the completion filter and rail failure handling.
 *
 * <p>Sources: Liu, Vishnu, Panda, <i>Building Multirail InfiniBand Clusters</i> (SC'04, seed 000)
 * §4 (virtual subchannels, communication scheduler, scheduling policies, adaptive striping eq. 1–4,
 * completion filter) and §5 (PSN/ESN, one finish message per subchannel); Brunet et al.,
 * NewMadeleine multirail strategy (seed 004) §II–III (sampled transfer-time model, split by
 * dichotomy, predicted time until idle); Vishnu et al., MPI-2 one sided on multi-rail (seed 002)
 * §3 (switchover threshold, load balanced fragmentation, one synchronization message per
 * subchannel).
 *
 * <p>Entry points: {@link io.rdmaflux.striping.Rails} (Reactor operators),
 * {@link io.rdmaflux.striping.CommunicationScheduler} (the transport-independent engine),
 * {@link io.rdmaflux.striping.MultiplexingPolicies} and {@link io.rdmaflux.striping.StripingPolicies}.
 */
@NullMarked
package io.rdmaflux.striping;

import org.jspecify.annotations.NullMarked;
