package io.rdmaflux.core;

import io.rdmaflux.core.buffer.MessageBufferPool;
import io.rdmaflux.core.channel.RcSubchannel;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelListener;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.credit.MessageCredits;
import io.rdmaflux.core.credit.SendCredits;
import io.rdmaflux.core.frame.CtsFrameCodec;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.reorder.ReorderWindow;
import io.rdmaflux.core.reorder.ReorderWindowOverflowException;
import io.rdmaflux.verbs.ProgressAgent;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.function.Consumer;

/**
 * The connection engine: one {@link ProgressAgent} per connection that owns every piece of
 * protocol state (subchannels, credits, PSN/ESN, send queue) on the progress thread. Other threads
 * reach it only through atomics and lock-free queues (demand, released messages, new sends, close
 * requests).
 *
 * <h2>Large messages: zero-copy rendezvous</h2>
 * A message longer than the node's rendezvous threshold goes by the RDMA-write rendezvous of seed 001
 * &sect;3 (Fig. 2) instead of as DATA fragments:
 * <ol>
 *   <li>the sender copies it once into a registered staging slot of its node (or lets a
 *       {@link RdmaMessage#write writer} fill the slot in place), and sends an RTS (PSN, length) on the
 *       rail the scheduler selects; the RTS takes one message credit and one buffer credit;</li>
 *   <li>the receiver takes a registered message buffer from its node's bounded pool (registered once:
 *       no registration per message) and replies CTS (PSN, address, rkey). It grants buffers in PSN
 *       order and only to an RTS whose earlier PSNs have all arrived, so a buffer is never held by a
 *       message that cannot be delivered before one still waiting for a buffer (no deadlock with a
 *       pool of one);</li>
 *   <li>the sender splits the message with the scheduler's {@code stripe(..)} when it is at least
 *       {@code stripeThresholdBytes()} long (else it goes whole on the RTS's rail), posts one RDMA WRITE
 *       per stripe on its rail, each at its offset, then a FIN on the same QP (seed 000 &sect;5.3: one
 *       FIN per subchannel used; RC delivers it after the WRITE's data);</li>
 *   <li>the receiver delivers a view of the message buffer in PSN order (through the ESN window) once
 *       every FIN arrived; its release returns the buffer to the pool. The sender reports each stripe to
 *       {@code onStripeCompleted} and the message once to {@code onMessageCompleted} (the completion
 *       filter), and counts it delivered only when every WRITE completed; a message the receiver
 *       discarded (a CTS with DISCARD) goes to {@code onMessageDiscarded} instead.</li>
 * </ol>
 * Why a staging copy and not a registration cache for the user's memory: most messages live on the
 * Java heap ({@code byte[]}), which cannot be registered because the GC moves it; and a cache keyed by
 * the address of direct buffers cannot know when the application frees or reuses one (Java has no free
 * hook), which is how pin-down caches go stale. One copy into memory registered once is safe for every
 * message kind and leaves one more copy, the NIC's WRITE, with none at the receiver. Applications that
 * want no copy at all register their memory explicitly ({@link RdmaNode#registerMemory}, the lifetime
 * is then theirs to manage) and send {@link RdmaMessage#of(io.rdmaflux.verbs.MemoryRegion, long, int)}
 * messages: those are written straight from it and kept until every stripe completed.
 */
final class DefaultRdmaConnection implements RdmaConnection, ProgressAgent, SubchannelListener {
    private static final int CLOSE_NONE = 0;
    /** Send token of a packed DATA frame: this bit, the count in bits 32..47, the first PSN in bits 0..31. */
    private static final long PACKED_TOKEN = 1L << 62;
    private static final int CLOSE_GRACEFUL = 1;
    private static final int CLOSE_ABORT = 2;
    /**
     * The most messages a {@code send} on a closed connection takes from its publisher (and releases) before
     * cancelling it: enough for any array or list of messages built beforehand (which a cancel alone would
     * strand), and an end for a publisher that never completes, which would otherwise hold the caller's
     * thread for good.
     */
    static final long CLOSED_SEND_DRAIN_LIMIT = 1 << 16;

    private final RdmaNode node;
    private final String name;
    private final RcSubchannel[] subchannels;
    private final List<RcSubchannel> subchannelList;
    private final SubchannelScheduler scheduler;
    private final int peerMaxMessageBytes;
    private final int localMaxMessageBytes;
    private final int sendQueue;
    private final int sendOpQueueCapacity;
    private final int rendezvousThreshold;
    private final @Nullable MessageBufferPool sendPool;
    private final @Nullable MessageBufferPool receivePool;
    private final RendezvousSends rvSends;
    private final RendezvousReceives rvReceives;
    private final RendezvousMessage[] rvMessages;
    private final AtomicInteger rvOutstanding = new AtomicInteger();
    private int ctsRail;
    private int railFailures;
    private long packedMessagesTakenBack;
    private long railDownToSend;
    private boolean creditResync;
    private final ReceivedMessage[][] receivedMessages;
    /**
     * Views lent to the messages of packed frames, last in first out: a view released on the progress
     * thread (a subscriber that releases in {@code onNext}) carries the next message at once, so the
     * handful of views in use stays in cache whatever the number of receive buffers. Grows only while
     * more packed messages are held at once than ever before (at most the receive buffers times
     * {@link DataFrameCodec#MAX_PACKED_MESSAGES}).
     */
    private ReceivedMessage[] viewPool = new ReceivedMessage[DataFrameCodec.MAX_PACKED_MESSAGES];
    private int viewPoolSize;
    private int viewsCreated;
    /** Every pooled view created, lent or not: node close finds the ones the application still holds. */
    private ReceivedMessage[] allViews = new ReceivedMessage[DataFrameCodec.MAX_PACKED_MESSAGES];
    /** Per rail and receive buffer: messages of a packed frame not yet released (0 for an unpacked frame). */
    private final int[][] slotShares;
    /**
     * Messages held in packed receive buffers beyond one per buffer: message credits are granted against
     * free buffers minus these, so unreleased messages plus message credits never exceed the DATA buffers,
     * packed or not (the bound of the unpacked protocol, kept exact).
     */
    private int packedExtraHeld;

    // inputs from other threads
    private final ManyToOneConcurrentArrayQueue<ReceivedMessage> released;
    private final ManyToOneConcurrentLinkedQueue<SendOp> newSends = new ManyToOneConcurrentLinkedQueue<>();
    private final AtomicLong newDemand = new AtomicLong();
    private final AtomicInteger closeRequest = new AtomicInteger(CLOSE_NONE);
    private final AtomicBoolean receiveSubscribed = new AtomicBoolean();
    private final AtomicInteger assembledOutstanding = new AtomicInteger();
    private volatile @Nullable CoreSubscriber<? super RdmaMessage> receiver;
    private volatile boolean receiveCancelled;
    private volatile boolean badRequest;
    /** The first {@code n <= 0} given to {@code request(n)} of the receive subscription; published by {@link #badRequest}. */
    private long badRequestN;
    private volatile boolean disposed;
    private final Sinks.Empty<Void> onClose = Sinks.empty();

    // progress-thread state: receive side
    private final ReorderWindow<RdmaMessage> reorder;
    private final ArrayDeque<RdmaMessage> ready = new ArrayDeque<>();
    private final AssembledMessage[] partial;
    /** Entries of {@link #partial} not null: kept where they are set, so granting credits reads no array. */
    private int partialCount;
    private final Consumer<RdmaMessage> toReady = ready::add;
    private long demand;
    private boolean inboundClosed;
    private boolean receiveTerminated;
    private final AtomicBoolean terminalSent = new AtomicBoolean();
    private volatile boolean receiveTerminalReady;
    private volatile @Nullable Throwable receiveError;
    private int peerCloseMask;
    private int peerCloseExpected;
    /** Rails probed while the peer's CLOSE was missing on them ({@link #probeSilentRails}). */
    private int closeProbed;
    /** Rails the peer's last frame (FINAL or abort CLOSE) came on, and the rails it sends it on. */
    private int peerFinalMask;
    private int peerFinalExpected;
    /** Rails still owed the news that the inbound side closed (a CREDIT frame with FLAG_INBOUND_CLOSED). */
    private int inboundNoticeRails;
    /** The first PSN the subscriber did not get, carried by that news. */
    private int firstUndeliveredPsn;
    /** The peer closed its inbound side: messages from {@link #peerFirstUndelivered} on are never delivered. */
    private boolean peerInboundClosed;
    private int peerFirstUndelivered;
    private final boolean[] dropping;
    private final int[] droppingPsn;
    private int peerNextPsn = -1;
    private @Nullable Throwable failure;

    // progress-thread state: send side
    private final ArrayDeque<SendOp> sendOps = new ArrayDeque<>();
    private final ArrayDeque<SendOp> inflightOps = new ArrayDeque<>();
    private final SendCredits sendCredits;
    private final MessageCredits messageCredits;
    private final long[] messageStartNs;
    /** Small messages sent and not yet completed, kept for re-sending after a rail failure; by PSN. */
    private final @Nullable RdmaMessage[] inflightMessages;
    private final int[] messagePsn;
    private final int[] messageRail;
    private final int[] resendPsns;
    private int resendCount;
    private boolean resending;
    private final int[] messageLength;
    private final int inflightMask;
    private @Nullable RdmaMessage current;
    private @Nullable SendOp currentOp;
    private int currentOffset;
    private int currentRail;
    private int currentPsn;
    private int nextPsn;
    /** The graceful close started going out: no message is sent after it. */
    private boolean localCloseSent;
    /** The rails this side's CLOSE (and FINAL) go on, fixed when the close starts. */
    private int localCloseMask;
    /** Every rail of {@link #localCloseMask} carried this side's FINAL. */
    private boolean localFinalSent;
    private boolean terminated;
    private volatile boolean resourcesFreed;

    // counters: written by the progress thread only, with release stores (no fence per message), read by metrics()
    private static final AtomicLongFieldUpdater<DefaultRdmaConnection> MESSAGES_SENT =
        AtomicLongFieldUpdater.newUpdater(DefaultRdmaConnection.class, "messagesSent");
    private static final AtomicLongFieldUpdater<DefaultRdmaConnection> MESSAGES_DELIVERED =
        AtomicLongFieldUpdater.newUpdater(DefaultRdmaConnection.class, "messagesDelivered");
    private static final AtomicLongFieldUpdater<DefaultRdmaConnection> MESSAGES_RECEIVED =
        AtomicLongFieldUpdater.newUpdater(DefaultRdmaConnection.class, "messagesReceived");
    private volatile long messagesSent;
    private volatile long messagesDelivered;
    private volatile long messagesReceived;
    private volatile long outOfOrder;
    /** The duty cycle's clock reading: completion times are taken from it, not from a clock read per message. */
    private long cycleNs;
    /**
     * Receive buffer shares released on the progress thread itself (a subscriber that releases in
     * {@code onNext}), {@code slot << RAIL_BITS | rail}: handed back without the lock-free queue's CAS,
     * at most one entry per message held in a receive buffer.
     */
    private final int[] releasedHere;
    private int releasedHereCount;
    /**
     * The packed frame {@link #deliverPackedInOrder} hands out now: its messages released meanwhile by
     * the delivering thread are only counted, and their buffer shares returned at once when the frame is
     * done; the view of the message in {@code onNext} ({@code deliveringPsn}), if released there, carries
     * the next message. Plain fields: only the delivering thread acts on them, and a thread can only see
     * itself in {@code deliveringThread} while it is delivering (it wrote null after its last frame, and a
     * read never sees a write older than the reader's own later one).
     */
    private @Nullable Thread deliveringThread;
    private @Nullable RcSubchannel deliveringSubchannel;
    private int deliveringSlot;
    private int deliveringPsn;
    private boolean deliveredReleased;
    private int releasedInFrame;
    private static final int RAIL_BITS = 5;

