package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.CtsFrameCodec;
import io.rdmaflux.core.frame.ReadFinFrameCodec;
import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.internal.regcache.CacheEntry;
import io.rdmaflux.core.internal.regcache.RegistrationCache;
import io.rdmaflux.core.stripe.StripeEngine;
import io.rdmaflux.core.stripe.StripePolicy;
import io.rdmaflux.core.stripe.StripeSplitException;
import org.jspecify.annotations.Nullable;

/**
 * Connection stage: the send side of the RDMA WRITE rendezvous (seed 001 &sect;3, Fig. 2) and its
 * striping over rails (seed 000 &sect;4.3&ndash;4.4, &sect;5.3). A large message is staged once into a
 * registered slot of the node (or sent from memory the application registered), announced by an RTS,
 * and, once the CTS names the receiver's buffer, split by the scheduler into at most one stripe per rail:
 * one RDMA WRITE each, landing in place at its offset, then one FIN on the same queue pair. The stripes
 * are planned and accounted by the {@link StripeEngine} (the same engine rail-striping's operators use),
 * with the scheduler's own {@link SubchannelScheduler#stripePolicy()} as its policy, which then hears
 * every split, post and completion from the engine, or else the scheduler's hooks as the policy
 * ({@link SchedulerStripePolicy}), and then the completion filter reports each stripe to
 * {@link SubchannelScheduler#onStripeCompleted} (the feedback, seed 000 eq. 1&ndash;4, seed 004
 * &sect;II-B). The message completes once, after its last stripe. An entry of {@link RendezvousSends} is the engine entry of the same index;
 * a stripe's slot is the rail the split gave it, and its FIN's token names both.
 *
 * <p><b>The source memory</b> ({@link RendezvousSource}): application memory sent by reference is pinned
 * in the node's {@link RegistrationCache} (seed 001 &sect;3.1's pin-down cache, seed 000 &sect;5.1) until
 * the NIC is done with it (the last WRITE completed, or the READ_FIN arrived); anything else is staged by
 * one copy into a registered slot of the node.
 *
 * <p><b>READ rendezvous</b> ({@link RendezvousMode}): a message the negotiated mode sends by READ goes
 * with an RTS_READ carrying its source address and rkey; the receiver reads it (striping the READs over
 * its rails) and answers READ_FIN, which completes the message here: no CTS, no WRITE, no FIN from this
 * side.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RendezvousSender {
    private final DefaultRdmaConnection connection;
    private final Channel[] channels;
    private final SubchannelScheduler scheduler;
    private final SendOps ops;
    private final @Nullable MessageBufferPool staging;
    private final int thresholdBytes;
    private final RendezvousSends t;
    /** The scheduler's hooks as the engine's policy; null when the scheduler gave a policy of its own. */
    private final @Nullable SchedulerStripePolicy hooks;
    private final StripeEngine engine;
    private final @Nullable RendezvousSource source;
    /** The negotiated mode: READ or AUTO only when the peer and every rail's channel kind have the READ rendezvous. */
    private final RendezvousMode mode;
    /** The node device of each rail: over several devices each stripe uses its rail's keys. */
    private final RailDevices devices;
    /** Per entry the rkey of each rail from a CTS over several devices; null entries: {@code t.rkey} for every rail. */
    private final int @Nullable [][] railRkeys;

    RendezvousSender(DefaultRdmaConnection connection, Channel[] channels, SubchannelScheduler scheduler, SendOps ops,
                     @Nullable MessageBufferPool staging, int thresholdBytes, int rendezvousBuffers, RegistrationCache cache,
                     RendezvousMode mode, RailDevices devices) {
        this.devices = devices;
        this.connection = connection;
        this.source = staging == null ? null : new RendezvousSource(staging, cache, devices.spansDevices());
        this.mode = mode;
        this.channels = channels;
        this.scheduler = scheduler;
        this.ops = ops;
        this.staging = staging;
        this.thresholdBytes = thresholdBytes;
        // staged messages are bounded by the node's staging pool; registered ones by these entries
        this.t = new RendezvousSends(2 * rendezvousBuffers);
        StripePolicy own = scheduler.stripePolicy();
        this.hooks = own == null ? new SchedulerStripePolicy(scheduler, channels) : null;
        this.engine = new StripeEngine(channels.length, t.state.length, own != null ? own : hooks);
        this.railRkeys = devices.spansDevices() ? new int[t.state.length][] : null;
    }

    /** Whether messages above the threshold go by rendezvous at all (this node and the peer have it on). */
    boolean enabled() {
        return staging != null;
    }

    /** The most bytes a message may have to go as DATA frames (packed or fragmented) rather than by rendezvous. */
    int thresholdBytes() {
        return thresholdBytes;
    }

    /** Whether a message of {@code lengthBytes} goes by rendezvous ({@code registered}: from the node's own registered memory). */
    boolean takes(int lengthBytes, boolean registered) {
        MessageBufferPool s = staging;
        // over several devices registered memory is staged too (it is registered on the first device only)
        return s != null && lengthBytes > thresholdBytes && (registered && !devices.spansDevices() || lengthBytes <= s.slotBytes());
    }

    /** Where large messages are read from (cache pin or staging slot); null while rendezvous is off. */
    @Nullable RendezvousSource source() {
        return source;
    }

    /** The negotiated rendezvous mode. */
    RendezvousMode mode() {
        return mode;
    }

    /** A free entry for a new rendezvous send, or -1 while every one is in use. */
    int freeEntry() {
        return t.freeEntry();
    }

    private RendezvousSource source(String why) {
        RendezvousSource s = source;
        if (s == null) {
            throw new IllegalStateException("rendezvous is off on " + connection.name() + ": " + why);
        }
        return s;
    }

    /**
     * Starts rendezvous send {@code entry} of message {@code m} ({@code psn}, {@code length} bytes) with
     * an RTS (or RTS_READ) on {@code rail}: from memory sent by reference ({@code pinned}, the message
     * kept until the send completes), from a region registered outside the cache, or copied into
     * {@code stagingSlot} and released.
     */
    void start(int entry, RdmaMessage m, int psn, int length, int rail, int stagingSlot, @Nullable CacheEntry pinned) {
        source("start").use(t, entry, m, stagingSlot, pinned);
        boolean read = mode.reads(length);
        t.start(entry, psn, length, rail, read);
        if (read) {
            channels[rail].sendRtsRead(psn, length, t.localAddress[entry], t.localRkey[entry], WorkRequestTokens.UNREPORTED);
            return;
        }
        engine.begin(entry, psn, length);
        channels[rail].sendRts(psn, length, WorkRequestTokens.UNREPORTED);
    }

    /** The entry of a rendezvous send of {@code psn} waiting to be sent again after a failover, or -1. */
    int resendEntry(int psn) {
        return t.find(psn, RendezvousSends.RESEND);
    }

    int length(int entry) {
        return t.length[entry];
    }

    /** Sends the RTS of {@code entry} again on {@code rail} (the receiver answers a CTS again, or a discarding one). */
    void resendRts(int entry, int rail) {
        t.setState(entry, RendezvousSends.RTS_SENT);
        t.rtsRail[entry] = rail;
        if (t.read[entry]) {
            channels[rail].sendRtsRead(t.psn[entry], t.length[entry], t.localAddress[entry], t.localRkey[entry],
                WorkRequestTokens.UNREPORTED);
            return;
        }
        channels[rail].sendRts(t.psn[entry], t.length[entry], WorkRequestTokens.UNREPORTED);
    }

    /**
     * A READ_FIN: the receiver's READs of {@code psn} completed (the NIC no longer touches the source
     * memory), or it dropped the message unread ({@link ReadFinFrameCodec#DISCARD}): the send completes
     * and the memory is unpinned.
     */
    void onReadFin(Channel ch, int psn, int length, int flags) {
        int e = t.awaitingReadFin(psn);
        if (e < 0) {
            // a second READ_FIN answering an RTS_READ re-sent after a failover
            return;
        }
        if (t.length[e] != length) {
            connection.termination().protocolFailure("peer sent a READ_FIN for PSN " + psn + " of " + length + " bytes on rail " + ch.rail()
                + " but the RTS_READ announced " + t.length[e]);
            return;
        }
        if ((flags & ReadFinFrameCodec.DISCARD) != 0) {
            discard(e);
        } else {
            finish(e);
        }
    }

    void onCts(Channel ch, int psn, int length, long remoteAddress, int rkey, int flags) {
        onCts(ch, psn, length, remoteAddress, rkey, null, flags);
    }

    /** A CTS with one rkey per rail (rails over several devices): stripe {@code r} is written with {@code railRkeys[r]}. */
    void onCts(Channel ch, int psn, int length, long remoteAddress, int[] railRkeys, int flags) {
        if (railRkeys.length != channels.length) {
            connection.termination().protocolFailure("peer sent a CTS for PSN " + psn + " with rkeys of " + railRkeys.length + " rails on rail " + ch.rail()
                + " but the connection has " + channels.length);
            return;
        }
        onCts(ch, psn, length, remoteAddress, railRkeys[0], railRkeys, flags);
    }

    private void onCts(Channel ch, int psn, int length, long remoteAddress, int rkey, int @Nullable [] keys, int flags) {
        int e = t.awaitingCts(psn);
        if (e < 0) {
            // a second CTS answering an RTS re-sent after a failover, or for a message already complete
            return;
        }
        if (t.length[e] != length) {
            connection.termination().protocolFailure("peer sent a CTS for PSN " + psn + " of " + length + " bytes on rail " + ch.rail()
                + " but the RTS announced " + t.length[e]);
            return;
        }
        if ((flags & CtsFrameCodec.DISCARD) != 0) {
            // the receiver closed its inbound side, or already holds the message: nothing (more) to write
            t.setState(e, RendezvousSends.POSTED);
            discard(e);
            return;
        }
        t.remoteAddress[e] = remoteAddress;
        t.rkey[e] = rkey;
        if (railRkeys != null) {
            railRkeys[e] = keys;
        }
        if (t.hasSplit[e]) {
            // again after a failover: the split stays, stripes that completed are not written again
            engine.unpostAll(e);
        }
        // split when posted (post), with the rails' state then
        t.queueForPosting(e);
    }

    /**
     * Posts the stripes of messages whose CTS arrived, oldest first, as rails have room, splitting each
     * when it is first posted and not before the scheduler's {@code stripeNow} allows it.
     */
    int post(long nowNs, int nextPsn) {
        int work = 0;
        if (staging == null) {
            return 0;
        }
        int e;
        while ((e = t.nextToPost(nextPsn)) >= 0) {
            if (!t.hasSplit[e]) {
                if (t.length[e] >= scheduler.stripeThresholdBytes() && !scheduler.stripeNow(nowNs)) {
                    return work;
                }
                if (!split(e, nowNs)) {
                    return work;
                }
            }
            long slots = engine.slots(e);
            int stripes = engine.stripeCount(e);
            for (long todo = slots & ~engine.postedOrCompleted(e); todo != 0; todo &= todo - 1) {
                int r = Long.numberOfTrailingZeros(todo);
                // stripe r goes on rail r; after rail r failed, on the first live rail with room
                Channel ch = channels[r].isUsable() ? channels[r] : firstRailThatCanWrite();
                if (ch == null || !ch.canWriteStripe()) {
                    continue;
                }
                engine.post(e, r, ch.rail(), nowNs);
                // over several devices the source is a staging slot (RendezvousSource), registered on every device
                int lkey = devices.spansDevices() ? devices.lkey(staging, ch.rail()) : t.lkey[e];
                int rkey = railRkeys != null && railRkeys[e] != null ? railRkeys[e][ch.rail()] : t.rkey[e];
                ch.writeStripe(t.psn[e], t.length[e], t.localAddress[e], lkey, t.remoteAddress[e], rkey,
                    (int) engine.stripeOffset(e, r), (int) engine.stripeBytes(e, r), stripes, r, WorkRequestTokens.stripe(e, r));
                work++;
                if (connection.isTerminated() || t.state[e] != RendezvousSends.POSTING) {
                    return work;
                }
            }
            if ((engine.postedOrCompleted(e) & slots) != slots) {
                return work;
            }
            t.setState(e, RendezvousSends.POSTED);
            if (engine.allCompleted(e)) {
                finish(e);
            }
        }
        return work;
    }

    /**
     * Splits the message of entry {@code e} over the rails usable now: by the scheduler from its
     * stripe threshold on, else whole on the RTS's rail (or the first usable one).
     *
     * @return false when it could not: no usable rail (the entry stays queued), or a wrong split (the
     *         connection is terminated)
     */
    private boolean split(int e, long nowNs) {
        int length = t.length[e];
        if (length >= scheduler.stripeThresholdBytes()) {
            long usable = 0;
            for (Channel ch : channels) {
                if (ch.isUsable()) {
                    usable |= 1L << ch.rail();
                }
            }
            try {
                if (hooks != null) {
                    hooks.planning(t.psn[e]);
                }
                if (engine.split(e, usable, nowNs) == 0) {
                    return false;
                }
            } catch (StripeSplitException wrong) {
                connection.termination().abortWith("local scheduler error", wrong);
                return false;
            } catch (RuntimeException policyFailed) {
                // a policy's own bug: the connection cannot place the message, and the duty cycle must go on
                connection.termination().abortWith("local scheduler error", new IllegalStateException("scheduler " + scheduler
                    + " threw while splitting PSN " + t.psn[e] + " of " + length + " bytes: " + policyFailed, policyFailed));
                return false;
            }
        } else {
            int rail = t.rtsRail[e];
            if (!channels[rail].isUsable()) {
                rail = firstUsableRail();
                if (rail < 0) {
                    return false;
                }
            }
            engine.whole(e, rail);
        }
        t.hasSplit[e] = true;
        return true;
    }

    private @Nullable Channel firstRailThatCanWrite() {
        for (Channel ch : channels) {
            if (ch.isUsable() && ch.canWriteStripe()) {
                return ch;
            }
        }
        return null;
    }

    private int firstUsableRail() {
        for (Channel ch : channels) {
            if (ch.isUsable()) {
                return ch.rail();
            }
        }
        return -1;
    }

    /** Completion filter (seed 000 &sect;4.1, &sect;5.3): one stripe's WRITE completed; the message once all did. */
    void onStripeCompleted(Channel ch, long token, long nowNs) {
        int entry = WorkRequestTokens.stripeEntry(token);
        int stripe = WorkRequestTokens.stripeIndex(token);
        if (t.state[entry] == RendezvousSends.FREE) {
            return;
        }
        int done = engine.complete(entry, stripe, nowNs);
        if (done == StripeEngine.IGNORED) {
            return;
        }
        if (hooks != null) {
            scheduler.onStripeCompleted(ch, t.psn[entry], engine.stripeOffset(entry, stripe), engine.stripeBytes(entry, stripe),
                engine.postedNs(entry, stripe), nowNs);
        }
        if (done == StripeEngine.MESSAGE && t.state[entry] == RendezvousSends.POSTED) {
            finish(entry);
        }
    }

    private void finish(int entry) {
        int psn = t.psn[entry];
        ops.onMessageDelivered(end(entry), psn);
    }

    /**
     * The receiver discarded the message (a CTS with {@link CtsFrameCodec#DISCARD}): its send op counts it
     * done, but it is not counted in {@code messagesDelivered} and the scheduler hears of no delivery, so
     * a striping policy counts no bytes for it and sees no rate.
     */
    private void discard(int entry) {
        int psn = t.psn[entry];
        int length = t.length[entry];
        Channel rtsRail = end(entry);
        scheduler.onMessageDiscarded(rtsRail, psn, length);
        ops.countDelivered(psn);
    }

    /** Frees the entry and its staging slot; returns the channel that carried the RTS. */
    private Channel end(int entry) {
        int rail = t.rtsRail[entry];
        t.finish(entry);
        RendezvousSource s = source;
        if (s != null) {
            s.release(t, entry);
        }
        return channels[rail];
    }

    /**
     * Rail {@code failed} failed: every rendezvous whose RTS or an unfinished stripe was on it goes again
     * from its RTS, with its PSN, once the receiver confirms the buffer is still the message's.
     */
    void onRailFailed(int failed, InflightLedger ledger, int nextPsn) {
        engine.railFailed(failed);
        for (int e = 0; e < t.state.length; e++) {
            int s = t.state[e];
            // a READ's RTS_READ goes again whatever its rail: its READ_FIN may have been lost on the failed one
            // (the receiver answers a repeated RTS_READ of a message it has with a READ_FIN, and ignores one it is reading)
            boolean lost = s == RendezvousSends.RTS_SENT && (t.rtsRail[e] == failed || t.read[e])
                || (s == RendezvousSends.POSTING || s == RendezvousSends.POSTED) && engine.carriesOn(e, failed);
            if (lost) {
                t.setState(e, RendezvousSends.RESEND);
                engine.unpostAll(e);
                if (!ledger.resendListed(t.psn[e])) {
                    ledger.addResend(t.psn[e], nextPsn);
                }
            }
        }
    }

    /** The rails are freed (no WRITE can read a staging slot any more): staging slots return to the node's pool. */
    void free() {
        RendezvousSource s = source;
        if (s != null) {
            t.clear(e -> s.release(t, e));
        }
    }

    int inUse() {
        return t.inUse();
    }
}
