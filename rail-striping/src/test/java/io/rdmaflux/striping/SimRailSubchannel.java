package io.rdmaflux.striping;

import org.jspecify.annotations.Nullable;

/** A {@link RailSubchannel} over a simulated link, reporting into a shared receiver. */
final class SimRailSubchannel implements RailSubchannel<Long> {
    private final VirtualTimeLoop loop;
    private final SimLink link;
    private final ReceiveSequencer receiver;
    private final java.util.List<Long> delivered;
    private @Nullable StripeListener listener;
    private int rail;
    int started;
    int stopped;
    long posted;

    SimRailSubchannel(VirtualTimeLoop loop, SimLink link, ReceiveSequencer receiver, java.util.List<Long> delivered) {
        this.loop = loop;
        this.link = link;
        this.receiver = receiver;
        this.delivered = delivered;
    }

    @Override
    public void start(int rail, StripeListener listener) {
        this.rail = rail;
        this.listener = listener;
        started++;
    }

    @Override
    public void post(Stripe<Long> s) {
        posted++;
        long id = s.stripeId();
        long psn = s.psn();
        long off = s.offsetBytes();
        long len = s.lengthBytes();
        long msgLen = s.messageLengthBytes();
        link.transmit(Math.max(64, len), () -> {
            receiver.onStripe(psn, off, len, msgLen);
            receiver.poll(delivered::add);
        }, () -> {
            StripeListener l = listener;
            if (l != null) {
                l.onStripeCompleted(rail, id, loop.nowNs());
            }
        });
    }

    @Override
    public void stop() {
        stopped++;
        listener = null;
    }

    void kill() {
        link.kill();
        StripeListener l = listener;
        if (l != null) {
            l.onRailFailed(rail, new IllegalStateException("rail " + rail + ": WR_FLUSH_ERR (port down)"), loop.nowNs());
        }
    }
}
