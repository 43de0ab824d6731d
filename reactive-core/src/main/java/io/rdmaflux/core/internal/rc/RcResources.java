package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.internal.buffer.SlotPool;
import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import org.jspecify.annotations.Nullable;

/**
 * The verbs resources an {@link RcSubchannel} is built on, acquired together: its send buffers (its own
 * registered pool, or a share of the rail's shared send region), its receive buffers (its own pool, or
 * none: the QP then consumes the rail's shared receive queue), its CQ (its own, or the device's shared
 * one) and its RC queue pair, in INIT. If one cannot be had, those acquired already are released, in
 * reverse order, and the error is rethrown; on success the channel owns them all (except a shared CQ).
 *
 * <p><b>Concurrency:</b> built on the constructing thread; the fields are final.
 */
final class RcResources {
    final SlotPool sendPool;
    /** The channel's own receive buffers, or null: it uses the rail's SRQ. */
    final @Nullable SlotPool receivePool;
    final CompletionQueue cq;
    final QueuePair qp;

    /**
     * @param receiveBuffers DATA receive buffers and {@code controlBuffers} more, posted on the QP (or its share of the SRQ)
     * @throws IllegalArgumentException if {@code shared}'s buffers are not {@code bufferBytes} long
     */
    RcResources(int rail, ProtectionDomain pd, Port port, int bufferBytes, int receiveBuffers, int controlBuffers, int sendBuffers,
                QpTimeouts timeouts, int maxWrites, @Nullable RailSharedBuffers shared, @Nullable SharedCompletionQueue sharedCq) {
        int totalRecv = receiveBuffers + controlBuffers;
        SlotPool rp = null;
        SlotPool sp = null;
        CompletionQueue c = null;
        QueuePair q = null;
        try {
            if (shared == null) {
                rp = new SlotPool("recv rail " + rail, pd, bufferBytes, totalRecv, Access.LOCAL_WRITE);
                sp = new SlotPool("send rail " + rail, pd, bufferBytes, sendBuffers, Access.LOCAL_WRITE);
            } else {
                if (shared.send().slotBytes() != bufferBytes || shared.receive().region().slotBytes() != bufferBytes) {
                    throw new IllegalArgumentException("shared buffers of " + shared.send().slotBytes() + " bytes but bufferBytes " + bufferBytes);
                }
                // none kept mapped: N idle connections must not hold N slots of the region (a control frame that
                // finds the region empty waits, like one that finds this channel's own pool empty)
                sp = SlotPool.share("send rail " + rail, shared.send(), sendBuffers, 0);
            }
            c = sharedCq != null ? sharedCq.cq() : pd.device().createCompletionQueue(entriesPerQp(receiveBuffers, controlBuffers,
                sendBuffers, maxWrites));
            q = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, port).cq(c).srq(shared == null ? null : shared.receive().srq())
                .maxSendWr(sendBuffers + RcSendQueue.HEADROOM + maxWrites).maxReceiveWr(totalRecv).maxInlineBytes(0)
                .retryCount(timeouts.retryCount()).retryTimeoutNs(timeouts.retryTimeoutNs())
                .rnrRetryCount(timeouts.rnrRetryCount()).rnrTimeoutNs(timeouts.rnrTimeoutNs()).build());
            q.init();
        } catch (RuntimeException e) {
            if (q != null) {
                q.close();
            }
            if (c != null && sharedCq == null) {
                c.close();
            }
            if (sp != null) {
                sp.close();
            }
            if (rp != null) {
                rp.close();
            }
            throw e;
        }
        this.sendPool = sp;
        this.receivePool = rp;
        this.cq = c;
        this.qp = q;
    }

    /**
     * Completions one RC channel can have outstanding in its CQ: its receive buffers, its send queue (send
     * buffers, the signalling headroom, RDMA WRITEs/READs) and a margin. Its own CQ has this many entries;
     * a shared CQ is sized from it.
     */
    static int entriesPerQp(int receiveBuffers, int controlBuffers, int sendBuffers, int maxWrites) {
        return receiveBuffers + controlBuffers + sendBuffers + RcSendQueue.HEADROOM + maxWrites + 8;
    }
}
