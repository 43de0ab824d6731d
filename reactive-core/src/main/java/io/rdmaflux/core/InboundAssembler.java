package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.internal.credit.MessageCredits;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Connection stage: turns the DATA frames the channels report into whole messages for
 * {@link InboundDelivery}. A one-frame message is delivered as a view of its receive buffer; the
 * messages of a packed frame as pooled views sharing theirs; a fragmented message is copied into its own
 * buffer ({@link AssembledMessage}) fragment by fragment, each receive buffer freed at once, so
 * reassembly never holds credits. Every fragment of a message comes on one rail, in order (RC), so one
 * partial message per rail is all there is.
 *
 * <p>Also here: the checks every message's first frame passes (a message credit held, the length
 * accepted), and dropping the copies a failover sends again of messages that had arrived.
 *
 * <p><b>Concurrency:</b> progress thread, except {@link #onAssembledReleased} (any thread).
 */
final class InboundAssembler {
    private final DefaultRdmaConnection connection;
    private final MessageCredits messageCredits;
    private final ReceiveBuffers buffers;
    private final InboundDelivery delivery;
    private final int localMaxMessageBytes;
    private final AssembledMessage[] partial;
    /** Entries of {@link #partial} not null: kept where they are set, so granting credits reads no array. */
    private int partialCount;
    /** Per rail: the rest of a message whose first fragment was a duplicate is dropped too. */
    private final boolean[] dropping;
    private final int[] droppingPsn;
    private final AtomicInteger assembledOutstanding = new AtomicInteger();

    InboundAssembler(DefaultRdmaConnection connection, MessageCredits messageCredits, ReceiveBuffers buffers,
                     InboundDelivery delivery, int rails, int localMaxMessageBytes) {
        this.connection = connection;
        this.messageCredits = messageCredits;
        this.buffers = buffers;
        this.delivery = delivery;
        this.localMaxMessageBytes = localMaxMessageBytes;
        this.partial = new AssembledMessage[rails];
        this.dropping = new boolean[rails];
        this.droppingPsn = new int[rails];
    }

    /** Messages part-way in (a first fragment arrived, the last not yet): they hold a unit of demand. */
    int partialCount() {
        return partialCount;
    }

    /** Reassembled messages delivered and not yet released (any thread). */
    int outstanding() {
        return assembledOutstanding.get();
    }

    void onAssembledReleased() {
        if (assembledOutstanding.decrementAndGet() == 0) {
            connection.resources().onDeliveredMessageGone();
        }
    }

    private boolean closedForInput() {
        return delivery.inboundClosed() || connection.isTerminated();
    }

    /** A DATA frame (one fragment, or a whole message) arrived in receive buffer {@code slot} of {@code ch}. */
    void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                boolean first, boolean last, int messageLength) {
        int rail = ch.rail();
        boolean resent = false;
        if (first) {
            dropping[rail] = false;
            if (!delivery.inboundClosed() && delivery.arrived(psn)) {
                // re-sent after a failover, but it arrived before: drop this copy (and its other fragments)
                ch.releaseReceiveBuffer(slot);
                dropping[rail] = !last;
                droppingPsn[rail] = psn;
                return;
            }
            resent = dropStaleCopy(rail, psn);
        } else if (dropping[rail] && droppingPsn[rail] == psn) {
            ch.releaseReceiveBuffer(slot);
            dropping[rail] = !last;
            return;
        }
        if (first && !resent && !messageCredits.onMessageArrived()) {
            ch.releaseReceiveBuffer(slot);
            connection.termination().protocolFailure("peer started message PSN " + psn + " on rail " + rail + " without holding a message credit");
            return;
        }
        if (closedForInput()) {
            ch.releaseReceiveBuffer(slot);
            return;
        }
        if (first && last) {
            ReceivedMessage m = buffers.wholeView(rail, slot);
            m.init(psn, buffer, payloadOffset, payloadLength);
            delivery.offerInOrder(psn, m);
            return;
        }
        AssembledMessage p = partial[rail];
        if (first) {
            if (p != null || messageLength > localMaxMessageBytes) {
                ch.releaseReceiveBuffer(slot);
                connection.termination().protocolFailure(p != null
                    ? "rail " + rail + " started message PSN " + psn + " before finishing PSN " + p.psn()
                    : "peer sent a message of " + messageLength + " bytes but this node accepts at most " + localMaxMessageBytes);
                return;
            }
            p = new AssembledMessage(connection, psn, messageLength);
            assembledOutstanding.incrementAndGet();
            setPartial(rail, p);
        } else if (p == null || p.psn() != psn) {
            ch.releaseReceiveBuffer(slot);
            connection.termination().protocolFailure("rail " + rail + " received a middle fragment of PSN " + psn + " without its first fragment");
            return;
        }
        boolean fits = p.append(buffer, payloadOffset, payloadLength);
        ch.releaseReceiveBuffer(slot);
        if (!fits || (last && !p.isComplete())) {
            connection.termination().protocolFailure("fragments of PSN " + psn + " do not add up to its announced length " + p.lengthBytes());
            return;
        }
        if (last) {
            setPartial(rail, null);
            delivery.offerInOrder(psn, p);
        }
    }

    /**
     * A packed DATA frame of {@code count} messages arrived: straight to the subscriber when it can
     * ({@link InboundDelivery#deliverPackedInOrder}), else message by message through the window.
     */
    void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        buffers.holdPacked(ch, slot, count);
        if (delivery.deliverPackedInOrder(ch, slot, buffer, payloadOffset, firstPsn, count)) {
            return;
        }
        int pos = payloadOffset;
        boolean failedHere = false;
        for (int i = 0; i < count; i++) {
            int len = DataFrameCodec.packedLength(buffer, pos);
            int at = pos + DataFrameCodec.PACKED_PREFIX_BYTES;
            pos = at + len;
            if (failedHere) {
                buffers.releaseShare(ch, slot);
            } else {
                failedHere = !onPackedMessage(ch, slot, buffer, at, len, firstPsn + i);
            }
        }
        // deliver while the frame's views are still in cache, rather than after the whole completion batch
        if (!failedHere) {
            delivery.deliverIfReady();
        }
    }

    /**
     * Message {@code psn} of a packed frame ({@code len} bytes at {@code at}): the same checks as a
     * whole-message DATA frame, delivered as a view of the shared receive buffer.
     *
     * @return false after a protocol failure
     */
    private boolean onPackedMessage(Channel ch, int slot, DirectBuffer buffer, int at, int len, int psn) {
        int rail = ch.rail();
        dropping[rail] = false;
        if (!delivery.inboundClosed() && delivery.arrived(psn)) {
            // re-sent after a failover, but it arrived before: drop this copy
            buffers.releaseShare(ch, slot);
            return true;
        }
        boolean resent = dropStaleCopy(rail, psn);
        if (!resent && !messageCredits.onMessageArrived()) {
            buffers.releaseShare(ch, slot);
            connection.termination().protocolFailure("peer sent message PSN " + psn + " (packed) on rail " + rail + " without holding a message credit");
            return false;
        }
        if (closedForInput()) {
            buffers.releaseShare(ch, slot);
            return true;
        }
        ReceivedMessage v = buffers.lendView(ch);
        v.initPacked(ch, slot, psn, buffer.addressOffset() + at, len);
        delivery.offerInOrder(psn, v);
        return true;
    }

    /**
     * A message's first copy, cut off on another rail by its failure, starts again here: the stale partial
     * copy is dropped, and the message counted once. @return whether there was one
     */
    private boolean dropStaleCopy(int rail, int psn) {
        boolean resent = false;
        for (int r = 0; r < partial.length; r++) {
            AssembledMessage stale = partial[r];
            if (r != rail && stale != null && stale.psn() == psn) {
                setPartial(r, null);
                stale.release();
                resent = true;
            }
        }
        return resent;
    }

    /** Sets the message being reassembled on {@code rail} (null: none), keeping {@link #partialCount}. */
    private void setPartial(int rail, @Nullable AssembledMessage p) {
        if (partial[rail] != null) {
            partialCount--;
        }
        if (p != null) {
            partialCount++;
        }
        partial[rail] = p;
    }

    /** Releases every message part-way in (the inbound side closed). */
    void releasePartials() {
        for (int i = 0; i < partial.length; i++) {
            AssembledMessage p = partial[i];
            if (p != null) {
                setPartial(i, null);
                p.release();
            }
        }
    }

    /** Rail {@code rail} failed: its partial message will come again whole on another rail. */
    void onRailFailed(int rail) {
        AssembledMessage p = partial[rail];
        if (p != null) {
            setPartial(rail, null);
            p.release();
        }
        dropping[rail] = false;
    }

    /**
     * Copies the messages waiting out of order into their own buffers and frees the receive buffers
     * they hold. After a failover the PSNs they wait for come again over the live rails, whose buffers
     * those messages may all hold: without this the re-sent messages would find no credit. Only on a
     * rail failure, so the copy is off the normal data path.
     */
    void spillOutOfOrder() {
        delivery.replaceQueued(m -> {
            if (!(m instanceof ReceivedMessage r)) {
                return m;
            }
            AssembledMessage copy = new AssembledMessage(connection, r.psn(), r.lengthBytes());
            copy.append(r.content(), 0, r.lengthBytes());
            assembledOutstanding.incrementAndGet();
            r.release();
            return copy;
        });
    }
}
