package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.internal.credit.SendCredits;

/**
 * Connection stage: the zero-credit probe. A sender that has messages to send and no credit waits for
 * the peer's next frame; if the peer died silently (its queue pairs destroyed after its own rail
 * failed, its host gone) while this side had nothing in flight, no frame ever comes and nothing here
 * fails: RC reports a dead peer only to a requester that sends. So after {@code intervalNs} without a
 * frame from the peer while waiting for credit, this stage sends one CREDIT frame on every usable rail,
 * and again while the wait lasts, each time after twice the previous gap, up to {@code 128 * intervalNs}
 * (TCP's persist timer backs off the same way); any frame from the peer starts over at {@code intervalNs}. A live peer acknowledges it (it carries
 * nothing new); a dead one leaves the queue pair to exhaust its transport retries, and the rail fails
 * with RETRY_EXC_ERR, failing over or ending the connection with an {@link RdmaTransportException}.
 * This is TCP's zero-window probe (RFC 9293 &sect;3.8.6.1) on the credit window of seed 001 &sect;3.1.
 *
 * <p>Cost: one store per frame that arrives ({@link #heard}); the rest runs once per interval.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class CreditProbe {
    private final Channel[] channels;
    private final SendCredits sendCredits;
    private final SendOps ops;
    private final SendPipeline pipeline;
    /** The longest gap between two probes: {@code intervalNs << MAX_BACKOFF_SHIFT}. */
    private static final int MAX_BACKOFF_SHIFT = 7;
    private final long intervalNs;
    private long gapNs;
    private long lastHeardNs;
    private long lastProbeNs;
    private long probes;

    /** @param intervalNs time without a frame from the peer, while waiting for credit, before a probe, ns &gt; 0 */
    CreditProbe(Channel[] channels, SendCredits sendCredits, SendOps ops, SendPipeline pipeline, long intervalNs, long nowNs) {
        if (intervalNs <= 0) {
            throw new IllegalArgumentException("intervalNs > 0 required but it was " + intervalNs);
        }
        this.channels = channels;
        this.sendCredits = sendCredits;
        this.ops = ops;
        this.pipeline = pipeline;
        this.intervalNs = intervalNs;
        this.gapNs = intervalNs;
        this.lastHeardNs = nowNs;
        this.lastProbeNs = nowNs;
    }

    /** A frame arrived from the peer at {@code nowNs}. */
    void heard(long nowNs) {
        lastHeardNs = nowNs;
    }

    /** Probes every usable rail if this side has waited for credit for an interval without hearing the peer. @return work done */
    int probe(long nowNs) {
        if (lastHeardNs - lastProbeNs > 0) {
            // the peer spoke since the last probe: start over at one interval
            gapNs = intervalNs;
        }
        if (nowNs - lastHeardNs < intervalNs || nowNs - lastProbeNs < gapNs || !waitingForCredit()) {
            return 0;
        }
        lastProbeNs = nowNs;
        gapNs = Math.min(gapNs << 1, intervalNs << MAX_BACKOFF_SHIFT);
        probes++;
        int work = 0;
        for (Channel ch : channels) {
            if (ch.isUsable() && ch.sendCreditFrame()) {
                work++;
            }
        }
        return work;
    }

    /** Probes sent so far (progress thread; tests and diagnostics). */
    long probes() {
        return probes;
    }

    /** Whether a message waits to be sent and no rail holds the credit it needs. */
    private boolean waitingForCredit() {
        SendOp op = ops.head();
        if (pipeline.isIdle() && (op == null || op.peek() == null)) {
            return false;
        }
        if (sendCredits.credits() == 0) {
            return true;
        }
        for (Channel ch : channels) {
            if (ch.isUsable() && ch.sendCredits() > 0) {
                return false;
            }
        }
        return true;
    }
}
