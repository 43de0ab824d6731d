package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.internal.credit.SendCredits;
import io.rdmaflux.core.internal.regcache.CacheEntry;
import io.rdmaflux.core.internal.regcache.RegistrationCache;
import org.jspecify.annotations.Nullable;

import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * Connection stage: the send pipeline. Takes messages from the active {@code send()} op as far as
 * message credits go (and requests from its publisher only what credits plus the small send queue
 * allow, seed 001 &sect;3.1), numbers them with PSNs, asks the scheduler for a rail (seed 000 &sect;4.1),
 * and hands frames to that rail's channel: small messages packed several to a frame, larger ones
 * fragmented to the frame size, large ones to the rendezvous sender. After a failover it sends again,
 * with their PSNs, the messages the ledger lists.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class SendPipeline {
    private static final AtomicLongFieldUpdater<SendPipeline> MESSAGES_SENT =
        AtomicLongFieldUpdater.newUpdater(SendPipeline.class, "messagesSent");
    private static final AtomicLongFieldUpdater<SendPipeline> CREDIT_STALLS =
        AtomicLongFieldUpdater.newUpdater(SendPipeline.class, "creditStalls");

    private final DefaultRdmaConnection connection;
    private final RdmaNode node;
    private final Channel[] channels;
    private final SubchannelScheduler scheduler;
    private final SendCredits sendCredits;
    private final InflightLedger ledger;
    private final SendOps ops;
    private final RendezvousSender rendezvous;
    private final int peerMaxMessageBytes;
    /** Most credits counted in one request: the peer's receive buffers over all rails (the op queue's room). */
    private final long requestCredits;
    /** Length in bytes of the latest message taken from a publisher: what {@link #requestMore} expects the next to be. */
    private int lastLengthBytes;
    /** The message part-way out (fragments left, or a re-send), null when none. */
    private @Nullable RdmaMessage current;
    private int currentOffset;
    private int currentRail;
    private int currentPsn;
    private boolean resending;
    private int nextPsn;
    private volatile long messagesSent;
    /** Whether the last attempt to take a message found no credit for it (a stall episode is under way). */
    private boolean stalled;
    private volatile long creditStalls;

    SendPipeline(DefaultRdmaConnection connection, RdmaNode node, Channel[] channels, SubchannelScheduler scheduler,
                 SendCredits sendCredits, InflightLedger ledger, SendOps ops, RendezvousSender rendezvous,
                 int peerMaxMessageBytes, long requestCredits) {
        this.connection = connection;
        this.node = node;
        this.channels = channels;
        this.scheduler = scheduler;
        this.sendCredits = sendCredits;
        this.ledger = ledger;
        this.ops = ops;
        this.rendezvous = rendezvous;
        this.peerMaxMessageBytes = peerMaxMessageBytes;
        this.requestCredits = requestCredits;
    }

    /** The PSN the next new message gets: every PSN before it was sent. */
    int nextPsn() {
        return nextPsn;
    }

    long messagesSent() {
        return messagesSent;
    }

    /** Episodes with a message to send and no credit for it (see {@link ConnectionMetrics#creditStalls()}). */
    long creditStalls() {
        return creditStalls;
    }

    /** A message waits and has no credit: counts a new stall episode. Off the data path (nothing can be sent). */
    private void stall() {
        if (!stalled) {
            stalled = true;
            CREDIT_STALLS.lazySet(this, creditStalls + 1);
        }
    }

    /** Whether no usable rail holds a buffer credit. */
    private boolean noRailCredit() {
        for (Channel ch : channels) {
            if (ch.isUsable() && ch.sendCredits() > 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether nothing is part-way out and nothing waits to be sent again. */
    boolean isIdle() {
        return current == null && ledger.resendCount() == 0;
    }

    /** Transmits while credits, rails and messages allow. @return work done */
    int transmit(long nowNs) {
        int work = 0;
        for (;;) {
            RdmaMessage m = current;
            if (m == null && ledger.resendCount() > 0) {
                int r = resendOne();
                if (r < 0) {
                    return work;
                }
                work += r;
                if (connection.isTerminated()) {
                    return work;
                }
                continue;
            }
            if (m == null) {
                SendOp op = ops.active(nextPsn);
                if (op == null) {
                    return work;
                }
                RdmaMessage next = op.peek();
                if (next == null) {
                    return work;
                }
                int len = next.lengthBytes();
                if (len > peerMaxMessageBytes) {
                    op.poll();
                    sendCredits.onTaken();
                    op.discard(next);
                    ops.failHead(op, new MessageTooLargeException(len, peerMaxMessageBytes));
                    work++;
                    continue;
                }
                if (!sendCredits.hasCredits(1)) {
                    stall();
                    return work;
                }
                int stagingSlot = -1;
                int entry = -1;
                CacheEntry pinned = null;
                boolean registered = next instanceof RegisteredMessage rm && node.owns(rm.region());
                if (rendezvous.takes(len, registered)) {
                    entry = rendezvous.freeEntry();
                    if (entry < 0) {
                        return work;
                    }
                    // sent by reference: its registration pinned in the node's cache (seed 001 §3.1), no copy
                    RendezvousSource source = rendezvous.source();
                    // the node's cache and staging pool are shared: a connection giving back room signals this one
                    pinned = source == null ? null : source.pin(next, len, connection.wakeHandle());
                    if (pinned == RegistrationCache.WAIT) {
                        // the cache's budget is held by sends in flight: wait for one to complete and unpin
                        return work;
                    }
                    if (pinned == null && source != null && (!registered || len <= source.stagingSlotBytes())) {
                        stagingSlot = source.acquireStaging(connection.wakeHandle());
                        if (stagingSlot < 0) {
                            // every staging slot carries a message in progress: wait for one to complete
                            return work;
                        }
                    }
                }
                int rail = scheduler.select(nextPsn, len, channels);
                if (rail < 0 || !channels[rail].canSend()) {
                    RendezvousSource source = rendezvous.source();
                    if (stagingSlot >= 0 && source != null) {
                        source.releaseStaging(stagingSlot);
                    }
                    if (pinned != null && source != null) {
                        source.unpin(pinned);
                    }
                    if (rail < 0) {
                        if (noRailCredit()) {
                            stall();
                        }
                        return work;
                    }
                    throw new IllegalStateException("scheduler " + scheduler + " chose rail " + rail + " which cannot send");
                }
                op.poll();
                sendCredits.onTaken();
                sendCredits.consume();
                stalled = false;
                lastLengthBytes = len;
                op.taken++;
                int psn = nextPsn++;
                ledger.start(psn, len, nowNs);
                if (entry >= 0) {
                    rendezvous.start(entry, next, psn, len, rail, stagingSlot, pinned);
                    MESSAGES_SENT.lazySet(this, messagesSent + 1);
                    work++;
                    if (connection.isTerminated()) {
                        return work;
                    }
                    continue;
                }
                current = next;
                ops.transmitting(op);
                currentOffset = 0;
                currentRail = rail;
                currentPsn = psn;
                resending = false;
                ledger.keep(psn, next, rail);
                m = next;
            }
            Channel ch = channels[currentRail];
            if (!ch.canSend()) {
                return work;
            }
            int len = m.lengthBytes();
            int frag = Math.min(len - currentOffset, ch.maxFramePayloadBytes());
            boolean first = currentOffset == 0;
            boolean last = currentOffset + frag == len;
            SendOp op = ops.transmitting();
            if (first && last && !resending && op != null && packs(op.peek(), ch, DataFrameCodec.PACKED_PREFIX_BYTES + len)) {
                current = null;
                ops.transmitting(null);
                work += transmitPacked(op, m, ch, nowNs);
                if (connection.isTerminated()) {
                    return work;
                }
                continue;
            }
            long token = last ? WorkRequestTokens.message(currentPsn) : WorkRequestTokens.UNREPORTED;
            if (last) {
                // a failed post terminates the connection inside sendData: it must not find this message as current
                current = null;
                ops.transmitting(null);
            }
            ch.sendData(m, currentOffset, frag, first, last, currentPsn, token);
            currentOffset += frag;
            work++;
            if (last && !resending) {
                MESSAGES_SENT.lazySet(this, messagesSent + 1);
            }
            if (connection.isTerminated()) {
                return work;
            }
        }
    }

    /**
     * Whether {@code next}, the message after the current one of {@code usedBytes} packed bytes, may ride
     * in the same packed DATA frame: a message credit is held for it, it fits, it would not go by
     * rendezvous, and its PSN's in-flight entry is free.
     */
    private boolean packs(@Nullable RdmaMessage next, Channel ch, int usedBytes) {
        if (next == null) {
            return false;
        }
        int len = next.lengthBytes();
        return (long) usedBytes + DataFrameCodec.PACKED_PREFIX_BYTES + len <= ch.maxFramePayloadBytes()
            && len <= peerMaxMessageBytes && (!rendezvous.enabled() || len <= rendezvous.thresholdBytes())
            && sendCredits.hasCredits(1) && ledger.isFree(nextPsn);
    }

    /**
     * Coalescing: sends {@code first} (its PSN and credit already taken) with the small messages queued
     * after it on the same rail, in one packed DATA frame: one send work request and one receive buffer
     * (one buffer credit) for up to {@link DataFrameCodec#MAX_PACKED_MESSAGES} messages, one message
     * credit each.
     *
     * <p>Bookkeeping is per frame: each message is released once copied into the frame, which holds the
     * bytes until its send completes; if its rail fails first, the failover takes the messages of every
     * frame without a completion back from the send buffers for the re-send. So the per-message work is
     * the copy, the PSN's length and start time (for the scheduler's completion report).
     *
     * @return messages sent
     */
    private int transmitPacked(SendOp op, RdmaMessage first, Channel ch, long nowNs) {
        int firstPsn = currentPsn;
        // transmit() kept the first message for a re-send as if it went alone: the frame keeps it now
        ledger.forget(firstPsn);
        ch.openPack(firstPsn);
        int used = DataFrameCodec.PACKED_PREFIX_BYTES + first.lengthBytes();
        ch.packAppend(first);
        first.release();
        int limit = ch.maxFramePayloadBytes();
        // one message credit per further message, taken for the whole frame at the end
        int room = (int) Math.min(sendCredits.credits(), DataFrameCodec.MAX_PACKED_MESSAGES - 1);
        int maxLength = rendezvous.enabled() ? Math.min(peerMaxMessageBytes, rendezvous.thresholdBytes()) : peerMaxMessageBytes;
        int extra = 0;
        RdmaMessage n;
        while (extra < room && (n = op.peek()) != null) {
            int len = n.lengthBytes();
            int psn = nextPsn;
            if (len > maxLength || used + DataFrameCodec.PACKED_PREFIX_BYTES + len > limit || !ledger.isFree(psn)) {
                break;
            }
            op.poll();
            lastLengthBytes = len;
            nextPsn = psn + 1;
            ledger.start(psn, len, nowNs);
            ch.packAppend(n);
            n.release();
            used += DataFrameCodec.PACKED_PREFIX_BYTES + len;
            extra++;
        }
        sendCredits.take(extra);
        op.taken += extra;
        int count = extra + 1;
        MESSAGES_SENT.lazySet(this, messagesSent + count);
        ch.closePack(WorkRequestTokens.packed(firstPsn, count));
        return count;
    }

    /**
     * Re-sends the lowest PSN that was in flight on a failed rail, with its PSN, on a rail the
     * scheduler selects now: a small message from its first fragment, a rendezvous message from its
     * RTS (the receiver answers a CTS again, or a discarding CTS if the message already arrived).
     * No new message credit is used: the receiver counts each PSN once.
     *
     * @return work done, or -1 to wait (no rail can send)
     */
    private int resendOne() {
        int psn = ledger.nextResend();
        RdmaMessage m = ledger.kept(psn);
        int e = rendezvous.resendEntry(psn);
        if (m == null && e < 0) {
            ledger.popResend();
            return 1;
        }
        int len = m != null ? m.lengthBytes() : rendezvous.length(e);
        int rail = scheduler.select(psn, len, channels);
        if (rail < 0) {
            return -1;
        }
        if (!channels[rail].canSend()) {
            throw new IllegalStateException("scheduler " + scheduler + " chose rail " + rail + " which cannot send");
        }
        ledger.popResend();
        if (e >= 0) {
            rendezvous.resendRts(e, rail);
            return 1;
        }
        current = m;
        ops.transmitting(null);
        currentOffset = 0;
        currentRail = rail;
        currentPsn = psn;
        resending = true;
        ledger.movedTo(psn, rail);
        return 1;
    }

    /**
     * Requests from the active op's publisher what credits plus the send queue allow, counting at most
     * {@link #requestCredits} message credits (the op's queue holds the peer's buffers plus the send queue)
     * and at most the usable rails' <em>buffer</em> credits times the messages per buffer the latest
     * message taken would pack ({@link #messagesPerBuffer}). The second bound is the byte bound of the
     * grant: the peer grants several message credits per free receive buffer
     * ({@code RdmaNode.Builder.messageCreditsPerBuffer}) because small messages share buffers, but a
     * message that fills a buffer can use only one of them per buffer credit, so a stream of such messages
     * is taken as if one credit per buffer had been granted, however many credits small messages earned
     * before it; a stalled receiver then holds the sender to its free buffers plus the send queue. The
     * length of a message is known only once the publisher delivered it, so the bound follows the stream
     * one message late; the send queue always lets at least one more message be taken, so a change of
     * size cannot stall the op. Each duty cycle transmits what the last one requested, so this bounds a
     * cycle's messages, not the messages in flight. @return work done
     */
    int requestMore() {
        SendOp op = ops.head();
        if (op == null || op.publisherDone || op.subscription == null || op.firstPsn < 0) {
            return 0;
        }
        long held = Math.min(sendCredits.credits(), requestCredits);
        if (held > 0) {
            held = Math.min(held, bufferBound());
        }
        long n = sendCredits.toRequest(held);
        if (n > 0) {
            op.request(n);
            return 1;
        }
        return 0;
    }

    /** Usable rails' buffer credits times {@link #messagesPerBuffer}: messages the peer's free buffers take now. */
    private long bufferBound() {
        long bufferCredits = 0;
        int payload = Integer.MAX_VALUE;
        for (Channel ch : channels) {
            if (ch.isUsable()) {
                bufferCredits += ch.sendCredits();
                payload = Math.min(payload, ch.maxFramePayloadBytes());
            }
        }
        return bufferCredits * messagesPerBuffer(lastLengthBytes, payload);
    }

    /**
     * Messages of {@code lengthBytes} one DATA frame of {@code framePayloadBytes} carries packed, in
     * [1, {@link DataFrameCodec#MAX_PACKED_MESSAGES}]: 1 for a message that fills a frame, needs several or
     * goes by rendezvous (its RTS takes a buffer too).
     */
    static int messagesPerBuffer(int lengthBytes, int framePayloadBytes) {
        long perMessage = (long) DataFrameCodec.PACKED_PREFIX_BYTES + Math.max(0, lengthBytes);
        long n = framePayloadBytes / perMessage;
        return (int) Math.max(1, Math.min(n, DataFrameCodec.MAX_PACKED_MESSAGES));
    }

    /** A frame posted with {@code token} on {@code ch} completed. */
    void onSendCompleted(Channel ch, long token, long nowNs) {
        if (!WorkRequestTokens.isReported(token)) {
            return;
        }
        if (WorkRequestTokens.isPacked(token)) {
            ops.onPackedCompleted(ch, WorkRequestTokens.psn(token), WorkRequestTokens.packedCount(token), nowNs);
            return;
        }
        if (WorkRequestTokens.isStripe(token)) {
            rendezvous.onStripeCompleted(ch, token, nowNs);
            return;
        }
        int psn = WorkRequestTokens.psn(token);
        RdmaMessage kept = ledger.kept(psn);
        if (kept != null && current == kept) {
            // its re-send is under way on another rail; the peer drops that copy as a duplicate
            current = null;
        }
        if (ledger.retire(psn)) {
            ops.onMessageDelivered(ch, psn);
        }
    }

    /** Rail {@code rail} failed: the message part-way out on it goes again whole (the ledger lists it). */
    void onRailFailed(int rail) {
        if (current != null && currentRail == rail) {
            current = null;
            ops.transmitting(null);
        }
    }

    /** The connection terminated: nothing is part-way out any more. */
    void clear() {
        current = null;
        ops.transmitting(null);
    }

    String describe() {
        return "nextPsn=" + nextPsn + ", current=" + current;
    }
}
