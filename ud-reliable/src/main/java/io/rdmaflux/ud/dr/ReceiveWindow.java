package io.rdmaflux.ud.dr;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

import java.util.ArrayDeque;

/**
 * The receiving half of one peer's DR state (seed 003 &sect;4.2; the ESN and out-of-order queue of seed 000
 * &sect;5.2): the ESN, the VFRAGs held ahead of it, the reassembly of in-order VFRAGs into messages, the
 * messages waiting for the consumer, and the credit limit advertised to the sender.
 *
 * <p><b>Credit</b> (the receive pool this peer may use): the sender may send PSNs below {@link #creditLimit()} =
 * (start PSN of the oldest message the consumer has not taken, or the ESN when none waits) +
 * {@link DrConfig#receiveBufferVfrags()}, never lowered once advertised. A consumer that stops taking
 * messages stops the limit, so its sender stops without a datagram lost; at most
 * {@code 2 * receiveBufferVfrags} VFRAGs of payload are held for the peer.
 *
 * <p><b>Placement</b> ({@link #placement}): a message whose first VFRAG comes in order while no earlier message
 * waits is offered to the owner's {@link MessagePlacement}; if it gives a destination, every VFRAG's payload is
 * copied there as it comes in order (from the datagram slot itself, or from the copy held when it came early) and
 * the message is never put on the heap nor queued for {@link #poll()}.
 *
 * <p>Not thread-safe.
 */
final class ReceiveWindow {
    /** {@link #accept} results. */
    static final int NEW_IN_ORDER = 0;
    static final int NEW_OUT_OF_ORDER = 1;
    static final int DUPLICATE = 2;
    static final int OUT_OF_WINDOW = 3;

    private record Message(byte[] bytes, int startPsn, int endPsn) {
    }

    private final DrConfig config;
    private final int mask;
    private final byte[][] held;
    private final byte[] heldFlags;
    private final int[] heldMessageLength;
    private final boolean[] present;
    private final ArrayDeque<Message> ready = new ArrayDeque<>();
    private int esn;
    private int limit;
    private int budget;
    private int heldCount;
    private byte @Nullable [] assembling;
    /** The destination of the message being placed ({@link MessagePlacement#begin}), or null. */
    private @Nullable MutableDirectBuffer placing;
    private @Nullable MessagePlacement placement;
    private final UnsafeBuffer heldView = new UnsafeBuffer(new byte[0]);
    private int assemblingLength;
    private long messagesPlaced;
    /** A delivered message's array its owner handed back ({@link #recycle}), reused for the next of the same length. */
    private byte[] spare;
    private int assemblingOffset;
    private int assemblingStart;
    private boolean finReceived;
    private int finEndPsn;

    ReceiveWindow(DrConfig config) {
        this.config = config;
        int cap = Integer.highestOneBit(Math.max(1, config.receiveBufferVfrags() - 1)) << 1;
        this.mask = cap - 1;
        this.held = new byte[cap][];
        this.heldFlags = new byte[cap];
        this.heldMessageLength = new int[cap];
        this.present = new boolean[cap];
        this.esn = config.firstPsn();
        this.budget = config.receiveBufferVfrags();
        this.limit = esn + config.initialCreditVfrags();
    }

    /**
     * A DATA VFRAG arrived (CRC already checked).
     *
     * @return {@link #NEW_IN_ORDER}, {@link #NEW_OUT_OF_ORDER}, {@link #DUPLICATE} or {@link #OUT_OF_WINDOW}
     * @throws DrProtocolException if the VFRAGs do not form a message (a length that disagrees, too large)
     */
    int accept(int psn, int flags, int messageLength, DirectBuffer src, int offset, int length) {
        if (psn - esn < 0) {
            return DUPLICATE;
        }
        if (psn - limit >= 0) {
            return OUT_OF_WINDOW;
        }
        if (psn != esn) {
            if (config.mode() == RetransmitMode.GO_BACK_N) {
                return OUT_OF_WINDOW;
            }
            int i = psn & mask;
            if (present[i]) {
                return DUPLICATE;
            }
            byte[] copy = new byte[length];
            src.getBytes(offset, copy, 0, length);
            held[i] = copy;
            heldFlags[i] = (byte) flags;
            heldMessageLength[i] = messageLength;
            present[i] = true;
            heldCount++;
            return NEW_OUT_OF_ORDER;
        }
        take(psn, flags, messageLength, src, offset, length);
        for (int i = esn & mask; present[i]; i = esn & mask) {
            byte[] b = held[i];
            held[i] = null;
            present[i] = false;
            heldCount--;
            heldView.wrap(b);
            take(esn, heldFlags[i], heldMessageLength[i], heldView, 0, b.length);
        }
        return NEW_IN_ORDER;
    }

