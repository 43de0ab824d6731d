package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.stripe.StripeEngine;
import io.rdmaflux.core.stripe.StripeSplitException;
import org.jspecify.annotations.Nullable;

/**
 * The RDMA READs of the READ rendezvous at the receiver (seed 001 &sect;3, with the data pulled by the
 * receiver): a message granted a message buffer is read from the sender's memory (the address and rkey
 * of its RTS_READ) in stripes over the rails (seed 000 &sect;4.3: each stripe lands in place at its
 * offset, no reassembly), planned and accounted by a {@link StripeEngine} like the WRITE rendezvous's.
 * A message of at least the scheduler's {@link SubchannelScheduler#stripeThresholdBytes()} is split
 * over the usable rails; a smaller one is read whole on the rail its RTS_READ came by. The split is the
 * scheduler's {@link SubchannelScheduler#stripe} hook when the scheduler has no
 * {@link SubchannelScheduler#stripePolicy() policy of its own}; a scheduler with one (rail-striping's)
 * gives that policy to the send direction's engine, which it alone may serve and whose accounting a
 * split here would disturb, so its READs are split evenly. The scheduler's per-stripe feedback hooks
 * are not called for READs (they measure the send direction). Entries are indexed by the message buffer's slot (one message per
 * slot), so at most {@code rendezvousBuffers} messages are read at once.
 *
 * <p>After a rail failure every stripe not completed is read again on the live rails (a duplicate
 * completion counts once, by the engine).
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RendezvousReads {
    private final DefaultRdmaConnection connection;
    private final Channel[] channels;
    private final SubchannelScheduler scheduler;
    /** The scheduler's {@code stripe} hook as a policy, or null when the READs are split evenly. */
    private final @Nullable SchedulerStripePolicy hooks;
    private final StripeEngine engine;
    private final boolean[] active;
    private final boolean[] hasSplit;
    private final int[] psn;
    private final int[] length;
    private final int[] rail;
    private final long[] remoteAddress;
    private final int[] rkey;
    private final long[] localAddress;
    private int lkey;
    private int reading;

    RendezvousReads(DefaultRdmaConnection connection, Channel[] channels, SubchannelScheduler scheduler, int buffers) {
        this.connection = connection;
        this.channels = channels;
        this.scheduler = scheduler;
        int n = Math.max(1, buffers);
        this.hooks = scheduler.stripePolicy() == null ? new SchedulerStripePolicy(scheduler, channels) : null;
        this.engine = new StripeEngine(channels.length, n, hooks != null ? hooks : new EvenSplit());
        active = new boolean[n];
        hasSplit = new boolean[n];
        psn = new int[n];
        length = new int[n];
        rail = new int[n];
        remoteAddress = new long[n];
        rkey = new int[n];
        localAddress = new long[n];
    }

    /** Starts reading message {@code messagePsn} of {@code lengthBytes} from the sender's memory into buffer {@code slot}. */
    void begin(int slot, int messagePsn, int lengthBytes, int rtsRail, long remote, int remoteKey, long local, int localKey) {
        active[slot] = true;
        hasSplit[slot] = false;
        psn[slot] = messagePsn;
        length[slot] = lengthBytes;
        rail[slot] = rtsRail;
        remoteAddress[slot] = remote;
        rkey[slot] = remoteKey;
        localAddress[slot] = local;
        lkey = localKey;
        reading++;
        engine.begin(slot, messagePsn, lengthBytes);
    }

    int reading() {
        return reading;
    }

    /** Posts the READ stripes not yet posted, as rails have room. @return work done */
    int post(long nowNs) {
        if (reading == 0) {
            return 0;
        }
        int work = 0;
        for (int s = 0; s < active.length; s++) {
            if (!active[s]) {
                continue;
            }
            if (!hasSplit[s] && !split(s, nowNs)) {
                continue;
            }
            long slots = engine.slots(s);
            for (long todo = slots & ~engine.postedOrCompleted(s); todo != 0; todo &= todo - 1) {
                int r = Long.numberOfTrailingZeros(todo);
                Channel ch = channels[r].isUsable() && channels[r].canReadStripe() ? channels[r] : firstRailThatCanRead();
                if (ch == null) {
                    return work;
                }
                int off = (int) engine.stripeOffset(s, r);
                int bytes = (int) engine.stripeBytes(s, r);
                engine.post(s, r, ch.rail(), nowNs);
                ch.readStripe(localAddress[s] + off, lkey, remoteAddress[s] + off, rkey[s], bytes, WorkRequestTokens.stripe(s, r));
                work++;
                if (connection.isTerminated()) {
                    return work;
                }
            }
        }
        return work;
    }

    private boolean split(int s, long nowNs) {
        if (length[s] >= scheduler.stripeThresholdBytes()) {
            long usable = 0;
            for (Channel ch : channels) {
                if (ch.isUsable()) {
                    usable |= 1L << ch.rail();
                }
            }
            try {
                if (hooks != null) {
                    hooks.planning(psn[s]);
                }
                if (engine.split(s, usable, nowNs) == 0) {
                    return false;
                }
            } catch (StripeSplitException wrong) {
                connection.termination().abortWith("local scheduler error", wrong);
                return false;
            } catch (RuntimeException policyFailed) {
                connection.termination().abortWith("local scheduler error", new IllegalStateException("scheduler " + scheduler
                    + " threw while splitting the READs of PSN " + psn[s] + " of " + length[s] + " bytes: " + policyFailed, policyFailed));
                return false;
            }
        } else {
            int r = rail[s];
            if (!channels[r].isUsable()) {
                Channel ch = firstUsable();
                if (ch == null) {
                    return false;
                }
                r = ch.rail();
            }
            engine.whole(s, r);
        }
        hasSplit[s] = true;
        return true;
    }

    private @Nullable Channel firstRailThatCanRead() {
        for (Channel ch : channels) {
            if (ch.isUsable() && ch.canReadStripe()) {
                return ch;
            }
        }
        return null;
    }

    private @Nullable Channel firstUsable() {
        for (Channel ch : channels) {
            if (ch.isUsable()) {
                return ch;
            }
        }
        return null;
    }

    /**
     * An RDMA READ completed.
     *
     * @return the buffer slot whose message is now complete, or -1 (more stripes to come, or a duplicate)
     */
    int onCompleted(long token, long nowNs) {
        int s = WorkRequestTokens.stripeEntry(token);
        int stripe = WorkRequestTokens.stripeIndex(token);
        if (s >= active.length || !active[s]) {
            return -1;
        }
        if (engine.complete(s, stripe, nowNs) != StripeEngine.MESSAGE) {
            return -1;
        }
        active[s] = false;
        reading--;
        return s;
    }

    /** Rail {@code failed} failed: the stripes not completed of every message it carried are read again on the live rails. */
    void onRailFailed(int failed) {
        engine.railFailed(failed);
        for (int s = 0; s < active.length; s++) {
            if (active[s] && hasSplit[s] && engine.carriesOn(s, failed)) {
                engine.unpostAll(s);
            }
        }
    }

    /** Forgets every message being read (the connection terminated). */
    void clear() {
        java.util.Arrays.fill(active, false);
        reading = 0;
    }

    /** Equal shares over the usable rails (the first rails take the remainder bytes). */
    private static final class EvenSplit implements io.rdmaflux.core.stripe.StripePolicy {
        @Override
        public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
            int usable = Long.bitCount(usableRails);
            long share = lengthBytes / usable;
            long rest = lengthBytes - share * usable;
            for (long m = usableRails; m != 0; m &= m - 1) {
                int r = Long.numberOfTrailingZeros(m);
                stripeBytes[r] = share + (rest-- > 0 ? 1 : 0);
            }
        }

        @Override
        public String name() {
            return "even READ split";
        }
    }
}
