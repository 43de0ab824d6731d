package io.rdmaflux.striping;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A closed-loop sender over simulated rails: a {@link CommunicationScheduler} whose stripes go
 * over {@link SimLink}s to a {@link ReceiveSequencer}; it keeps sending while the scheduler
 * accepts, up to {@code messageCount} messages whose sizes come from {@code sizeOf(index)}.
 */
final class SimSender {
    final VirtualTimeLoop loop;
    final CommunicationScheduler<Long> scheduler;
    final ReceiveSequencer receiver;
    final SimLink[] links;
    final List<Long> delivered = new ArrayList<>();
    final List<Long> completed = new ArrayList<>();
    final List<Long> completionTimesNs = new ArrayList<>();
    final List<Long> stripeArrivalNs = new ArrayList<>();
    private final LongUnaryOperator sizeOf;
    private final long messageCount;
    private long nextIndex;
    private boolean pumping;
    private long paceNs;
    private boolean paceScheduled;
    private long completedBytes;
    /** Stripes the scheduler posted on a rail whose link had been killed (each would be lost). */
    long postedToDeadLink;

    SimSender(VirtualTimeLoop loop, RailsSpec spec, SimLink[] links, long messageCount, LongUnaryOperator sizeOf) {
        this.loop = loop;
        this.links = links;
        this.sizeOf = sizeOf;
        this.messageCount = messageCount;
        this.receiver = new ReceiveSequencer(Math.max(1024, spec.maxInFlightMessages() * 2));
        this.scheduler = new CommunicationScheduler<>(spec, this::post);
    }

    private void post(Stripe<Long> s) {
        int rail = s.rail();
        if (!links[rail].alive()) {
            postedToDeadLink++;
        }
        long id = s.stripeId();
        long psn = s.psn();
        long off = s.offsetBytes();
        long len = s.lengthBytes();
        long msgLen = s.messageLengthBytes();
        // one packet of header even for an empty message
        links[rail].transmit(Math.max(64, len), () -> {
            stripeArrivalNs.add(loop.nowNs());
            receiver.onStripe(psn, off, len, msgLen);
            receiver.poll(delivered::add);
        }, () -> {
            scheduler.onStripeCompleted(rail, id, loop.nowNs());
            scheduler.pollCompleted(Integer.MAX_VALUE, (m, p, l) -> {
                completed.add(m);
                completionTimesNs.add(loop.nowNs());
                completedBytes += l;
            });
            pump();
        });
    }

    /** Sends one message every {@code intervalNs} at most (a sender whose per-message cost dominates). */
    SimSender paced(long intervalNs) {
        this.paceNs = intervalNs;
        return this;
    }

    /** Sends as many messages as the scheduler accepts. */
    void pump() {
        if (paceNs > 0) {
            if (!paceScheduled && nextIndex < messageCount) {
                paceScheduled = true;
                loop.after(0, this::pacedSend);
            }
            return;
        }
        if (pumping) {
            return;
        }
        pumping = true;
        try {
            while (nextIndex < messageCount) {
                long r = scheduler.send(nextIndex, sizeOf.applyAsLong(nextIndex), loop.nowNs());
                if (r < 0) {
                    break;
                }
                nextIndex++;
            }
        } finally {
            pumping = false;
        }
    }

    private void pacedSend() {
        if (nextIndex >= messageCount) {
            paceScheduled = false;
            return;
        }
        long r = scheduler.send(nextIndex, sizeOf.applyAsLong(nextIndex), loop.nowNs());
        if (r < 0) {
            paceScheduled = false;
            return;
        }
        nextIndex++;
        loop.after(paceNs, this::pacedSend);
    }

    /** Fails a rail the way a flushed send queue reports it. */
    void failRail(int rail) {
        links[rail].kill();
        scheduler.onRailFailed(rail, new IllegalStateException("rail " + rail + ": WR_FLUSH_ERR (port down)"), loop.nowNs());
        pump();
    }

    long completedBytes() {
        return completedBytes;
    }

    long sent() {
        return nextIndex;
    }

    double share(int rail) {
        return scheduler.stripingPolicy().share(rail);
    }
}
