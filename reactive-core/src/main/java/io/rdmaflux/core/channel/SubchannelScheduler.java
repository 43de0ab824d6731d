package io.rdmaflux.core.channel;

import io.rdmaflux.core.stripe.StripePolicy;
import org.jspecify.annotations.Nullable;

/**
 * A scheduling policy over the subchannels of one connection: the communication scheduler of seed
 * 000 &sect;4.1/&sect;4.4 asks it where each message goes. Created per connection by a
 * {@link ChannelFactory}.
 *
 * <p><b>Contract:</b> {@link #select} returns the index of a subchannel whose
 * {@link Subchannel#canSend()} is true, or -1 to wait (the connection retries on its next duty
 * cycle; no thread blocks). Every fragment of one message goes on the subchannel chosen for its
 * first fragment, in order, so a subchannel reassembles messages by itself; order between
 * messages on different subchannels is restored by PSN at the receiver.
 * {@link #onMessageCompleted} reports each message's delivery (its last fragment's send
 * completion) with the measured time, which adaptive policies feed back into their weights (seed
 * 000 &sect;4.5, eq. 1&ndash;4).
 *
 * <p><b>Large messages</b> (above the node's rendezvous threshold) go by rendezvous: {@link #select}
 * places their RTS; once the receiver's CTS arrived, a message of at least {@link #stripeThresholdBytes()}
 * is split with {@link #stripe} (or by the {@link #stripePolicy()}, when there is one) into one RDMA
 * WRITE per subchannel, each landing in place at its offset,
 * followed by one FIN per subchannel used (seed 000 &sect;4.3, &sect;5.3); a smaller one is written
 * whole on the RTS's subchannel. Each stripe's post and completion times go to
 * {@link #onStripeCompleted}; {@link #onMessageCompleted} comes once, after the last stripe, on the
 * RTS's subchannel, or {@link #onMessageDiscarded} instead if the receiver discarded the message.
 *
 * <p><b>Rail failure:</b> {@link #onSubchannelFailed} is called once; what was in flight on the
 * subchannel is sent again, with its PSN, on subchannels {@link #select} returns (or, for stripes, on
 * the first live subchannel with room), and the receiver drops copies by PSN.
 *
 * <p><b>Concurrency:</b> called on the progress thread only; needs no synchronization.
 */
public interface SubchannelScheduler {
    /**
     * Chooses the subchannel for the next message.
     *
     * @param psn          the message's PSN
     * @param lengthBytes  the message length
     * @param subchannels  the connection's subchannels, in rail order (do not modify)
     * @return an index into {@code subchannels} whose {@code canSend()} is true, or -1 to wait
     */
    int select(int psn, int lengthBytes, Subchannel[] subchannels);