    DefaultRdmaConnection(RdmaNode node, String name, RcSubchannel[] subchannels, SubchannelScheduler scheduler,
                          int peerMaxMessageBytes, int localMaxMessageBytes, int sendQueue, int reorderWindow,
                          int creditThreshold, boolean peerRendezvous) {
        this.node = node;
        this.name = name;
        this.subchannels = subchannels;
        this.subchannelList = List.of(subchannels);
        this.scheduler = scheduler;
        this.peerMaxMessageBytes = peerMaxMessageBytes;
        this.localMaxMessageBytes = localMaxMessageBytes;
        this.sendQueue = sendQueue;
        this.sendCredits = new SendCredits(sendQueue);
        this.messageCredits = new MessageCredits(creditThreshold);
        this.reorder = new ReorderWindow<>(0, reorderWindow);
        this.partial = new AssembledMessage[subchannels.length];
        this.receivedMessages = new ReceivedMessage[subchannels.length][];
        this.slotShares = new int[subchannels.length][];
        int slots = 0;
        int sendSlots = 0;
        int peerBuffers = 0;
        for (RcSubchannel sc : subchannels) {
            sc.listener(this);
            sc.connectionCredits(messageCredits, sendCredits);
            ReceivedMessage[] msgs = new ReceivedMessage[sc.receiveSlots()];
            for (int i = 0; i < msgs.length; i++) {
                msgs[i] = new ReceivedMessage(this, sc, i);
            }
            receivedMessages[sc.rail()] = msgs;
            slotShares[sc.rail()] = new int[msgs.length];
            slots += msgs.length;
            sendSlots += sc.sendBufferCount();
            peerBuffers += sc.peerReceiveBuffers();
        }
        this.released = new ManyToOneConcurrentArrayQueue<>(Math.max(2, slots * DataFrameCodec.MAX_PACKED_MESSAGES));
        this.releasedHere = new int[slots * DataFrameCodec.MAX_PACKED_MESSAGES];
        this.sendOpQueueCapacity = peerBuffers + sendQueue;
        // PSNs not yet completed at this side span at most the messages the send slots carry (packed frames
        // carry several) plus what the peer's reorder window admits
        int ring = Integer.highestOneBit(Math.max(2, sendSlots * DataFrameCodec.MAX_PACKED_MESSAGES + reorderWindow) * 2);
        this.messageStartNs = new long[ring];
        this.inflightMessages = new RdmaMessage[ring];
        this.messagePsn = new int[ring];
        this.messageRail = new int[ring];
        this.resendPsns = new int[ring];
        this.dropping = new boolean[subchannels.length];
        this.droppingPsn = new int[subchannels.length];
        this.peerCloseExpected = subchannels.length == 32 ? -1 : (1 << subchannels.length) - 1;
        this.peerFinalExpected = peerCloseExpected;
        this.messageLength = new int[ring];
        this.inflightMask = ring - 1;
        boolean rendezvous = node.rendezvousBuffers() > 0;
        // large messages go by rendezvous only to a peer that accepts RTS; else as DATA fragments
        this.sendPool = rendezvous && peerRendezvous ? node.rendezvousPool(false) : null;
        this.receivePool = rendezvous ? node.rendezvousPool(true) : null;
        this.rendezvousThreshold = node.rendezvousThresholdBytes();
        // staged messages are bounded by the node's staging pool; registered ones by these entries
        this.rvSends = new RendezvousSends(2 * node.rendezvousBuffers(), subchannels.length);
        this.rvReceives = new RendezvousReceives(reorderWindow);
        this.rvMessages = new RendezvousMessage[Math.max(1, node.rendezvousBuffers())];
        this.stripeScratch = new long[subchannels.length];
    }

    private final long[] stripeScratch;

    String name() {
        return name;
    }

    /** Work was handed in from another thread: the progress thread stops idling (a fence and a volatile read if busy). */
    void wakeUp() {
        node.wake();
    }

    // ---------------------------------------------------------------- public API (any thread)

    @Override
    public Mono<Void> send(Publisher<? extends RdmaMessage> messages) {
        return Mono.create(sink -> {
            SendOp op = new SendOp(this, sink, sendOpQueueCapacity);
            sink.onCancel(op::cancelFromUser);
            if (disposed) {
                sink.error(new ConnectionClosedException("send on " + name + " which is closed", false));
                reactor.util.context.Context context = reactor.util.context.Context.of(sink.contextView());
                Flux.from(messages).contextWrite(context).take(CLOSED_SEND_DRAIN_LIMIT, true)
                    .subscribe(m -> SendOp.discard(m, context), e -> { }, () -> { }, s -> s.request(Long.MAX_VALUE));
                return;
            }
            messages.subscribe(op);
            newSends.offer(op);
            wakeUp();
        });
    }

    @Override
    public Flux<RdmaMessage> receive() {
        return new ReceiveFlux();
    }

    @Override
    public Mono<Void> onClose() {
        return onClose.asMono();
    }

    @Override
    public void close() {
        closeRequest.compareAndSet(CLOSE_NONE, CLOSE_GRACEFUL);
        disposed = true;
        wakeUp();
    }

