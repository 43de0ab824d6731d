package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.internal.buffer.GrowingMpscQueue;
import org.jspecify.annotations.Nullable;

import java.util.Arrays;
import java.util.List;

/**
 * Connection stage: the receive buffers the channels lent to the connection, and the message views
 * over them. A buffer returns to its channel ({@link Channel#releaseReceiveBuffer}) when the last
 * message in it is released by the application &mdash; in any order (seed 001 &sect;4.4: buffers are
 * freed out of order) &mdash; from the progress thread directly, or from other threads through a
 * lock-free queue drained on the next duty cycle.
 *
 * <p>A whole-message buffer has its own view ({@link ReceivedMessage}, one per slot); the messages of a
 * packed frame get pooled views, lent last in first out so the handful in use stays in cache.
 *
 * <p><b>Concurrency:</b> {@link #onReleased} on any thread; everything else on the progress thread.
 */
final class ReceiveBuffers {
    private static final int RAIL_BITS = 5;
    /**
     * Entries the release queues start with: the worst case (every message of every receive buffer
     * released within one duty cycle) is tens of KiB per connection, and most of many peers never come
     * near it, so they start small and double as needed (seed 003 &sect;1.1: memory per peer near constant).
     */
    static final int INITIAL_RELEASE_QUEUE = 16;

    private final DefaultRdmaConnection connection;
    private final Channel[] channels;
    private final ReceivedMessage[][] wholeViews;
    /** Per rail and receive buffer: messages of a packed frame not yet released (0 for an unpacked frame). */
    private final int[][] slotShares;
    /**
     * Messages held in packed receive buffers beyond one per buffer: message credits are granted against
     * {@code messageCreditsPerBuffer} (of the node; default 8) times the free buffers minus these, so
     * unreleased messages plus message credits never exceed that many per DATA buffer, packed or not (with
     * 1, the bound of the unpacked protocol, kept exact).
     */
    private int packedExtraHeld;
    /**
     * Views lent to the messages of packed frames, last in first out. Grows only while more packed
     * messages are held at once than ever before (at most the receive buffers times
     * {@link DataFrameCodec#MAX_PACKED_MESSAGES}).
     */
    private ReceivedMessage[] viewPool = new ReceivedMessage[DataFrameCodec.MAX_PACKED_MESSAGES];
    private int viewPoolSize;
    private int viewsCreated;
    /** Every pooled view created, lent or not: node close finds the ones the application still holds. */
    private ReceivedMessage[] allViews = new ReceivedMessage[DataFrameCodec.MAX_PACKED_MESSAGES];

    /** Released on other threads; grows from {@link #INITIAL_RELEASE_QUEUE} up to one entry per message that fits. */
    private final GrowingMpscQueue<ReceivedMessage> released;
    /**
     * Receive buffer shares released on the progress thread itself (a subscriber that releases in
     * {@code onNext}), {@code slot << RAIL_BITS | rail}: handed back without the lock-free queue's CAS,
     * at most one entry per message held in a receive buffer (grown by doubling up to that).
     */
    private int[] releasedHere;
    private final int maxReleasedHere;
    private int releasedHereCount;

    /**
     * The packed frame {@link InboundDelivery} hands out now: its messages released meanwhile by the
     * delivering thread are only counted, and their buffer shares returned at once when the frame is
     * done; the view of the message in {@code onNext} ({@code deliveringPsn}), if released there, carries
     * the next message. Plain fields: only the delivering thread acts on them, and a thread can only see
     * itself in {@code deliveringThread} while it is delivering (it wrote null after its last frame, and a
     * read never sees a write older than the reader's own later one).
     */
    private @Nullable Thread deliveringThread;
    private @Nullable Channel deliveringChannel;
    private int deliveringSlot;
    private int deliveringPsn;
    private boolean deliveredReleased;
    private int releasedInFrame;