    /**
     * A message sent on {@code subchannel} was delivered (RC send completion of its last fragment).
     *
     * @param elapsedNs from posting its first fragment to the completion of its last, in ns of the node's clock
     */
    default void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
    }

    /**
     * A rendezvous message placed with {@link #select} that the receiver discarded: it answered the RTS
     * with a discarding CTS (it closed its inbound side, or already holds the message, whose RTS was
     * sent again after a failover), so nothing (more) of it is written and its send is over. Called
     * instead of {@link #onMessageCompleted}, once, on the subchannel that carried the RTS. The message
     * carried no bytes and took no measurable time: a policy counts nothing for it and derives no rate
     * from it, but drops whatever it keeps per message placed (e.g. a per-subchannel queue of messages
     * in flight, completed in order). Stripes of it that completed before were reported to
     * {@link #onStripeCompleted} as usual.
     *
     * @param lengthBytes the message length announced in the RTS
     */
    default void onMessageDiscarded(Subchannel subchannel, int psn, int lengthBytes) {
    }

    // ---------------------------------------------------------------- striping hooks (seed 000 §4.4-4.5, seed 004 §II-B)

    /**
     * The switchover threshold (seed 000 &sect;4.3, seed 002 &sect;3.2): messages of at least this many
     * bytes are striped with {@link #stripe}; smaller ones are multiplexed whole with {@link #select}.
     * The default, {@link Long#MAX_VALUE}, never stripes.
     */
    default long stripeThresholdBytes() {
        return Long.MAX_VALUE;
    }

    /**
     * Whether the next message whose CTS arrived may be split and its stripes posted now. The
     * connection splits a striped message when it posts it, not when its CTS arrives, and asks this
     * first; while it answers false, granted messages wait (in PSN order) with nothing committed to
     * any rail, and the connection asks again on a later duty cycle. A policy answers false while
     * every rail still has enough queued to stay busy, so that a rail which slows down holds only
     * that much, not a share of every message the receiver granted (the whole message window).
     * The default, true, posts every granted message at once.
     *
     * @param nowNs node clock, ns
     */
    default boolean stripeNow(long nowNs) {
        return true;
    }

    /**
     * The policy the connection's rendezvous path gives its stripe engine
     * ({@link io.rdmaflux.core.stripe.StripeEngine}), or null (the default) for the hooks
     * {@link #stripe} and {@link #onStripeCompleted}. With a policy, the engine that posts the stripes
     * asks it for every split and tells it every post and completion with that engine's own accounting
     * (idle at post, stripes outstanding per rail, the rails a message used), and the connection calls
     * neither {@link #stripe} nor {@link #onStripeCompleted}; {@link #stripeThresholdBytes()} and
     * {@link #stripeNow} apply as before. The engine calls {@link StripePolicy#attach} with itself, so
     * the policy may read its per-rail backlog.
     *
     * <p>Asked once, when the connection is created. A scheduler serves one connection, so its policy
     * serves one engine.
     */
    default @Nullable StripePolicy stripePolicy() {
        return null;
    }

    /**
     * Splits one message into stripes, at most one per subchannel: fills {@code stripeBytes[i]} with
     * the bytes of the message that go on {@code subchannels[i]}. Entries must be &ge; 0, 0 for every
     * subchannel whose {@link Subchannel#isUsable()} is false, and add up to {@code lengthBytes};
     * stripes are contiguous and laid out in rail order (rail 0's bytes first). The default splits
     * evenly over the usable subchannels (seed 000 &sect;4.4, even striping).
     *
     * <p>This signature is that of a striping policy's {@code split(lengthBytes, usableRails, nowNs,
     * stripeBytes)}, so a policy plugs in with one line:
     * <pre>{@code
     * public void stripe(int psn, int lengthBytes, Subchannel[] s, long nowNs, long[] stripeBytes) {
     *     long usable = 0;
     *     for (Subchannel sc : s) if (sc.isUsable()) usable |= 1L << sc.rail();
     *     policy.split(lengthBytes, usable, nowNs, stripeBytes);
     * }
     * }</pre>
     *
     * @param psn         the message's PSN
     * @param lengthBytes the message length, &ge; {@link #stripeThresholdBytes()}
     * @param nowNs       the node clock's time, ns
     * @param stripeBytes output, one entry per subchannel, zeroed on entry
     */
    default void stripe(int psn, int lengthBytes, Subchannel[] subchannels, long nowNs, long[] stripeBytes) {
        int usable = 0;
        for (Subchannel sc : subchannels) {
            if (sc.isUsable()) {
                usable++;
            }
        }
        if (usable == 0) {
            return;
        }
        long share = lengthBytes / usable;
        long rest = lengthBytes - share * usable;
        for (int i = 0; i < subchannels.length; i++) {
            if (subchannels[i].isUsable()) {
                stripeBytes[i] = share + (rest-- > 0 ? 1 : 0);
            }
        }
    }

    /**
     * One stripe (or one whole multiplexed message) completed (not called when {@link #stripePolicy()}
     * gives a policy, which hears it from the engine instead): the feedback of seed 000 Fig. 4 that
     * adaptive policies turn into delivery times t_i (eq. 1&ndash;4) and sampled policies into their
     * transfer-time model (seed 004 &sect;II-B). The completion filter calls
     * {@link #onMessageCompleted} once per message after all its stripes completed.
     *
     * @param offsetBytes  where the stripe starts in its message
     * @param lengthBytes  bytes of the stripe
     * @param postedNs     when the stripe was posted on {@code subchannel}, node clock ns
     * @param completedNs  when its completion was polled, node clock ns
     */
    default void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs,
                                   long completedNs) {
    }

    /**
     * {@code subchannel} failed (error completion, port down) and will never be usable again: a
     * policy must give it no further message or stripe ({@code policy.onRailRemoved(rail)}).
     * Called once, on the progress thread, before the connection decides what the failure means
     * for it.
     */
    default void onSubchannelFailed(Subchannel subchannel) {
    }
}