    @Override
    public void abort() {
        closeRequest.set(CLOSE_ABORT);
        disposed = true;
        wakeUp();
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    @Override
    public int maxMessageBytes() {
        return peerMaxMessageBytes;
    }

    @Override
    public List<? extends Subchannel> subchannels() {
        return subchannelList;
    }

    @Override
    public ConnectionMetrics metrics() {
        int held = 0;
        for (RcSubchannel sc : subchannels) {
            held += sc.receiveBuffersHeld();
        }
        EnumMap<FrameType, Long> sent = new EnumMap<>(FrameType.class);
        EnumMap<FrameType, Long> received = new EnumMap<>(FrameType.class);
        for (FrameType t : FrameType.values()) {
            long s = 0;
            long r = 0;
            for (RcSubchannel sc : subchannels) {
                s += sc.framesSent(t);
                r += sc.framesReceived(t);
            }
            sent.put(t, s);
            received.put(t, r);
        }
        return new ConnectionMetrics(messagesSent, messagesDelivered, messagesReceived, held, sendCredits.credits(),
            sendCredits.maxOutstandingSeen(), outOfOrder, sent, received);
    }

    /**
     * Whether the rails' resources (QPs, CQs, send and receive buffers) were freed: after close, once no
     * receive buffer is held and nothing is in flight. Rendezvous and reassembled messages still held do
     * not delay it; the node lists the connection until they are released too.
     */
    boolean isFreed() {
        return resourcesFreed;
    }

    /** Receive buffers held plus reassembled messages not released: what a leak check expects to be 0. */
    int buffersOutstanding() {
        int held = 0;
        for (RcSubchannel sc : subchannels) {
            held += sc.receiveBuffersHeld();
        }
        return held + assembledOutstanding.get() + rvOutstanding.get();
    }

    void onRendezvousReleased() {
        if (rvOutstanding.decrementAndGet() == 0 && resourcesFreed) {
            unlistOnceMessagesReleased();
        }
    }

    void onReleased(ReceivedMessage m) {
        if (Thread.currentThread() == deliveringThread && m.pooled && m.subchannel() == deliveringSubchannel
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
        if (node.isProgressThread()) {
            // the buffer share is returned by the next drain (after delivery, before credits are granted);
            // a pooled view is free at once for the next message
            releasedHere[releasedHereCount++] = m.slot() << RAIL_BITS | m.subchannel().rail();
            if (m.pooled) {
                returnView(m);
            }
        } else {
            released.offer(m);
            wakeUp();
        }
    }

    /** Returns the buffers of released messages (progress thread). */
    private int drainReleased() {
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
            releaseShare(subchannels[e & (1 << RAIL_BITS) - 1], e >>> RAIL_BITS);
        }
        releasedHereCount = 0;
        return work + n;
    }

    /** A pooled view for a message of a packed frame (progress thread). */
    private ReceivedMessage lendView(RcSubchannel sc) {
        int n = viewPoolSize;
        if (n > 0) {
            viewPoolSize = n - 1;
            ReceivedMessage v = viewPool[n - 1];
            viewPool[n - 1] = null;
            return v;
        }
        ReceivedMessage v = new ReceivedMessage(this, sc);
        if (viewsCreated == allViews.length) {
            allViews = java.util.Arrays.copyOf(allViews, viewsCreated * 2);
        }
        allViews[viewsCreated++] = v;
        return v;
    }

    private void returnView(ReceivedMessage v) {
        ReceivedMessage[] pool = viewPool;
        if (viewPoolSize == pool.length) {
            pool = java.util.Arrays.copyOf(pool, Math.max(pool.length * 2, viewsCreated));
            viewPool = pool;
        }
        pool[viewPoolSize++] = v;
    }

    /** Pooled views created so far: the most packed messages held at once (progress thread; tests). */
    int viewsCreated() {
        return viewsCreated;
    }

    void onAssembledReleased() {
        if (assembledOutstanding.decrementAndGet() == 0 && resourcesFreed) {
            unlistOnceMessagesReleased();
        }
    }

    // ---------------------------------------------------------------- progress thread

    @Override
    public String roleName() {
        return name;
    }

    @Override
    public int doWork(long nowNs) {
        if (resourcesFreed) {
            return 0;
        }
        cycleNs = nowNs;
        int work = drainInputs();
        for (RcSubchannel sc : subchannels) {
            work += sc.doWork(nowNs);
        }
        if (!terminated) {
            work += postStripes(nowNs);
            work += transmit(nowNs);
            for (RcSubchannel sc : subchannels) {
                sc.flushSends();
            }
            work += requestMore();
            work += grantRendezvous();
        }
        work += deliver();
        // messages the subscriber released in onNext: their buffers count as free for the credits below
        work += drainReleased();
        if (!terminated) {
            work += flushCredits();
            work += sendRailDowns();
            work += sendInboundClosedNotices();
            work += progressClose();
        }
        if (terminated) {
            maybeFree();
        }
        return work;
    }

    /**
     * Grants message credits (connection demand covered by free buffers over all rails), then lets
     * every rail grant its buffer credits; an explicit CREDIT frame goes on the first rail able to
     * send one when message credits are due and no rail's frame carried them.
     */
    private int flushCredits() {
        long free = 0;
        for (RcSubchannel sc : subchannels) {
            free += sc.freeReceiveBuffers();
        }
        // a rendezvous in progress holds no receive buffer but is a message ahead of the ESN: it counts
        // as a buffer here, so messages ahead of the ESN stay within the reorder window
        free = Math.max(0, free - rvReceives.pending - rvReceives.granted - packedExtraHeld);
        messageCredits.grant(free, rvReceives.pending + rvReceives.granted + partialCount);
        int work = 0;
        for (RcSubchannel sc : subchannels) {
            work += sc.flushCredits();
        }
        if (messageCredits.explicitCreditDue() || creditResync) {
            // after a rail failure: a frame lost on it may have carried the latest total of message credits
            for (RcSubchannel sc : subchannels) {
                if (sc.sendCreditFrame()) {
                    creditResync = false;
                    work++;
                    break;
                }
            }
        }
        return work;
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

    private int drainInputs() {
        int work = drainReleased();
        SendOp op;
        while ((op = newSends.poll()) != null) {
            if (terminated || localCloseSent) {
                // after the CLOSE no rail carries messages: a send that raced with close() is refused
                op.sink.error(withPublisherError(closedError(), op));
                op.cancelFromUser();
                op.drainQueue();
            } else if (!peerInboundClosed || !refuseUndelivered(op)) {
                sendOps.add(op);
            }
            work++;
        }
        if (foldDemand() != 0) {
            work++;
        }
        if (badRequest && !receiveTerminated) {
            terminateReceive(new IllegalArgumentException("receive() of " + name + ": request(" + badRequestN
                + ") violates Reactive Streams rule 3.9, n > 0 required; request at least 1 message"));
        }
        if (receiveCancelled && !inboundClosed) {
            closeInbound();
            work++;
        }
        int cr = closeRequest.get();
        if (cr == CLOSE_ABORT && !terminated) {
            for (RcSubchannel sc : subchannels) {
                sc.sendAbort(nextPsn, "aborted by the application");
            }
            terminate(new ConnectionClosedException(name + " was aborted", false));
        }
        return work;
    }

    private void closeInbound() {
        inboundClosed = true;
        receiveTerminated = true;
        terminalSent.set(true);
        receiver = null;
        demand = 0;
        messageCredits.onNoDemand();
        releaseQueued();
        oweInboundClosedNotice();
    }

    /**
     * The inbound side closed before the peer closed: tell it on every rail, so that it fails what it has
     * not sent instead of waiting for credit that will never come. After the peer's CLOSE it sends
     * nothing more and needs no notice.
     */
    private void oweInboundClosedNotice() {
        if (!terminated && !peerClosed()) {
            inboundNoticeRails = peerCloseExpected;
            // PSNs start at 0 and the subscriber gets them in order: the count delivered is the first PSN it did not get
            firstUndeliveredPsn = (int) messagesReceived;
        }
    }

    /** Sends the inbound-closed notice owed on each rail that can still carry control frames. */
    private int sendInboundClosedNotices() {
        if (inboundNoticeRails == 0) {
            return 0;
        }
        if (peerClosed()) {
            inboundNoticeRails = 0;
            return 0;
        }
        int work = 0;
        for (RcSubchannel sc : subchannels) {
            int bit = 1 << sc.rail();
            if ((inboundNoticeRails & bit) == 0) {
                continue;
            }
            if (!sc.carriesControl()) {
                inboundNoticeRails &= ~bit;
            } else if (sc.sendInboundClosed(firstUndeliveredPsn)) {
                inboundNoticeRails &= ~bit;
                work++;
            }
        }
        return work;
    }

    /**
     * The peer closed its inbound side (cancelled {@code receive()}, or closed without subscribing to it)
     * after its subscriber got the messages before PSN {@code firstUndelivered}: every send with a message
     * from that PSN on, or with messages still to send, fails naming how many of its messages were not
     * delivered, and so does every later send. A send whose messages all came before that PSN and whose
     * publisher completed completes as before. Messages in flight still complete at the RC level (the
     * peer acknowledges and drops them); a failing send ends once they did.
     */
    @Override
    public void onPeerInboundClosed(RcSubchannel subchannel, int firstUndelivered) {
        if (peerInboundClosed || terminated) {
            return;
        }
        peerInboundClosed = true;
        peerFirstUndelivered = firstUndelivered;
        for (SendOp op : List.copyOf(inflightOps)) {
            refuseUndelivered(op);
        }
        for (SendOp op : List.copyOf(sendOps)) {
            if (!op.finished && op.refusal == null) {
                refuseUndelivered(op);
            }
        }
    }

    /**
     * Ends {@code op} with a {@link ConnectionClosedException} naming its messages the peer's subscriber
     * did not get (sent from {@link #peerFirstUndelivered} on, or taken from the publisher and not sent),
     * once its messages in flight completed, unless every message came before and the publisher completed
     * (progress thread).
     *
     * @return whether it was refused
     */
    private boolean refuseUndelivered(SendOp op) {
        // the op's messages have PSNs firstPsn .. firstPsn + taken - 1; those from peerFirstUndelivered on were dropped
        long sentNotDelivered = 0;
        if (op.taken > 0) {
            int delivered = peerFirstUndelivered - op.firstPsn;
            sentNotDelivered = delivered <= 0 ? op.taken : Math.max(0, op.taken - delivered);
        }
        if (sentNotDelivered == 0 && op.publisherDone && op.isEmpty()) {
            // the subscriber got all of them: the op ends as its publisher did (completed, or with its error)
            return false;
        }
        boolean publisherDone = op.publisherDone;
        op.cancelFromUser();
        long notDelivered = sentNotDelivered + op.drainQueue();
        sendOps.remove(op);
        long delivered = op.taken - sentNotDelivered;
        String why = "the peer closed its inbound side (it cancelled receive(), or closed without subscribing to it)";
        op.refusal = new ConnectionClosedException(op.taken == 0 && notDelivered == 0
            ? name + ": send() refused: " + why
            : name + ": " + notDelivered + (notDelivered == 1 ? " message" : " messages") + " of this send() were not delivered"
                + (publisherDone ? "" : " and its publisher was cancelled") + ": " + why + " after its subscriber got "
                + delivered + " of them", true);
        if (op.completed == op.taken && currentOp != op) {
            finishOp(op, op.refusal);
        }
        return true;
    }

    private void releaseQueued() {
        RdmaMessage m;
        while ((m = ready.poll()) != null) {
            m.release();
        }
        reorder.clear(RdmaMessage::release);
        for (int i = 0; i < partial.length; i++) {
            AssembledMessage p = partial[i];
            if (p != null) {
                setPartial(i, null);
                p.release();
            }
        }
    }

    private @Nullable SendOp activeOp() {
        for (;;) {
            SendOp op = sendOps.peek();
            if (op == null) {
                return null;
            }
            if (op.firstPsn < 0) {
                op.firstPsn = nextPsn;
                inflightOps.add(op);
                sendCredits.resetOutstanding();
            }
            if (op.cancelled || op.overflowed) {
                sendOps.poll();
                finishOp(op, op.overflowed
                    ? new IllegalStateException("the publisher given to send() emitted more messages than requested (Reactive Streams rule 1.1)")
                    : null);
                continue;
            }
            // a publisher error ends the op like a completion (the messages emitted before it are sent and
            // delivered first, as Reactive Streams orders onError after them), then fails it with the error
            if (op.publisherDone && op.isEmpty() && currentOp != op) {
                sendOps.poll();
                checkOpDone(op);
                continue;
            }
            return op;
        }
    }

    private int transmit(long nowNs) {
        int work = 0;
        for (;;) {
            RdmaMessage m = current;
            if (m == null && resendCount > 0) {
                int r = resendOne();
                if (r < 0) {
                    return work;
                }
                work += r;
                if (terminated) {
                    return work;
                }
                continue;
            }
            if (m == null) {
                SendOp op = activeOp();
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
                    sendOps.poll();
                    op.cancelFromUser();
                    finishOp(op, new MessageTooLargeException(len, peerMaxMessageBytes));
                    work++;
                    continue;
                }
                if (!sendCredits.hasCredits(1)) {
                    return work;
                }
                MessageBufferPool staging = sendPool;
                int stagingSlot = -1;
                int entry = -1;
                boolean registered = next instanceof RegisteredMessage rm && node.owns(rm.region());
                if (staging != null && len > rendezvousThreshold && (registered || len <= staging.slotBytes())) {
                    entry = rvSends.freeEntry();
                    if (entry < 0) {
                        return work;
                    }
                    if (!registered) {
                        stagingSlot = staging.acquire();
                        if (stagingSlot < 0) {
                            // every staging slot carries a message in progress: wait for one to complete
                            return work;
                        }
                    }
                }
                int rail = scheduler.select(nextPsn, len, subchannels);
                if (rail < 0) {
                    if (stagingSlot >= 0) {
                        staging.release(stagingSlot);
                    }
                    return work;
                }
                if (!subchannels[rail].canSend()) {
                    if (stagingSlot >= 0) {
                        staging.release(stagingSlot);
                    }
                    throw new IllegalStateException("scheduler " + scheduler + " chose rail " + rail + " which cannot send");
                }
                if (entry >= 0) {
                    op.poll();
                    sendCredits.onTaken();
                    sendCredits.consume();
                    op.taken++;
                    int psn = nextPsn++;
                    messageStartNs[psn & inflightMask] = nowNs;
                    messageLength[psn & inflightMask] = len;
                    if (registered) {
                        RegisteredMessage rm = (RegisteredMessage) next;
                        rvSends.source(entry, -1, rm.address(), rm.region().lkey(), rm);
                    } else {
                        next.writeTo(staging.memory(), staging.offset(stagingSlot));
                        next.release();
                        rvSends.source(entry, stagingSlot, staging.address(stagingSlot), staging.lkey(), null);
                    }
                    rvSends.start(entry, psn, len, rail);
                    subchannels[rail].sendRts(psn, len, -2);
                    MESSAGES_SENT.lazySet(this, messagesSent + 1);
                    work++;
                    if (terminated) {
                        return work;
                    }
                    continue;
                }
                op.poll();
                sendCredits.onTaken();
                sendCredits.consume();
                op.taken++;
                current = next;
                currentOp = op;
                currentOffset = 0;
                currentRail = rail;
                currentPsn = nextPsn++;
                resending = false;
                int idx = currentPsn & inflightMask;
                messageStartNs[idx] = nowNs;
                messageLength[idx] = len;
                inflightMessages[idx] = next;
                messagePsn[idx] = currentPsn;
                messageRail[idx] = rail;
                m = next;
            }
            RcSubchannel sc = subchannels[currentRail];
            if (!sc.canSend()) {
                return work;
            }
            int len = m.lengthBytes();
            int frag = Math.min(len - currentOffset, sc.maxFramePayloadBytes());
            boolean first = currentOffset == 0;
            boolean last = currentOffset + frag == len;
            if (first && last && !resending && currentOp != null && packs(currentOp.peek(), sc,
                DataFrameCodec.PACKED_PREFIX_BYTES + len)) {
                SendOp op = currentOp;
                current = null;
                currentOp = null;
                work += transmitPacked(op, m, sc, nowNs);
                if (terminated) {
                    return work;
                }
                continue;
            }
            long token = last ? currentPsn & 0xFFFFFFFFL : -2;
            if (last) {
                // a failed post terminates the connection inside sendData: it must not find this message as current
                current = null;
                currentOp = null;
            }
            sc.sendData(m, currentOffset, frag, first, last, currentPsn, token);
            currentOffset += frag;
            work++;
            if (last && !resending) {
                MESSAGES_SENT.lazySet(this, messagesSent + 1);
            }
            if (terminated) {
                return work;
            }
        }
    }

    /**
     * Whether {@code next}, the message after the current one of {@code usedBytes} packed bytes, may ride
     * in the same packed DATA frame: a message credit is held for it, it fits, it would not go by
     * rendezvous, and its PSN's in-flight entry is free.
     */
    private boolean packs(@Nullable RdmaMessage next, RcSubchannel sc, int usedBytes) {
        if (next == null) {
            return false;
        }
        int len = next.lengthBytes();
        return (long) usedBytes + DataFrameCodec.PACKED_PREFIX_BYTES + len <= sc.maxFramePayloadBytes()
            && len <= peerMaxMessageBytes && (sendPool == null || len <= rendezvousThreshold)
            && sendCredits.hasCredits(1) && inflightMessages[nextPsn & inflightMask] == null;
    }

    /**
     * Coalescing: sends {@code first} (its PSN and credit already taken) with the small messages queued
     * after it on the same rail, in one packed DATA frame: one send work request and one receive buffer
     * (one buffer credit) for up to {@link DataFrameCodec#MAX_PACKED_MESSAGES} messages, one message
     * credit each.
     *
     * <p>Bookkeeping is per frame: each message is released once copied into the frame, which holds the
     * bytes until its send completes; if its rail fails first, {@link #onFailure} takes the messages of
     * every frame without a completion back from the send buffers for the re-send. So the per-message
     * work is the copy, the PSN's length and start time (for the scheduler's completion report).
     *
     * @return messages sent
     */
    private int transmitPacked(SendOp op, RdmaMessage first, RcSubchannel sc, long nowNs) {
        int firstPsn = currentPsn;
        // transmit() kept the first message for a re-send as if it went alone: the frame keeps it now
        inflightMessages[firstPsn & inflightMask] = null;
        sc.openPack(firstPsn);
        int used = DataFrameCodec.PACKED_PREFIX_BYTES + first.lengthBytes();
        sc.packAppend(first);
        first.release();
        int limit = sc.maxFramePayloadBytes();
        // one message credit per further message, taken for the whole frame at the end
        int room = (int) Math.min(sendCredits.credits(), DataFrameCodec.MAX_PACKED_MESSAGES - 1);
        int maxLength = sendPool == null ? peerMaxMessageBytes : Math.min(peerMaxMessageBytes, rendezvousThreshold);
        int extra = 0;
        RdmaMessage n;
        while (extra < room && (n = op.peek()) != null) {
            int len = n.lengthBytes();
            int psn = nextPsn;
            int idx = psn & inflightMask;
            if (len > maxLength || used + DataFrameCodec.PACKED_PREFIX_BYTES + len > limit || inflightMessages[idx] != null) {
                break;
            }
            op.poll();
            nextPsn = psn + 1;
            messageStartNs[idx] = nowNs;
            messageLength[idx] = len;
            sc.packAppend(n);
            n.release();
            used += DataFrameCodec.PACKED_PREFIX_BYTES + len;
            extra++;
        }
        sendCredits.take(extra);
        op.taken += extra;
        int count = extra + 1;
        MESSAGES_SENT.lazySet(this, messagesSent + count);
        sc.closePack(PACKED_TOKEN | ((long) count << 32) | (firstPsn & 0xFFFFFFFFL));
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
        int psn = resendPsns[0];
        int idx = psn & inflightMask;
        RdmaMessage m = inflightMessages[idx];
        int e = rvSends.find(psn, RendezvousSends.RESEND);
        if ((m == null || messagePsn[idx] != psn) && e < 0) {
            popResend();
            return 1;
        }
        int len = m != null && messagePsn[idx] == psn ? m.lengthBytes() : rvSends.length[e];
        int rail = scheduler.select(psn, len, subchannels);
        if (rail < 0) {
            return -1;
        }
        if (!subchannels[rail].canSend()) {
            throw new IllegalStateException("scheduler " + scheduler + " chose rail " + rail + " which cannot send");
        }
        popResend();
        if (e >= 0) {
            rvSends.setState(e, RendezvousSends.RTS_SENT);
            rvSends.rtsRail[e] = rail;
            subchannels[rail].sendRts(psn, len, -2);
            return 1;
        }
        current = m;
        currentOp = null;
        currentOffset = 0;
        currentRail = rail;
        currentPsn = psn;
        resending = true;
        messageRail[idx] = rail;
        return 1;
    }

    private void popResend() {
        System.arraycopy(resendPsns, 1, resendPsns, 0, --resendCount);
    }

    /** Adds {@code psn} to the re-send list, kept in PSN order (relative to the next PSN). */
    private void addResend(int psn) {
        int k = resendCount;
        while (k > 0 && resendPsns[k - 1] - nextPsn > psn - nextPsn) {
            resendPsns[k] = resendPsns[k - 1];
            k--;
        }
        resendPsns[k] = psn;
        resendCount++;
    }

    private int requestMore() {
        SendOp op = sendOps.peek();
        if (op == null || op.publisherDone || op.subscription == null || op.firstPsn < 0) {
            return 0;
        }
        long n = sendCredits.toRequest();
        if (n > 0) {
            op.request(n);
            return 1;
        }
        return 0;
    }

    @Override
    public void onSendCompleted(RcSubchannel subchannel, long token) {
        if (token < 0) {
            return;
        }
        if ((token & PACKED_TOKEN) != 0) {
            onPackedSendCompleted(subchannel, (int) token, (int) ((token >>> 32) & 0xFFFF));
            return;
        }
        if (RendezvousSends.isStripe(token)) {
            onStripeCompleted(subchannel, RendezvousSends.entryOf(token), RendezvousSends.railOf(token));
            return;
        }
        onMessageSendCompleted(subchannel, (int) token);
    }

    /**
     * A packed frame of {@code count} messages from {@code firstPsn} completed: each message is reported
     * to the scheduler, the send op they came from (one op fills a packed frame) counts them at once.
     * The messages themselves were released when copied into the frame; a frame completes here at most
     * once (after its rail failed, no completion of it is reported: its messages are re-sent instead).
     */
    private void onPackedSendCompleted(RcSubchannel subchannel, int firstPsn, int count) {
        for (int i = 0; i < count; i++) {
            int idx = (firstPsn + i) & inflightMask;
            scheduler.onMessageCompleted(subchannel, firstPsn + i, messageLength[idx], cycleNs - messageStartNs[idx]);
        }
        MESSAGES_DELIVERED.lazySet(this, messagesDelivered + count);
        SendOp head = inflightOps.peekFirst();
        if (head != null && firstPsn - head.firstPsn >= 0 && firstPsn + count - 1 - head.firstPsn < head.taken) {
            head.completed += count;
            checkOpDone(head);
            return;
        }
        for (int i = 0; i < count; i++) {
            countDelivered(firstPsn + i);
        }
    }

    private void onMessageSendCompleted(RcSubchannel subchannel, int psn) {
        if (retireInflight(psn)) {
            onMessageDelivered(subchannel, psn);
        }
    }

    /**
     * Drops the kept copy of the message sent with this PSN (its send completed) and releases it.
     * False when there is none: a copy re-sent after a failover completed too, and the message was
     * counted once already.
     */
    private boolean retireInflight(int psn) {
        int idx = psn & inflightMask;
        RdmaMessage m = inflightMessages[idx];
        if (m == null || messagePsn[idx] != psn) {
            return false;
        }
        if (current == m) {
            // its re-send is under way on another rail; the peer drops that copy as a duplicate
            current = null;
        }
        inflightMessages[idx] = null;
        m.release();
        return true;
    }

    /** Completion filter (seed 000 &sect;4.1, &sect;5.3): one stripe's WRITE completed; the message once all did. */
    private void onStripeCompleted(RcSubchannel subchannel, int entry, int stripe) {
        RendezvousSends t = rvSends;
        if (t.state[entry] == RendezvousSends.FREE || (t.completedMask[entry] & (1L << stripe)) != 0) {
            return;
        }
        t.completedMask[entry] |= 1L << stripe;
        int psn = t.psn[entry];
        scheduler.onStripeCompleted(subchannel, psn, t.stripeOffset[entry][stripe], t.stripeBytes[entry][stripe],
            t.postedNs[entry][stripe], cycleNs);
        if (--t.stripesLeft[entry] == 0 && t.state[entry] == RendezvousSends.POSTED) {
            finishRendezvousSend(entry);
        }
    }

    private void finishRendezvousSend(int entry) {
        int psn = rvSends.psn[entry];
        onMessageDelivered(endRendezvousSend(entry), psn);
    }

    /**
     * The receiver discarded the message (a CTS with {@link CtsFrameCodec#DISCARD}): its send op counts it
     * done, but it is not counted in {@code messagesDelivered} and the scheduler hears of no delivery, so
     * a striping policy counts no bytes for it and sees no rate (the RTS -> CTS round trip of a message
     * never written would look like a huge one).
     */
    private void discardRendezvousSend(int entry) {
        int psn = rvSends.psn[entry];
        int length = rvSends.length[entry];
        RcSubchannel rtsRail = endRendezvousSend(entry);
        scheduler.onMessageDiscarded(rtsRail, psn, length);
        countDelivered(psn);
    }

    /** Frees the entry and its staging slot; returns the subchannel that carried the RTS. */
    private RcSubchannel endRendezvousSend(int entry) {
        int rail = rvSends.rtsRail[entry];
        rvSends.finish(entry);
        MessageBufferPool staging = sendPool;
        if (staging != null) {
            rvSends.releaseSource(entry, staging::release);
        }
        return subchannels[rail];
    }

    private void onMessageDelivered(RcSubchannel subchannel, int psn) {
        MESSAGES_DELIVERED.lazySet(this, messagesDelivered + 1);
        scheduler.onMessageCompleted(subchannel, psn, messageLength[psn & inflightMask],
            cycleNs - messageStartNs[psn & inflightMask]);
        countDelivered(psn);
    }

    /** Counts message {@code psn} delivered for the send op it came from. */
    private void countDelivered(int psn) {
        SendOp head = inflightOps.peekFirst();
        if (head != null && psn - head.firstPsn >= 0 && psn - head.firstPsn < head.taken) {
            // the common case, one send() at a time: no iterator on the per-message path
            head.completed++;
            checkOpDone(head);
            return;
        }
        for (SendOp op : inflightOps) {
            if (psn - op.firstPsn >= 0 && psn - op.firstPsn < op.taken) {
                op.completed++;
                checkOpDone(op);
                return;
            }
        }
    }

    private void checkOpDone(SendOp op) {
        if (op.completed != op.taken || op.finished) {
            // the common case on the per-message path: more completions to come
            return;
        }
        if (op.refusal != null) {
            if (currentOp != op) {
                finishOp(op, op.refusal);
            }
            return;
        }
        if (!op.finished && op.publisherDone && op.isEmpty() && currentOp != op && op.completed == op.taken
            && !sendOps.contains(op)) {
            finishOp(op, op.publisherError);
        } else if (!op.finished && op.publisherDone && op.isEmpty() && currentOp != op && op.completed == op.taken
            && sendOps.peek() == op) {
            sendOps.poll();
            finishOp(op, op.publisherError);
        }
    }

    private void finishOp(SendOp op, @Nullable Throwable error) {
        if (op.finished) {
            return;
        }
        op.finished = true;
        inflightOps.remove(op);
        sendOps.remove(op);
        op.drainQueue();
        if (error != null) {
            op.sink.error(withPublisherError(error, op));
        } else {
            op.sink.success();
        }
    }

    /**
     * {@code error}, carrying the op's publisher error as a suppressed exception when the send fails for
     * a reason of the connection (a close, the peer, the rail) after its publisher had failed too, so
     * the user's own error is not lost.
     */
    private static Throwable withPublisherError(Throwable error, SendOp op) {
        Throwable pe = op.publisherError;
        if (pe != null && pe != error && java.util.Arrays.stream(error.getSuppressed()).noneMatch(x -> x == pe)) {
            error.addSuppressed(pe);
        }
        return error;
    }

    // ---------------------------------------------------------------- rendezvous, send side

    @Override
    public void onCts(RcSubchannel sc, int psn, int length, long remoteAddress, int rkey, int flags) {
        int e = rvSends.awaitingCts(psn);
        if (e < 0) {
            // a second CTS answering an RTS re-sent after a failover, or for a message already complete
            return;
        }
        if (rvSends.length[e] != length) {
            protocolFailure("peer sent a CTS for PSN " + psn + " of " + length + " bytes on rail " + sc.rail()
                + " but the RTS announced " + rvSends.length[e]);
            return;
        }
        if ((flags & CtsFrameCodec.DISCARD) != 0) {
            // the receiver closed its inbound side, or already holds the message: nothing (more) to write
            rvSends.setState(e, RendezvousSends.POSTED);
            discardRendezvousSend(e);
            return;
        }
        rvSends.remoteAddress[e] = remoteAddress;
        rvSends.rkey[e] = rkey;
        if (rvSends.hasSplit[e]) {
            // again after a failover: the split stays, stripes that completed are not written again
            rvSends.postedMask[e] = rvSends.completedMask[e];
        }
        // split when posted (postStripes), with the rails' state then
        rvSends.queueForPosting(e);
    }

    /**
     * Splits the message of entry {@code e} over the rails usable now: by the scheduler from its
     * stripe threshold on, else whole on the RTS's rail (or the first usable one).
     *
     * @return false when it could not: no usable rail (the entry stays queued), or a wrong split (the
     *         connection is terminated)
     */
    private boolean split(int e, long nowNs) {
        int psn = rvSends.psn[e];
        int length = rvSends.length[e];
        long[] split = stripeScratch;
        java.util.Arrays.fill(split, 0);
        if (length >= scheduler.stripeThresholdBytes()) {
            scheduler.stripe(psn, length, subchannels, nowNs, split);
            String problem = checkSplit(split, length);
            if (problem != null) {
                for (RcSubchannel s : subchannels) {
                    s.sendAbort(nextPsn, "local scheduler error");
                }
                terminate(new IllegalStateException("scheduler " + scheduler + " split PSN " + psn + " of " + length
                    + " bytes wrongly: " + problem + "; stripe(..) must give >= 0 bytes per usable subchannel, 0 to unusable ones, summing to the length"));
                return false;
            }
        } else {
            int rail = rvSends.rtsRail[e];
            if (!subchannels[rail].isUsable()) {
                rail = firstUsableRail();
                if (rail < 0) {
                    return false;
                }
            }
            split[rail] = length;
        }
        long offset = 0;
        int stripes = 0;
        for (int r = 0; r < split.length; r++) {
            rvSends.stripeBytes[e][r] = split[r];
            rvSends.stripeOffset[e][r] = offset;
            offset += split[r];
            if (split[r] > 0) {
                stripes++;
            }
        }
        rvSends.stripes[e] = stripes;
        rvSends.stripesLeft[e] = stripes;
        rvSends.hasSplit[e] = true;
        return true;
    }

    private @Nullable String checkSplit(long[] split, int length) {
        long sum = 0;
        for (int r = 0; r < split.length; r++) {
            if (split[r] < 0) {
                return "rail " + r + " got " + split[r] + " bytes";
            }
            if (split[r] > 0 && !subchannels[r].isUsable()) {
                return "rail " + r + " is not usable but got " + split[r] + " bytes";
            }
            sum += split[r];
        }
        return sum == length ? null : "the stripes add up to " + sum + " bytes";
    }

    private @Nullable RcSubchannel firstRailThatCanWrite() {
        for (RcSubchannel s : subchannels) {
            if (s.isUsable() && s.canWriteStripe()) {
                return s;
            }
        }
        return null;
    }

    /**
     * Whether a rail can still do what this side has left to do: carry messages before its CLOSE; after
     * it, only control frames (credits for the peer's last messages, RAIL_DOWN); after its last frame,
     * only receive the peer's. A rail failing during a graceful close fails over like any other.
     */
    private boolean railLeft() {
        for (RcSubchannel s : subchannels) {
            if (localFinalSent ? !s.isFailed() : localCloseSent ? s.carriesControl() : s.isUsable()) {
                return true;
            }
        }
        return false;
    }

    private int firstUsableRail() {
        for (RcSubchannel s : subchannels) {
            if (s.isUsable()) {
                return s.rail();
            }
        }
        return -1;
    }

    /**
     * Posts the stripes of messages whose CTS arrived, oldest first, as rails have room, splitting each
     * when it is first posted and not before the scheduler's {@code stripeNow} allows it.
     */
    private int postStripes(long nowNs) {
        int work = 0;
        MessageBufferPool staging = sendPool;
        int e;
        while (staging != null && (e = rvSends.nextToPost(nextPsn)) >= 0) {
            if (!rvSends.hasSplit[e]) {
                if (rvSends.length[e] >= scheduler.stripeThresholdBytes() && !scheduler.stripeNow(nowNs)) {
                    return work;
                }
                if (!split(e, nowNs)) {
                    return work;
                }
            }
            long[] bytes = rvSends.stripeBytes[e];
            int stripes = rvSends.stripes[e];
            long all = 0;
            for (int r = 0; r < bytes.length; r++) {
                if (bytes[r] == 0) {
                    continue;
                }
                all |= 1L << r;
                if ((rvSends.postedMask[e] & (1L << r)) != 0) {
                    continue;
                }
                // stripe r goes on rail r; after rail r failed, on the first live rail with room
                RcSubchannel sc = subchannels[r].isUsable() ? subchannels[r] : firstRailThatCanWrite();
                if (sc == null || !sc.canWriteStripe()) {
                    continue;
                }
                rvSends.postedMask[e] |= 1L << r;
                rvSends.postedNs[e][r] = nowNs;
                rvSends.carrier[e][r] = sc.rail();
                sc.writeStripe(rvSends.psn[e], rvSends.length[e], rvSends.localAddress[e], rvSends.lkey[e], rvSends.remoteAddress[e],
                    rvSends.rkey[e], (int) rvSends.stripeOffset[e][r], (int) bytes[r], stripes, r, RendezvousSends.stripeToken(e, r));
                work++;
                if (terminated || rvSends.state[e] != RendezvousSends.POSTING) {
                    return work;
                }
            }
            if (rvSends.postedMask[e] != all) {
                return work;
            }
            rvSends.setState(e, RendezvousSends.POSTED);
            if (rvSends.stripesLeft[e] == 0) {
                finishRendezvousSend(e);
            }
        }
        return work;
    }

    // ---------------------------------------------------------------- rendezvous, receive side

    @Override
    public void onRts(RcSubchannel sc, int psn, int length) {
        int ahead = psn - reorder.esn();
        if (!inboundClosed && (ahead < 0 || reorder.isQueued(psn))) {
            // re-sent after a failover but the message is here already: tell the sender to stop
            rvReceives.oweDiscard(psn, length, sc.rail());
            return;
        }
        if (rvReceives.has(psn)) {
            // re-sent after a failover: answer on the rail it came by (again, if a CTS was sent)
            int i = rvReceives.index(psn);
            rvReceives.rail[i] = sc.rail();
            if (rvReceives.state[i] == RendezvousReceives.GRANTED) {
                rvReceives.oweCts(i);
            }
            return;
        }
        if (!messageCredits.onMessageArrived()) {
            protocolFailure("peer sent an RTS for PSN " + psn + " on rail " + sc.rail() + " without holding a message credit");
            return;
        }
        MessageBufferPool pool = receivePool;
        int distance = psn - reorder.esn();
        if (pool == null || length > localMaxMessageBytes || length > pool.slotBytes() || length < 0) {
            protocolFailure(pool == null
                ? "peer sent an RTS (PSN " + psn + ") but this node has rendezvous off (rendezvousBuffers(0))"
                : "peer sent an RTS for a message of " + length + " bytes but this node accepts at most " + localMaxMessageBytes);
            return;
        }
        if (!inboundClosed && (distance < 0 || distance >= reorder.windowSize()) || rvReceives.has(psn)) {
            protocolFailure("peer sent an RTS for PSN " + psn + " outside the window from ESN " + reorder.esn() + " or twice");
            return;
        }
        rvReceives.addPending(psn, sc.rail(), length);
    }

    /**
     * Replies CTS to waiting RTSs: in PSN order from the ESN, each only when every earlier PSN has
     * arrived (is queued or is a rendezvous in progress) and a message buffer is free. After the
     * inbound side closed, every waiting RTS gets a discarding CTS instead.
     */
    private int grantRendezvous() {
        RendezvousReceives t = rvReceives;
        MessageBufferPool pool = receivePool;
        if (!t.hasWork() || pool == null) {
            return 0;
        }
        int work = 0;
        int sent = 0;
        while (sent < t.discards && ctsRailFor(t.discardRail(sent)).sendCts(t.discardPsn(sent), t.discardLength(sent), 0, 0,
            CtsFrameCodec.DISCARD)) {
            sent++;
        }
        if (sent > 0) {
            t.discardsSent(sent);
            work += sent;
        }
        for (int i = 0; i < t.state.length && t.owed > 0; i++) {
            if (t.ctsOwed[i] && ctsRailFor(t.rail[i]).sendCts(t.psn[i], t.length[i], pool.address(t.slot[i]), pool.rkey(), 0)) {
                t.ctsSent(i);
                work++;
            }
        }
        if (t.pending == 0) {
            return work;
        }
        if (inboundClosed) {
            for (int i = 0; i < t.state.length && t.pending > 0; i++) {
                if (t.state[i] == RendezvousReceives.PENDING && ctsRailFor(t.rail[i]).sendCts(t.psn[i], t.length[i], 0, 0,
                    CtsFrameCodec.DISCARD)) {
                    t.remove(i);
                    work++;
                }
            }
            return work;
        }
        int q = reorder.esn();
        for (int d = 0; d < reorder.windowSize() && t.pending > 0; d++, q++) {
            if (t.has(q)) {
                int i = t.index(q);
                if (t.state[i] == RendezvousReceives.PENDING) {
                    int slot = pool.acquire();
                    if (slot < 0) {
                        return work;
                    }
                    if (!ctsRailFor(t.rail[i]).sendCts(q, t.length[i], pool.address(slot), pool.rkey(), 0)) {
                        pool.release(slot);
                        return work;
                    }
                    t.grant(i, slot);
                    work++;
                }
            } else if (!reorder.isQueued(q)) {
                return work;
            }
        }
        return work;
    }

    /** The RTS's rail if it can still send, else the next usable one (round robin). */
    private RcSubchannel ctsRailFor(int rail) {
        if (subchannels[rail].carriesControl()) {
            return subchannels[rail];
        }
        for (int k = 0; k < subchannels.length; k++) {
            ctsRail = ctsRail + 1 == subchannels.length ? 0 : ctsRail + 1;
            if (subchannels[ctsRail].carriesControl()) {
                return subchannels[ctsRail];
            }
        }
        return subchannels[rail];
    }

    @Override
    public void onFin(RcSubchannel sc, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        RendezvousReceives t = rvReceives;
        int i = t.index(psn);
        if (!t.has(psn) || t.state[i] != RendezvousReceives.GRANTED) {
            int ahead = psn - reorder.esn();
            if (inboundClosed || ahead < 0 || reorder.isQueued(psn)) {
                // a stripe re-sent after a failover for a message that is complete
                return;
            }
            protocolFailure("peer sent a FIN for PSN " + psn + " on rail " + sc.rail() + " but no CTS was sent for it");
            return;
        }
        if ((t.finMask[i] & (1L << stripeIndex)) != 0) {
            // the same stripe again, re-sent after its rail failed: count it once
            return;
        }
        t.finMask[i] |= 1L << stripeIndex;
        int length = t.length[i];
        if (stripeOffset < 0 || stripeLength < 0 || (long) stripeOffset + stripeLength > length || stripes < 1
            || (t.stripes[i] != 0 && t.stripes[i] != stripes)) {
            protocolFailure("FIN of PSN " + psn + " names stripe [" + stripeOffset + ", +" + stripeLength + ") of " + stripes
                + " for a " + length + "-byte message");
            return;
        }
        t.stripes[i] = stripes;
        t.bytes[i] += stripeLength;
        if (++t.fins[i] < stripes) {
            return;
        }
        if (t.bytes[i] != length) {
            protocolFailure("the " + stripes + " stripes of PSN " + psn + " add up to " + t.bytes[i] + " bytes, not its " + length);
            return;
        }
        int slot = t.slot[i];
        t.remove(i);
        MessageBufferPool pool = receivePool;
        if (pool == null) {
            return;
        }
        if (inboundClosed || terminated) {
            pool.release(slot);
            return;
        }
        RendezvousMessage m = rvMessages[slot];
        if (m == null) {
            m = new RendezvousMessage(this, pool, slot);
            rvMessages[slot] = m;
        }
        m.init(psn, length);
        rvOutstanding.incrementAndGet();
        offerInOrder(psn, m);
    }

    @Override
    public void onPackedData(RcSubchannel sc, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        slotShares[sc.rail()][slot] = count;
        packedExtraHeld += count - 1;
        if (deliverPackedInOrder(sc, slot, buffer, payloadOffset, firstPsn, count)) {
            return;
        }
        int pos = payloadOffset;
        boolean failedHere = false;
        for (int i = 0; i < count; i++) {
            int len = DataFrameCodec.packedLength(buffer, pos);
            int at = pos + DataFrameCodec.PACKED_PREFIX_BYTES;
            pos = at + len;
            if (failedHere) {
                releaseShare(sc, slot);
            } else {
                failedHere = !onPackedMessage(sc, slot, buffer, at, len, firstPsn + i);
            }
        }
        // deliver while the frame's views are still in cache, rather than after the whole completion batch
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (r != null && !failedHere && !receiveTerminated && !ready.isEmpty()) {
            deliverReady(r);
        }
    }

    /**
     * The fast path of a packed frame (one rail, nothing out of order or waiting, demand and message
     * credits for all of it): its messages go straight to the subscriber, without the reorder window and
     * the ready queue, with the credit and ESN accounting done once for the frame. Messages left after the
     * subscriber cancelled from {@code onNext} are released here.
     *
     * @return false, having changed nothing, when the frame must take the general path
     */
    private boolean deliverPackedInOrder(RcSubchannel sc, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (r == null || subchannels.length != 1 || inboundClosed || terminated || receiveTerminated || receiveCancelled
            || firstPsn != reorder.esn() || reorder.queued() != 0 || !ready.isEmpty()
            || (demand != Long.MAX_VALUE && demand < count) || !messageCredits.onMessagesArrived(count)) {
            return false;
        }
        reorder.advance(count);
        // receive buffers are registered (off-heap) memory: views wrap them by address, and the prefixes,
        // checked by DataFrameCodec.validatePacked, are read by address
        long base = buffer.addressOffset();
        int pos = payloadOffset;
        int delivered = 0;
        deliveringThread = Thread.currentThread();
        deliveringSubchannel = sc;
        deliveringSlot = slot;
        releasedInFrame = 0;
        // the view released in its own onNext (the common subscriber) carries the next message: no pool traffic
        ReceivedMessage spare = null;
        try {
            for (int i = 0; i < count; i++) {
                int len = DataFrameCodec.packedLengthAt(base + pos);
                int at = pos + DataFrameCodec.PACKED_PREFIX_BYTES;
                pos = at + len;
                if (receiveCancelled) {
                    releaseShare(sc, slot);
                    continue;
                }
                ReceivedMessage v = spare != null ? spare : lendView(sc);
                spare = null;
                int psn = firstPsn + i;
                v.initPacked(sc, slot, psn, base + at, len);
                deliveringPsn = psn;
                deliveredReleased = false;
                if (demand != Long.MAX_VALUE) {
                    demand--;
                }
                delivered++;
                try {
                    r.onNext(v);
                } catch (Throwable t) {
                    Exceptions.throwIfJvmFatal(t);
                    receiveCancelled = true;
                    receiver = null;
                    Operators.onErrorDropped(t, r.currentContext());
                }
                if (deliveredReleased) {
                    spare = v;
                }
            }
        } finally {
            deliveringThread = null;
            deliveringSubchannel = null;
        }
        if (spare != null) {
            returnView(spare);
        }
        if (releasedInFrame > 0) {
            releaseShares(sc, slot, releasedInFrame);
        }
        messageCredits.onDeliveredUnqueued(delivered);
        MESSAGES_RECEIVED.lazySet(this, messagesReceived + delivered);
        return true;
    }

    /**
     * Message {@code psn} of a packed frame ({@code len} bytes at {@code at}): the same checks as a
     * whole-message DATA frame, delivered as a view of the shared receive buffer, which returns to the
     * rail when its last view is released.
     *
     * @return false after a protocol failure
     */
    private boolean onPackedMessage(RcSubchannel sc, int slot, DirectBuffer buffer, int at, int len, int psn) {
        int rail = sc.rail();
        dropping[rail] = false;
        int ahead = psn - reorder.esn();
        if (!inboundClosed && (ahead < 0 || reorder.isQueued(psn))) {
            // re-sent after a failover, but it arrived before: drop this copy
            releaseShare(sc, slot);
            return true;
        }
        boolean resent = false;
        for (int r = 0; r < partial.length; r++) {
            AssembledMessage stale = partial[r];
            if (r != rail && stale != null && stale.psn() == psn) {
                setPartial(r, null);
                stale.release();
                resent = true;
            }
        }
        if (!resent && !messageCredits.onMessageArrived()) {
            releaseShare(sc, slot);
            protocolFailure("peer sent message PSN " + psn + " (packed) on rail " + rail + " without holding a message credit");
            return false;
        }
        if (inboundClosed || terminated) {
            releaseShare(sc, slot);
            return true;
        }
        ReceivedMessage v = lendView(sc);
        v.initPacked(sc, slot, psn, buffer.addressOffset() + at, len);
        offerInOrder(psn, v);
        return true;
    }

    /** {@code k} messages in receive buffer {@code slot} were released: the buffer returns with the last of them. */
    private void releaseShares(RcSubchannel sc, int slot, int k) {
        int[] shares = slotShares[sc.rail()];
        int held = shares[slot];
        if (held > k) {
            shares[slot] = held - k;
            packedExtraHeld -= k;
            return;
        }
        packedExtraHeld -= held - 1;
        shares[slot] = 0;
        sc.releaseReceiveBuffer(slot);
    }

    /** One message in receive buffer {@code slot} was released: the buffer returns once all its messages are. */
    private void releaseShare(RcSubchannel sc, int slot) {
        int[] shares = slotShares[sc.rail()];
        if (shares[slot] > 1) {
            shares[slot]--;
            packedExtraHeld--;
            return;
        }
        shares[slot] = 0;
        sc.releaseReceiveBuffer(slot);
    }

    @Override
    public void onData(RcSubchannel sc, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                       boolean first, boolean last, int messageLength) {
        int rail = sc.rail();
        boolean resent = false;
        if (first) {
            dropping[rail] = false;
            int ahead = psn - reorder.esn();
            if (!inboundClosed && (ahead < 0 || reorder.isQueued(psn))) {
                // re-sent after a failover, but it arrived before: drop this copy (and its other fragments)
                sc.releaseReceiveBuffer(slot);
                dropping[rail] = !last;
                droppingPsn[rail] = psn;
                return;
            }
            for (int r = 0; r < partial.length; r++) {
                AssembledMessage stale = partial[r];
                if (r != rail && stale != null && stale.psn() == psn) {
                    // its first copy was cut off by a failed rail: start again from this one, counted once
                    setPartial(r, null);
                    stale.release();
                    resent = true;
                }
            }
        } else if (dropping[rail] && droppingPsn[rail] == psn) {
            sc.releaseReceiveBuffer(slot);
            dropping[rail] = !last;
            return;
        }
        if (first && !resent && !messageCredits.onMessageArrived()) {
            sc.releaseReceiveBuffer(slot);
            protocolFailure("peer started message PSN " + psn + " on rail " + sc.rail() + " without holding a message credit");
            return;
        }
        if (inboundClosed || terminated) {
            sc.releaseReceiveBuffer(slot);
            return;
        }
        if (first && last) {
            ReceivedMessage m = receivedMessages[rail][slot];
            m.init(psn, buffer, payloadOffset, payloadLength);
            offerInOrder(psn, m);
            return;
        }
        AssembledMessage p = partial[rail];
        if (first) {
            if (p != null || messageLength > localMaxMessageBytes) {
                sc.releaseReceiveBuffer(slot);
                protocolFailure(p != null
                    ? "rail " + rail + " started message PSN " + psn + " before finishing PSN " + p.psn()
                    : "peer sent a message of " + messageLength + " bytes but this node accepts at most " + localMaxMessageBytes);
                return;
            }
            p = new AssembledMessage(this, psn, messageLength);
            assembledOutstanding.incrementAndGet();
            setPartial(rail, p);
        } else if (p == null || p.psn() != psn) {
            sc.releaseReceiveBuffer(slot);
            protocolFailure("rail " + rail + " received a middle fragment of PSN " + psn + " without its first fragment");
            return;
        }
        boolean fits = p.append(buffer, payloadOffset, payloadLength);
        sc.releaseReceiveBuffer(slot);
        if (!fits || (last && !p.isComplete())) {
            protocolFailure("fragments of PSN " + psn + " do not add up to its announced length " + p.lengthBytes());
            return;
        }
        if (last) {
            setPartial(rail, null);
            offerInOrder(psn, p);
        }
    }

    private void offerInOrder(int psn, RdmaMessage m) {
        messageCredits.onMessageQueued();
        try {
            if (reorder.offer(psn, m, toReady) == 0) {
                outOfOrder++;
            }
        } catch (ReorderWindowOverflowException e) {
            m.release();
            terminate(e);
        }
    }

    private void protocolFailure(String message) {
        for (RcSubchannel sc : subchannels) {
            sc.sendAbort(nextPsn, message);
        }
        terminate(new RdmaProtocolException(message + "; the connection " + name + " is aborted"));
    }

    private int deliver() {
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (receiveTerminated) {
            signalReceiveTerminal();
            return 0;
        }
        if (r == null) {
            return 0;
        }
        int work = deliverReady(r);
        if (receiveCancelled) {
            closeInbound();
            return work;
        }
        if (ready.isEmpty()) {
            if (failure != null) {
                terminateReceive(failure);
            } else if (peerClosed() && reorder.esn() == peerNextPsn) {
                receiveTerminated = true;
                inboundClosed = true;
                signalReceiveTerminal();
            }
        }
        return work;
    }

    /**
     * Hands ready messages to the subscriber while it has demand (demand it added from {@code onNext}
     * included). Only delivery: cancellation and terminal signals are {@link #deliver()}'s.
     *
     * @return messages delivered
     */
    private int deliverReady(CoreSubscriber<? super RdmaMessage> r) {
        int n = 0;
        ArrayDeque<RdmaMessage> q = ready;
        while (!q.isEmpty() && !receiveCancelled) {
            if (demand == 0 && (inboundClosed || newDemand.get() == 0 || foldDemand() == 0)) {
                break;
            }
            RdmaMessage m = q.poll();
            if (demand != Long.MAX_VALUE) {
                demand--;
            }
            messageCredits.onDelivered();
            n++;
            try {
                r.onNext(m);
            } catch (Throwable t) {
                // Reactive Streams 2.13: onNext must not throw; one that does is treated as cancelled
                Exceptions.throwIfJvmFatal(t);
                receiveCancelled = true;
                receiver = null;
                Operators.onErrorDropped(t, r.currentContext());
            }
        }
        if (n > 0) {
            MESSAGES_RECEIVED.lazySet(this, messagesReceived + n);
        }
        return n;
    }

    /** Adds the demand the subscriber signalled since the last look; returns it. */
    private long foldDemand() {
        long d = newDemand.getAndSet(0);
        if (d != 0 && !inboundClosed) {
            demand = demand + d < 0 ? Long.MAX_VALUE : demand + d;
            messageCredits.onDemand(d);
        }
        return d;
    }

    private void terminateReceive(Throwable error) {
        if (receiveTerminated) {
            return;
        }
        receiveTerminated = true;
        inboundClosed = true;
        receiveError = error;
        releaseQueued();
        oweInboundClosedNotice();
        signalReceiveTerminal();
    }

    /**
     * Ends a receive side that has no subscriber yet, for the one that may still come. If the peer began
     * its close and every message it numbered arrived and was handed on, its stream is whole: completion
     * (a peer that connects and closes without sending is an empty stream). Otherwise, when this side
     * closed first or the peer's messages are not all in, what it meant for the subscriber is lost:
     * {@link ConnectionClosedException}.
     */
    private void endUnsubscribedReceive() {
        if (peerCloseMask != 0 && ready.isEmpty() && reorder.esn() == peerNextPsn) {
            receiveTerminated = true;
            inboundClosed = true;
            signalReceiveTerminal();
        } else {
            terminateReceive(new ConnectionClosedException(name + " closed before receive() was subscribed", false));
        }
    }

    private void signalReceiveTerminal() {
        receiveTerminalReady = true;
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (r != null && terminalSent.compareAndSet(false, true)) {
            receiver = null;
            Throwable e = receiveError;
            if (e != null) {
                r.onError(e);
            } else {
                r.onComplete();
            }
        }
    }

    @Override
    public void onPeerClose(RcSubchannel subchannel, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        if (abort) {
            terminate(new ConnectionClosedException("peer aborted " + name + (reason.isEmpty() ? "" : ": " + reason), true));
            return;
        }
        int bit = 1 << subchannel.rail();
        if ((peerCloseMask & bit) == 0 && railMask != 0) {
            peerCloseExpected = railMask;
        }
        peerCloseMask |= bit;
        if (last) {
            peerFinalMask |= bit;
            if (railMask != 0) {
                peerFinalExpected = railMask;
            }
        }
        peerNextPsn = nextPsn;
        closeRequest.compareAndSet(CLOSE_NONE, CLOSE_GRACEFUL);
        disposed = true;
    }

    /**
     * Rail failover (seed 000 &sect;4.2: any subchannel can carry any message; seed 003's failover to
     * another rail): the scheduler stops using the failed subchannel, and everything sent on it without
     * a completion is sent again with its PSN on the remaining rails: small messages (kept until their
     * completion), and rendezvous messages from their RTS so that the receiver confirms the message
     * buffer is still theirs before any stripe is written again. The receiver drops copies by PSN. The
     * connection fails only when no usable rail remains.
     */
    @Override
    public void onFailure(RcSubchannel subchannel, RdmaException error) {
        if (terminated || (localFinalSent && peerFinal())) {
            // after both last frames nothing travels any more: the peer freeing its queue pairs is no failure
            return;
        }
        scheduler.onSubchannelFailed(subchannel);
        if (!railLeft() || closeRequest.get() == CLOSE_ABORT) {
            terminate(error);
            return;
        }
        int f = subchannel.rail();
        railFailures++;
        railDownToSend |= 1L << f;
        creditResync = true;
        spillOutOfOrder();
        AssembledMessage p = partial[f];
        if (p != null) {
            setPartial(f, null);
            p.release();
        }
        dropping[f] = false;
        if (current != null && currentRail == f) {
            current = null;
            currentOp = null;
        }
        subchannel.forEachUnackedSend((token, memory, frameOffset) -> keepPackedForResend(f, token, memory, frameOffset));
        for (int idx = 0; idx < inflightMessages.length; idx++) {
            if (inflightMessages[idx] != null && messageRail[idx] == f && !resendListed(messagePsn[idx])) {
                addResend(messagePsn[idx]);
            }
        }
        RendezvousSends t = rvSends;
        for (int e = 0; e < t.state.length; e++) {
            int s = t.state[e];
            boolean lost = s == RendezvousSends.RTS_SENT && t.rtsRail[e] == f;
            if (s == RendezvousSends.POSTING || s == RendezvousSends.POSTED) {
                for (int r = 0; r < subchannels.length; r++) {
                    long bit = 1L << r;
                    if ((t.postedMask[e] & bit) != 0 && (t.completedMask[e] & bit) == 0 && t.carrier[e][r] == f) {
                        lost = true;
                    }
                }
            }
            if (lost) {
                t.setState(e, RendezvousSends.RESEND);
                t.postedMask[e] = t.completedMask[e];
                if (!resendListed(t.psn[e])) {
                    addResend(t.psn[e]);
                }
            }
        }
    }

    /**
     * A frame without a completion on a failed rail: if packed, its messages (released when packed) are
     * copied out of the send buffer and kept as in-flight messages of that rail, to be re-sent with their
     * PSNs like any other. Off the data path: only on a rail failure.
     */
    private void keepPackedForResend(int rail, long token, DirectBuffer memory, int frameOffset) {
        if (token < 0 || (token & PACKED_TOKEN) == 0) {
            return;
        }
        int firstPsn = (int) token;
        int count = (int) ((token >>> 32) & 0xFFFF);
        int pos = DataFrameCodec.payloadOffset(frameOffset);
        for (int i = 0; i < count; i++) {
            int len = DataFrameCodec.packedLength(memory, pos);
            byte[] copy = new byte[len];
            memory.getBytes(pos + DataFrameCodec.PACKED_PREFIX_BYTES, copy);
            pos += DataFrameCodec.PACKED_PREFIX_BYTES + len;
            int psn = firstPsn + i;
            int idx = psn & inflightMask;
            inflightMessages[idx] = RdmaMessage.of(copy);
            messagePsn[idx] = psn;
            messageRail[idx] = rail;
        }
        packedMessagesTakenBack += count;
    }

    /** Messages of packed frames taken back from the send buffers of failed rails to be sent again (progress thread; tests). */
    long packedMessagesTakenBack() {
        return packedMessagesTakenBack;
    }

    @Override
    public void onPeerRailDown(RcSubchannel subchannel, int failedRail) {
        if (failedRail < 0 || failedRail >= subchannels.length) {
            protocolFailure("peer reported rail " + failedRail + " failed but the connection has " + subchannels.length + " rails");
            return;
        }
        RcSubchannel sc = subchannels[failedRail];
        if (!sc.isFailed()) {
            // the peer saw it first: stop using the rail here too (onFailure re-sends what was on it)
            sc.failedByPeer();
            railDownToSend &= ~(1L << failedRail);
        } else {
            spillOutOfOrder();
        }
    }

    /**
     * Copies the messages waiting out of order into their own buffers and frees the receive buffers
     * they hold. After a failover the PSNs they wait for come again over the live rails, whose buffers
     * those messages may all hold: without this the re-sent messages would find no credit. Only on a
     * rail failure, so the copy is off the normal data path.
     */
    private void spillOutOfOrder() {
        reorder.replaceQueued(m -> {
            if (!(m instanceof ReceivedMessage r)) {
                return m;
            }
            AssembledMessage copy = new AssembledMessage(this, r.psn(), r.lengthBytes());
            copy.append(r.content(), 0, r.lengthBytes());
            assembledOutstanding.incrementAndGet();
            r.release();
            return copy;
        });
    }

    /** Tells the peer about rails that failed here, on any live rail that can send a control frame. */
    private int sendRailDowns() {
        if (railDownToSend == 0) {
            return 0;
        }
        int work = 0;
        for (int f = 0; f < subchannels.length; f++) {
            if ((railDownToSend & (1L << f)) == 0) {
                continue;
            }
            for (RcSubchannel sc : subchannels) {
                if (sc.carriesControl() && sc.sendRailDown(f)) {
                    railDownToSend &= ~(1L << f);
                    work++;
                    break;
                }
            }
        }
        return work;
    }

    private boolean resendListed(int psn) {
        for (int k = 0; k < resendCount; k++) {
            if (resendPsns[k] == psn) {
                return true;
            }
        }
        return false;
    }

    /** Rails that failed while the connection went on over the others. */
    /** The subchannel of {@code rail} (progress thread; tests). */
    RcSubchannel subchannel(int rail) {
        return subchannels[rail];
    }

    /** Packed DATA frames sent over every rail (progress thread; tests). */
    long packedFramesSent() {
        long n = 0;
        for (RcSubchannel sc : subchannels) {
            n += sc.packedFramesSent();
        }
        return n;
    }

    /** Message credits the peer granted and this side has not used (progress thread; tests). */
    long sendCreditsHeld() {
        return sendCredits.credits();
    }

    int railFailures() {
        return railFailures;
    }

    /**
     * The graceful close, in three steps (see {@code CloseFrameCodec}): once this side's sends are done, a
     * CLOSE on every live rail (no message after it; credits and CTSs still go, so the peer can finish its
     * own messages); once the peer's CLOSE arrived too, a FINAL on those rails (nothing at all after it);
     * once the peer's FINAL arrived, the receive side is done and this side's frames completed, the
     * connection terminates. Closing with no {@code receive()} subscriber closes the inbound side first,
     * so the peer fails what it cannot deliver rather than wait for a subscriber that will not come.
     */
    private int progressClose() {
        if (closeRequest.get() != CLOSE_GRACEFUL) {
            return 0;
        }
        int work = probeSilentRails();
        if (!localCloseSent) {
            if (!receiveSubscribed.get() && !receiveTerminated) {
                endUnsubscribedReceive();
                work++;
            }
            SendOp op = sendOps.peek();
            while (op != null && op.firstPsn < 0) {
                // sends not yet started when the close came are refused, never half sent
                sendOps.poll();
                op.cancelFromUser();
                finishOp(op, closedError());
                op = sendOps.peek();
            }
            if (!sendOps.isEmpty() || current != null || !inflightOps.isEmpty() || resendCount > 0) {
                return work;
            }
            int closeMask = 0;
            for (RcSubchannel sc : subchannels) {
                if (sc.framesInFlight() > 0 && !sc.isFailed()) {
                    return work;
                }
                if (sc.isUsable()) {
                    closeMask |= 1 << sc.rail();
                }
            }
            localCloseMask = closeMask;
            localCloseSent = true;
        }
        if (!localFinalSent) {
            // after the peer's CLOSE this side has nothing more to send it: the CLOSE (or a second one) is the last frame
            boolean last = peerClosed();
            boolean all = true;
            for (RcSubchannel sc : subchannels) {
                if ((localCloseMask & (1 << sc.rail())) == 0 || (last ? sc.finalSent() : sc.closeSent())) {
                    continue;
                }
                if (sc.sendGracefulClose(nextPsn, localCloseMask, last)) {
                    work++;
                } else {
                    all = false;
                }
            }
            if (!all || !last) {
                return work;
            }
            localFinalSent = true;
        }
        if (peerFinal() && (receiveTerminated || receiver == null)) {
            for (RcSubchannel sc : subchannels) {
                if (sc.sendBuffersInUse() > 0 && !sc.isFailed()) {
                    return work;
                }
            }
            terminate(null);
            return work + 1;
        }
        return work;
    }

    /**
     * The peer's CLOSE arrived on some rails but not yet on others: sends one CREDIT frame on each of
     * those others. A rail whose path died after it last carried anything from here has a QP that saw
     * nothing wrong; the peer's CLOSE lost on it would be waited for forever, and the peer, having sent
     * its last frame, cannot say the rail failed. The probe makes this side's QP retry on a dead path
     * until it fails, and the rail then counts as failed here (so its CLOSE is not waited for); on a
     * live path it is one credit frame, which carries nothing new.
     */
    private int probeSilentRails() {
        if (peerCloseMask == 0 || localFinalSent || peerClosed()) {
            return 0;
        }
        int work = 0;
        for (RcSubchannel sc : subchannels) {
            int bit = 1 << sc.rail();
            if ((peerCloseExpected & bit) != 0 && (peerCloseMask & bit) == 0 && (closeProbed & bit) == 0
                && (sc.isFailed() || sc.finalSent() || sc.sendCreditFrame())) {
                closeProbed |= bit;
                work++;
            }
        }
        return work;
    }

    /** CLOSE arrived on every rail the peer sends it on (all rails, or those it named after a failover). */
    private boolean peerClosed() {
        return arrivedOnEveryRail(peerCloseMask, peerCloseExpected);
    }

    /** The peer's last frame arrived on every rail it sends one on: nothing more comes from it. */
    private boolean peerFinal() {
        return arrivedOnEveryRail(peerFinalMask, peerFinalExpected);
    }

    private boolean arrivedOnEveryRail(int arrived, int expected) {
        for (RcSubchannel sc : subchannels) {
            if (sc.isFailed()) {
                // nothing can come over a rail that failed here
                expected &= ~(1 << sc.rail());
            }
        }
        return arrived != 0 && (arrived & expected) == expected;
    }

    private ConnectionClosedException closedError() {
        return new ConnectionClosedException(name + " is closed; open a new connection to send", false);
    }

    private void terminate(@Nullable Throwable error) {
        if (terminated) {
            return;
        }
        terminated = true;
        disposed = true;
        if (error != null) {
            failure = error;
        }
        Throwable sendError = error != null ? error : closedError();
        current = null;
        currentOp = null;
        for (int idx = 0; idx < inflightMessages.length; idx++) {
            RdmaMessage m = inflightMessages[idx];
            if (m != null) {
                inflightMessages[idx] = null;
                m.release();
            }
        }
        resendCount = 0;
        for (SendOp op : List.copyOf(sendOps)) {
            op.cancelFromUser();
            finishOp(op, sendError);
        }
        for (SendOp op : List.copyOf(inflightOps)) {
            finishOp(op, sendError);
        }
        if (error != null) {
            terminateReceive(error);
            if (!(error instanceof ConnectionClosedException)) {
                // a transport or protocol failure: flush whatever is outstanding; a close lets its CLOSE frame go out
                for (RcSubchannel sc : subchannels) {
                    sc.abort();
                }
            }
        } else if (!receiveTerminated) {
            endUnsubscribedReceive();
        }
        SendOp op;
        while ((op = newSends.poll()) != null) {
            op.cancelFromUser();
            op.sink.error(withPublisherError(sendError, op));
            op.drainQueue();
        }
        node.onConnectionTerminated(this);
        onClose.tryEmitEmpty();
    }

    private void maybeFree() {
        drainReleased();
        // rendezvous and reassembled messages hold nothing of the rails (a node pool slot, their own
        // buffer): they do not keep the QPs, CQs and rail buffers; see unlistOnceMessagesReleased
        if (!resourcesFreed && buffersOutstandingOnRails() == 0) {
            for (RcSubchannel sc : subchannels) {
                if (sc.sendBuffersInUse() > 0 && !sc.isFailed()) {
                    return;
                }
            }
            freeResources();
        }
    }

    private int buffersOutstandingOnRails() {
        int held = 0;
        for (RcSubchannel sc : subchannels) {
            held += sc.receiveBuffersHeld();
        }
        return held;
    }

    /** Destroys QPs, CQs and pools; called once when nothing references them (or by node close). */
    void freeResources() {
        if (resourcesFreed) {
            return;
        }
        resourcesFreed = true;
        for (RcSubchannel sc : subchannels) {
            sc.close();
        }
        // only now, with the QPs destroyed, can no WRITE of this connection still read a staging slot or
        // land in a message buffer: the node's pools may hand them to another connection
        MessageBufferPool staging = sendPool;
        if (staging != null) {
            rvSends.clear(e -> rvSends.releaseSource(e, staging::release));
        }
        MessageBufferPool pool = receivePool;
        if (pool != null) {
            rvReceives.clear(pool::release);
        }
        node.onConnectionRailsFreed(this);
        unlistOnceMessagesReleased();
    }

    /**
     * The node lists a connection whose rails are freed until the rendezvous and reassembled messages it
     * delivered are released too, so that {@link RdmaNode#metrics()} and node close account for them.
     * Called after the rails were freed and after each such message's last release, on any thread: both
     * sides write first ({@link #resourcesFreed}, the counters) and read the other after, all volatile, so
     * at least one of them sees everything released; the node's removal is idempotent.
     */
    private void unlistOnceMessagesReleased() {
        if (rvOutstanding.get() == 0 && assembledOutstanding.get() == 0) {
            node.onConnectionFreed(this);
        }
    }

    /**
     * Node close (its progress thread stopped): stop now and free everything, whatever is held.
     *
     * @return the received messages the application still held, or null when it held none
     */
    RdmaLeakReporter.@Nullable Leak forceClose() {
        if (!terminated) {
            for (RcSubchannel sc : subchannels) {
                sc.sendAbort(nextPsn, "node closed");
            }
            // releases what the connection itself still queued: what is left is the application's
            terminate(new ConnectionClosedException(name + ": its node was closed", false));
        }
        RdmaLeakReporter.Leak leak = heldByApplication();
        freeResources();
        return leak;
    }

    /**
     * Received messages whose reference count is above 0 after {@link #terminate}: by reference count, not
     * by {@link #buffersOutstanding()}, so a release still on its way to the progress thread is not a leak.
     */
    private RdmaLeakReporter.@Nullable Leak heldByApplication() {
        List<String> examples = new java.util.ArrayList<>(RdmaLeakReporter.Leak.MAX_EXAMPLES);
        int held = 0;
        for (ReceivedMessage[] rail : receivedMessages) {
            for (ReceivedMessage m : rail) {
                held += heldExample(m, examples);
            }
        }
        for (int i = 0; i < viewsCreated; i++) {
            held += heldExample(allViews[i], examples);
        }
        for (RendezvousMessage m : rvMessages) {
            held += heldExample(m, examples);
        }
        // reassembled messages are not kept anywhere once handed out: counted only
        held += assembledOutstanding.get();
        return held == 0 ? null : new RdmaLeakReporter.Leak(name, held, examples);
    }

    private static int heldExample(@Nullable RdmaMessage m, List<String> examples) {
        if (m == null || m.refCnt() <= 0) {
            return 0;
        }
        if (examples.size() < RdmaLeakReporter.Leak.MAX_EXAMPLES) {
            examples.add(m.toString());
        }
        return 1;
    }

    @Override
    public String toString() {
        return "RdmaConnection{" + name + "}";
    }

    /** Protocol state for diagnostics (progress thread; tests). */
    String describe() {
        StringBuilder sb = new StringBuilder(name).append(": nextPsn=").append(nextPsn).append(", esn=").append(reorder.esn())
            .append(", queued=").append(reorder.queued()).append(", ready=").append(ready.size()).append(", demand=").append(demand)
            .append(", ").append(messageCredits).append(", ").append(sendCredits).append(", rendezvous sends=").append(rvSends.inUse())
            .append(", receives pending=").append(rvReceives.pending).append(" granted=").append(rvReceives.granted)
            .append(", terminated=").append(terminated).append(" failure=").append(failure)
            .append(", current=").append(current).append(", sendOps=").append(sendOps.size()).append(", inflightOps=").append(inflightOps.size())
            .append(", close: sent=").append(localCloseSent).append(" final=").append(localFinalSent).append(" peer=")
            .append(Integer.toBinaryString(peerCloseMask)).append(" peerFinal=").append(Integer.toBinaryString(peerFinalMask))
            .append(", peerInboundClosed=").append(peerInboundClosed).append(", inboundClosed=").append(inboundClosed);
        for (RcSubchannel sc : subchannels) {
            sb.append("\n  ").append(sc).append(" framesInFlight=").append(sc.framesInFlight()).append(" writes=").append(sc.writesInFlight());
        }
        return sb.toString();
    }

    /** {@link #receive()}: one subscriber; signals from the progress thread. */
    private final class ReceiveFlux extends Flux<RdmaMessage> {
        @Override
        public void subscribe(CoreSubscriber<? super RdmaMessage> actual) {
            if (!receiveSubscribed.compareAndSet(false, true)) {
                Operators.error(actual, new IllegalStateException("receive() of " + name
                    + " allows one subscriber and already has one; share it with publish() or share()"));
                return;
            }
            actual.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                    if (n <= 0) {
                        if (!badRequest) {
                            badRequestN = n;
                            badRequest = true;
                            wakeUp();
                        }
                        return;
                    }
                    long prev;
                    long next;
                    do {
                        prev = newDemand.get();
                        next = prev + n < 0 ? Long.MAX_VALUE : prev + n;
                    } while (!newDemand.compareAndSet(prev, next));
                    wakeUp();
                }

                @Override
                public void cancel() {
                    receiveCancelled = true;
                    receiver = null;
                }
            });
            if (!receiveCancelled) {
                receiver = actual;
            }
            if (receiveTerminalReady && resourcesFreed) {
                // terminated before this subscriber came and no progress thread will look again
                signalReceiveTerminal();
            }
        }
    }
}