    ReceiveBuffers(DefaultRdmaConnection connection, Channel[] channels) {
        if (channels.length > 1 << RAIL_BITS) {
            throw new IllegalArgumentException("at most " + (1 << RAIL_BITS) + " rails per connection but it was " + channels.length);
        }
        this.connection = connection;
        this.channels = channels;
        this.wholeViews = new ReceivedMessage[channels.length][];
        this.slotShares = new int[channels.length][];
        int slots = 0;
        for (Channel ch : channels) {
            // the views are made when their buffer first carries a message (a connection that never
            // receives has none)
            wholeViews[ch.rail()] = new ReceivedMessage[ch.receiveSlots()];
            slotShares[ch.rail()] = new int[ch.receiveSlots()];
            slots += ch.receiveSlots();
        }
        int most = Math.max(2, slots * DataFrameCodec.MAX_PACKED_MESSAGES);
        this.released = new GrowingMpscQueue<>(Math.min(INITIAL_RELEASE_QUEUE, most), most);
        this.maxReleasedHere = slots * DataFrameCodec.MAX_PACKED_MESSAGES;
        this.releasedHere = new int[Math.min(INITIAL_RELEASE_QUEUE, maxReleasedHere)];
    }

    /** The view of whole-message buffer {@code slot} of {@code rail} (progress thread). */
    ReceivedMessage wholeView(int rail, int slot) {
        ReceivedMessage v = wholeViews[rail][slot];
        return v != null ? v : newWholeView(rail, slot);
    }

    private ReceivedMessage newWholeView(int rail, int slot) {
        ReceivedMessage v = new ReceivedMessage(connection, channels[rail], slot);
        wholeViews[rail][slot] = v;
        return v;
    }

    /** The capacities of the release queues now (other threads', this thread's); tests. */
    int[] releaseQueueCapacities() {
        return new int[] {released.capacity(), releasedHere.length};
    }

    /** Receive buffer {@code slot} of {@code ch} now holds a packed frame of {@code count} messages. */
    void holdPacked(Channel ch, int slot, int count) {
        slotShares[ch.rail()][slot] = count;
        packedExtraHeld += count - 1;
    }

    int packedExtraHeld() {
        return packedExtraHeld;
    }

    /** The final release of a message in a receive buffer; any thread. */
    void onReleased(ReceivedMessage m) {
        if (Thread.currentThread() == deliveringThread && m.pooled && m.subchannel() == deliveringChannel
            && m.slot() == deliveringSlot) {
            // released in onNext while its frame is delivered: counted, returned with the frame's end
            releasedInFrame++;
            if (m.psn() == deliveringPsn) {
                deliveredReleased = true;
            } else {
                returnView(m);
            }
            return;
        }
        if (connection.onProgressThread()) {
            // the buffer share is returned by the next drain (after delivery, before credits are granted);
            // a pooled view is free at once for the next message
            if (releasedHereCount == releasedHere.length) {
                growReleasedHere();
            }
            releasedHere[releasedHereCount++] = m.slot() << RAIL_BITS | m.subchannel().rail();
            if (m.pooled) {
                returnView(m);
            }
        } else {
            if (!released.offer(m)) {
                throw new IllegalStateException(connection.name() + ": more messages released at once than its receive buffers hold ("
                    + released.capacity() + ")");
            }
            connection.wakeUp();
        }
    }

    private void growReleasedHere() {
        if (releasedHere.length >= maxReleasedHere) {
            throw new IllegalStateException(connection.name() + ": more messages released at once than its receive buffers hold ("
                + maxReleasedHere + ")");
        }
        releasedHere = Arrays.copyOf(releasedHere, Math.min(releasedHere.length * 2, maxReleasedHere));
    }

    /** Returns the buffers of released messages (progress thread). @return shares returned */
    int drainReleased() {
        int work = 0;
        ReceivedMessage m;
        while ((m = released.poll()) != null) {
            releaseShare(m.subchannel(), m.slot());
            if (m.pooled) {
                returnView(m);
            }
            work++;
        }
        // releaseShare never releases a message, so nothing is added while this runs
        int n = releasedHereCount;
        int[] here = releasedHere;
        for (int i = 0; i < n; i++) {
            int e = here[i];
            releaseShare(channels[e & (1 << RAIL_BITS) - 1], e >>> RAIL_BITS);
        }
        releasedHereCount = 0;
        return work + n;
    }