    private void take(int psn, int flags, int messageLength, DirectBuffer src, int offset, int length) {
        boolean inMessage = assembling != null || placing != null;
        if ((flags & DrDatagram.FLAG_FIN) != 0) {
            if (inMessage) {
                throw new DrProtocolException("FIN at PSN " + Integer.toUnsignedString(psn) + " inside the message that started at PSN "
                    + Integer.toUnsignedString(assemblingStart));
            }
            finReceived = true;
            finEndPsn = psn + 1;
            esn = psn + 1;
            return;
        }
        if ((flags & DrDatagram.FLAG_FIRST) != 0) {
            if (inMessage) {
                throw new DrProtocolException("a message starts at PSN " + Integer.toUnsignedString(psn)
                    + " before the one from PSN " + Integer.toUnsignedString(assemblingStart) + " ended");
            }
            if (messageLength < 0 || messageLength > config.maxMessageBytes()) {
                throw new DrProtocolException("message length " + messageLength + " at PSN " + Integer.toUnsignedString(psn)
                    + " is outside [0, maxMessageBytes=" + config.maxMessageBytes() + "]");
            }
            // only the next message the owner would take may go straight to its memory: none before it waits
            MessagePlacement p = placement;
            MutableDirectBuffer dst = p != null && ready.isEmpty() && length <= messageLength
                ? p.begin(messageLength, src, offset, length) : null;
            if (dst != null) {
                placing = dst;
            } else {
                byte[] reuse = spare;
                if (reuse != null && reuse.length == messageLength) {
                    spare = null;
                    assembling = reuse;
                } else {
                    assembling = new byte[messageLength];
                }
            }
            assemblingLength = messageLength;
            assemblingOffset = 0;
            assemblingStart = psn;
        } else if (!inMessage) {
            throw new DrProtocolException("VFRAG at PSN " + Integer.toUnsignedString(psn) + " continues no message");
        }
        if (length > assemblingLength - assemblingOffset) {
            throw new DrProtocolException("VFRAG at PSN " + Integer.toUnsignedString(psn) + " overruns its message of "
                + assemblingLength + " bytes");
        }
        MutableDirectBuffer dst = placing;
        if (dst != null) {
            int skip = placement.skipBytes();
            int from = Math.max(assemblingOffset, skip);
            int n = assemblingOffset + length - from;
            if (n > 0) {
                dst.putBytes(from - skip, src, offset + (from - assemblingOffset), n);
            }
        } else {
            src.getBytes(offset, assembling, assemblingOffset, length);
        }
        assemblingOffset += length;
        esn = psn + 1;
        if ((flags & DrDatagram.FLAG_LAST) != 0) {
            if (assemblingOffset != assemblingLength) {
                throw new DrProtocolException("message from PSN " + Integer.toUnsignedString(assemblingStart) + " ended after "
                    + assemblingOffset + " of its " + assemblingLength + " bytes");
            }
            if (dst != null) {
                placing = null;
                messagesPlaced++;
                placement.placed();
            } else {
                ready.add(new Message(assembling, assemblingStart, esn));
                assembling = null;
            }
        }
    }

    /** Sets where messages go instead of the heap, or null (each reassembled on the heap and polled). */
    void placement(@Nullable MessagePlacement p) {
        if (placing != null) {
            throw new IllegalStateException("a message is being placed; change the placement between messages");
        }
        placement = p;
    }

    /** The endpoint failed: a message being placed will not complete ({@link MessagePlacement#abandoned()}). */
    void abandon() {
        MessagePlacement p = placement;
        if (placing != null && p != null) {
            placing = null;
            p.abandoned();
        }
    }

    /** Whole messages handed to the {@link MessagePlacement} (not polled). */
    long messagesPlaced() {
        return messagesPlaced;
    }

    /** The next whole message in PSN order, or null; taking it frees its VFRAGs' credit. */
    byte[] poll() {
        Message m = ready.poll();
        return m == null ? null : m.bytes;
    }

    /**
     * Takes back the array of a message {@link #poll()} returned, which its owner no longer uses, to reassemble the next
     * message of the same length into (bulk transfers repeat lengths; a fresh array of a MiB costs its zeroing).
     * Only arrays of at least 4 KiB are kept, one at a time.
     */
    void recycle(byte[] delivered) {
        if (delivered.length >= 4096) {
            spare = delivered;
        }
    }

    /** Whole messages waiting for the consumer. */
    int readyMessages() {
        return ready.size();
    }

    /** Whether the FIN arrived and every message before it was taken. */
    boolean finished() {
        return finReceived && ready.isEmpty();
    }

    boolean finReceived() {
        return finReceived;
    }

    int esn() {
        return esn;
    }

    /** VFRAGs held ahead of the ESN. */
    int heldOutOfOrder() {
        return heldCount;
    }

    /** The credit limit now (monotonic): the sender may send PSNs below it. */
    int creditLimit() {
        int base = ready.isEmpty() ? esn : ready.peek().startPsn;
        if (base + budget - limit > 0) {
            limit = base + budget;
        }
        return limit;
    }

    /**
     * The VFRAGs of credit this peer may hold from now on, clamped to [1, receiveBufferVfrags]. A smaller budget
     * takes effect as the peer's held VFRAGs are consumed: a limit already advertised is never taken back.
     */
    void budget(int vfrags) {
        budget = Math.max(1, Math.min(config.receiveBufferVfrags(), vfrags));
    }

    int budget() {
        return budget;
    }

    /** The SACK bitmap: bit i set when PSN {@code esn + 1 + i} is held. */
    long sack() {
        if (heldCount == 0) {
            return 0;
        }
        long bits = 0;
        for (int b = 0; b < 64; b++) {
            int psn = esn + 1 + b;
            if (psn - limit >= 0) {
                break;
            }
            if (present[psn & mask]) {
                bits |= 1L << b;
            }
        }
        return bits;
    }
}