    /** A pooled view for a message of a packed frame (progress thread). */
    ReceivedMessage lendView(Channel ch) {
        int n = viewPoolSize;
        if (n > 0) {
            viewPoolSize = n - 1;
            ReceivedMessage v = viewPool[n - 1];
            viewPool[n - 1] = null;
            return v;
        }
        ReceivedMessage v = new ReceivedMessage(connection, ch);
        if (viewsCreated == allViews.length) {
            allViews = Arrays.copyOf(allViews, viewsCreated * 2);
        }
        allViews[viewsCreated++] = v;
        return v;
    }

    void returnView(ReceivedMessage v) {
        ReceivedMessage[] pool = viewPool;
        if (viewPoolSize == pool.length) {
            pool = Arrays.copyOf(pool, Math.max(pool.length * 2, viewsCreated));
            viewPool = pool;
        }
        pool[viewPoolSize++] = v;
    }

    /** Pooled views created so far: the most packed messages held at once (progress thread; tests). */
    int viewsCreated() {
        return viewsCreated;
    }

    /** Starts handing out the packed frame in {@code slot} of {@code ch} on this thread. */
    void beginFrame(Channel ch, int slot) {
        deliveringThread = Thread.currentThread();
        deliveringChannel = ch;
        deliveringSlot = slot;
        releasedInFrame = 0;
    }

    /** The message of PSN {@code psn} goes to {@code onNext} now. */
    void delivering(int psn) {
        deliveringPsn = psn;
        deliveredReleased = false;
    }

    /** Whether the message just handed to {@code onNext} was released there (its view may carry the next). */
    boolean deliveredReleased() {
        return deliveredReleased;
    }

    /** The thread stops handing out the frame begun by {@link #beginFrame} (in a finally block). */
    void endFrame() {
        deliveringThread = null;
        deliveringChannel = null;
    }

    /** After {@link #endFrame}: returns the shares the frame's messages released while it was handed out. */
    void returnFrameShares(Channel ch, int slot) {
        if (releasedInFrame > 0) {
            releaseShares(ch, slot, releasedInFrame);
        }
    }

    /** {@code k} messages in receive buffer {@code slot} were released: the buffer returns with the last of them. */
    void releaseShares(Channel ch, int slot, int k) {
        int[] shares = slotShares[ch.rail()];
        int held = shares[slot];
        if (held > k) {
            shares[slot] = held - k;
            packedExtraHeld -= k;
            return;
        }
        packedExtraHeld -= held - 1;
        shares[slot] = 0;
        ch.releaseReceiveBuffer(slot);
    }

    /** One message in receive buffer {@code slot} was released: the buffer returns once all its messages are. */
    void releaseShare(Channel ch, int slot) {
        int[] shares = slotShares[ch.rail()];
        if (shares[slot] > 1) {
            shares[slot]--;
            packedExtraHeld--;
            return;
        }
        shares[slot] = 0;
        ch.releaseReceiveBuffer(slot);
    }

    /** Receive buffers the application holds over every rail. */
    int held() {
        int held = 0;
        for (Channel ch : channels) {
            held += ch.receiveBuffersHeld();
        }
        return held;
    }

    /**
     * Messages in receive buffers whose reference count is above 0 (held by the application), with up
     * to {@code examples}' capacity of examples.
     */
    int heldByApplication(List<String> examples) {
        int held = 0;
        for (ReceivedMessage[] rail : wholeViews) {
            for (ReceivedMessage m : rail) {
                held += heldExample(m, examples);
            }
        }
        for (int i = 0; i < viewsCreated; i++) {
            held += heldExample(allViews[i], examples);
        }
        return held;
    }

    static int heldExample(@Nullable RdmaMessage m, List<String> examples) {
        if (m == null || m.refCnt() <= 0) {
            return 0;
        }
        if (examples.size() < RdmaLeakReporter.Leak.MAX_EXAMPLES) {
            examples.add(m.toString());
        }
        return 1;
    }
}
