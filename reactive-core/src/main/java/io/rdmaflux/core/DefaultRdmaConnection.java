package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.engine.ProgressEngine;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.internal.credit.MessageCredits;
import io.rdmaflux.core.internal.credit.SendCredits;
import io.rdmaflux.core.internal.onesided.OneSidedEngine;
import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.core.onesided.OneSided;
import io.rdmaflux.verbs.ProgressAgent;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connection: the public {@link RdmaConnection} façade, the router of its channels' events, and the
 * duty cycle that runs its stages in order over an explicit {@link ConnectionState} on the progress
 * thread. Every piece of protocol state lives in a stage (one concept each); other threads reach the
 * connection only through lock-free inputs (new sends, demand, released messages, close requests).
 *
 * <pre>
 * send(Publisher) -&gt; SendOps -&gt; SendPipeline (credits, PSN, scheduler, pack/fragment) -&gt; Channel
 *                                    |-&gt; RendezvousSender (RTS, stripes, completion filter) -&gt; Channel
 *                                    '-&gt; InflightLedger (kept for failover)
 * Channel events -&gt; InboundAssembler / RendezvousReceiver -&gt; InboundDelivery (PSN/ESN) -&gt; receive()
 * release() -&gt; ReceiveBuffers -&gt; Channel.releaseReceiveBuffer; CreditGrantor -&gt; credits to the peer
 * Failover, CloseHandshake, ConnectionResources: rail failure, the graceful close, freeing
 * </pre>
 *
 * <p>Large messages go by the RDMA WRITE rendezvous of seed 001 &sect;3, Fig. 2 ({@link RendezvousSender},
 * {@link RendezvousReceiver}), striped over rails by the scheduler (seed 000 &sect;4).
 */
final class DefaultRdmaConnection implements RdmaConnection, ProgressAgent, ChannelEvents {
    private static final int CLOSE_NONE = 0;
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
    private final Channel[] channels;
    /** This connection's place in the node engine's duty cycle; null until {@link #scheduledAs}. */
    private volatile ProgressEngine.@Nullable Registration registration;
    private final Runnable wakeHandle = this::wakeUp;
    private final int peerMaxMessageBytes;
    private final int sendOpQueueCapacity;
    private final MessageCredits messageCredits;
    private final SendCredits sendCredits;

    // stages
    private final ReceiveBuffers buffers;
    private final InboundDelivery delivery;
    private final InboundAssembler assembler;
    private final RendezvousReceiver rvReceiver;
    private final InflightLedger ledger;
    private final SendOps ops;
    private final RendezvousSender rvSender;
    private final RendezvousMode rendezvousMode;
    /** The node device of each rail: the keys each rail uses. */
    private final RailDevices devices;
    private final SendPipeline pipeline;
    private final CreditGrantor grantor;
    private final CloseHandshake close;
    private final Failover failover;
    private final CreditProbe probe;
    private final ConnectionResources resources;
    /**
     * Made on first use (a one-sided call here, or a one-sided control frame from the peer): most of many
     * peers never do put/get, and the engine's queues and tables are some 3 KB per connection.
     */
    private volatile @Nullable OneSidedEngine oneSided;
    /** The error that ended the connection, for an engine made after it (guarded by {@link #oneSidedLock}). */
    private @Nullable Throwable oneSidedEnd;
    private final Object oneSidedLock = new Object();

    // inputs from other threads
    private final AtomicInteger closeRequest = new AtomicInteger(CLOSE_NONE);
    private volatile boolean disposed;
    /** Progress thread: {@link #closeRequest} was graceful at the start of this duty cycle ({@link #drainInputs}). */
    private boolean gracefulCloseSeen;
    private final Sinks.Empty<Void> onClose = Sinks.empty();

    // progress thread
    private ConnectionState state = ConnectionState.OPEN;
    /** {@code state.terminated()}, kept as a field: read per frame and per message on the data path. */
    private boolean terminated;
    private volatile @Nullable Throwable failure;
    /** The duty cycle's clock reading: completion times are taken from it, not from a clock read per message. */
    private long cycleNs;

    DefaultRdmaConnection(RdmaNode node, String name, Channel[] channels, SubchannelScheduler scheduler,
                          int peerMaxMessageBytes, int localMaxMessageBytes, int sendQueue, int reorderWindow,
                          int creditThreshold, boolean peerRendezvous, RendezvousMode rendezvousMode, RailDevices devices) {
        this.rendezvousMode = rendezvousMode;
        this.devices = devices;
        this.node = node;
        this.name = name;
        this.channels = channels;
        this.peerMaxMessageBytes = peerMaxMessageBytes;
        this.sendCredits = new SendCredits(sendQueue);
        this.messageCredits = new MessageCredits(creditThreshold);
        int sendSlots = 0;
        int peerBuffers = 0;
        for (Channel ch : channels) {
            ch.events(this);
            sendSlots += ch.sendBufferCount();
            peerBuffers += ch.peerReceiveBuffers();
        }
        this.sendOpQueueCapacity = peerBuffers + sendQueue;
        boolean rendezvous = node.rendezvousBuffers() > 0;
        // large messages go by rendezvous only to a peer that accepts RTS; else as DATA fragments
        MessageBufferPool sendPool = rendezvous && peerRendezvous ? node.rendezvousPool(false) : null;
        MessageBufferPool receivePool = rendezvous ? node.rendezvousPool(true) : null;

        this.buffers = new ReceiveBuffers(this, channels);
        this.delivery = new InboundDelivery(this, messageCredits, buffers, channels.length, reorderWindow);
        this.assembler = new InboundAssembler(this, messageCredits, buffers, delivery, channels.length, localMaxMessageBytes);
        this.rvReceiver = new RendezvousReceiver(this, channels, messageCredits, delivery, receivePool, node.rendezvousBuffers(),
            reorderWindow, localMaxMessageBytes, scheduler, devices);
        // PSNs not yet completed at this side span at most the messages the send slots carry (packed frames
        // carry several) plus what the peer's reorder window admits
        this.ledger = new InflightLedger(sendSlots * DataFrameCodec.MAX_PACKED_MESSAGES + reorderWindow);
        this.ops = new SendOps(this, scheduler, ledger, sendCredits);
        this.rvSender = new RendezvousSender(this, channels, scheduler, ops, sendPool, node.rendezvousThresholdBytes(),
            node.rendezvousBuffers(), node.registrationCache(), rendezvousMode, devices);
        this.pipeline = new SendPipeline(this, node, channels, scheduler, sendCredits, ledger, ops, rvSender, peerMaxMessageBytes,
            sendOpQueueCapacity - sendQueue);
        this.grantor = new CreditGrantor(channels, messageCredits, buffers, assembler, rvReceiver, node.messageCreditsPerBuffer());
        this.close = new CloseHandshake(this, channels);
        this.failover = new Failover(this, channels, scheduler);
        this.resources = new ConnectionResources(this, node, channels);
        this.probe = new CreditProbe(channels, sendCredits, ops, pipeline, node.creditProbeIntervalNs(), node.clock().nanoTime());
    }

    String name() {
        return name;
    }

    /**
     * Work was handed in (from another thread, or from another agent's callback): this connection is visited
     * in the next duty cycle and the progress thread stops idling (a fence and a volatile read if busy).
     */
    /** {@link #wakeUp} as one object, for the node's shared pools to call when they have room again. */
    Runnable wakeHandle() {
        return wakeHandle;
    }

    void wakeUp() {
        ProgressEngine.Registration r = registration;
        if (r != null) {
            r.signal();
        }
        node.wake();
    }

    /**
     * Registered with the node's engine (before its first duty cycle): when every channel signals the
     * completions that reach it, the connection is signal driven, and a busy engine skips it while it is idle
     * (its timers, such as the credit probe, then run late by at most the engine's rotation).
     */
    /** Signal-driven scheduling: only when no channel has work that arrives unsignalled now (a polled eager ring). */
    @Override
    public boolean mayWaitForSignal() {
        for (Channel ch : channels) {
            if (!ch.waitsOnlyForSignals()) {
                return false;
            }
        }
        return true;
    }

    void scheduledAs(ProgressEngine.Registration r) {
        boolean signalled = channels.length > 0;
        for (Channel ch : channels) {
            signalled &= ch.signalArrivals(r::signal);
        }
        registration = r;
        if (signalled) {
            r.signalDriven();
        }
    }

    boolean onProgressThread() {
        return node.isProgressThread();
    }

    // ---------------------------------------------------------------- public API (any thread)

    @Override
    public Mono<Void> send(Publisher<? extends RdmaMessage> messages) {
        return Mono.create(sink -> {
            SendOp op = new SendOp(this, sink, sendOpQueueCapacity);
            sink.onCancel(op::cancelFromUser);
            if (disposed) {
                Throwable failed = failure;
                sink.error(failed != null && !(failed instanceof ConnectionClosedException) ? failed
                    : new ConnectionClosedException("send on " + name + " which is closed", false));
                reactor.util.context.Context context = reactor.util.context.Context.of(sink.contextView());
                Flux.from(messages).contextWrite(context).take(CLOSED_SEND_DRAIN_LIMIT, true)
                    .subscribe(m -> SendOp.discard(m, context), e -> { }, () -> { }, s -> s.request(Long.MAX_VALUE));
                return;
            }
            messages.subscribe(op);
            ops.offer(op);
            wakeUp();
        });
    }

    @Override
    public Flux<RdmaMessage> receive() {
        return new ReceiveFlux(this, delivery);
    }

    @Override
    public Mono<Void> onClose() {
        return onClose.asMono();
    }

    @Override
    public void close() {
        requestGracefulClose();
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

    /** Immutable snapshots, one per rail in rail order; any thread (values may lag the progress thread). */
    @Override
    public List<SubchannelSnapshot> subchannels() {
        List<SubchannelSnapshot> rails = new ArrayList<>(channels.length);
        for (Channel ch : channels) {
            rails.add(SubchannelSnapshot.of(ch));
        }
        return List.copyOf(rails);
    }

    @Override
    public OneSided oneSided() {
        if (devices.spansDevices()) {
            // exposures and local regions are registered on the node's first device only
            throw new UnsupportedOperationException("one-sided RDMA on connection " + name + " is not supported: its rails span"
                + " several devices; connect with ConnectionSpec.rails(..) naming rails of one device for one-sided RDMA");
        }
        return oneSidedEngine();
    }

    @Override
    public ConnectionMetrics metrics() {
        EnumMap<FrameType, Long> sent = new EnumMap<>(FrameType.class);
        EnumMap<FrameType, Long> received = new EnumMap<>(FrameType.class);
        for (FrameType t : FrameType.values()) {
            long s = 0;
            long r = 0;
            for (Channel ch : channels) {
                s += ch.framesSent(t);
                r += ch.framesReceived(t);
            }
            sent.put(t, s);
            received.put(t, r);
        }
        long bytesSent = 0;
        for (Channel ch : channels) {
            bytesSent += ch.bytesSent();
        }
        return new ConnectionMetrics(pipeline.messagesSent(), ops.messagesDelivered(), delivery.messagesReceived(), buffers.held(),
            sendCredits.credits(), sendCredits.maxOutstandingSeen(), delivery.outOfOrder(), sent, received,
            bytesSent, delivery.bytesReceived(), pipeline.creditStalls(), ledger.messagesResent(), ops.deliveryTotalNs());
    }

    /**
     * Whether the rails' resources (QPs, CQs, send and receive buffers) were freed: after close, once no
     * receive buffer is held and nothing is in flight. Rendezvous and reassembled messages still held do
     * not delay it; the node lists the connection until they are released too.
     */
    boolean isFreed() {
        return resources.isFreed();
    }

    /** Receive buffers held plus reassembled and rendezvous messages not released: what a leak check expects to be 0. */
    int buffersOutstanding() {
        return buffers.held() + assembler.outstanding() + rvReceiver.outstanding();
    }

    // the final release of a delivered message, any thread

    void onReleased(ReceivedMessage m) {
        buffers.onReleased(m);
    }

    void onRendezvousReleased() {
        rvReceiver.onReleased();
    }

    void onAssembledReleased() {
        assembler.onAssembledReleased();
    }

    // ---------------------------------------------------------------- the duty cycle (progress thread)

    @Override
    public String roleName() {
        return name;
    }

    /**
     * One duty cycle. An unexpected exception from it (a bug here or in a channel kind) aborts this
     * connection with {@link RdmaException.Category#INTERNAL} and is rethrown to the engine's error
     * handler: the connection's state may be half updated, so carrying on could only hang or corrupt.
     */
    @Override
    public int doWork(long nowNs) {
        try {
            return dutyCycle(nowNs);
        } catch (RuntimeException | Error e) {
            if (!terminated) {
                RdmaException internal = new RdmaException(RdmaException.Category.INTERNAL, name
                    + " aborted: unexpected " + e + " on its progress thread (a bug: please report it with the cause's stack trace)", null, e);
                try {
                    abortWith("internal error", internal);
                } catch (RuntimeException nested) {
                    e.addSuppressed(nested);
                    terminate(internal);
                }
            }
            throw e;
        }
    }

    private static boolean isInternal(Throwable error) {
        return error instanceof RdmaException && ((RdmaException) error).category() == RdmaException.Category.INTERNAL;
    }

    private int dutyCycle(long nowNs) {
        if (resources.isFreed()) {
            return 0;
        }
        cycleNs = nowNs;
        int work = drainInputs();
        for (Channel ch : channels) {
            work += ch.doWork(nowNs);
        }
        if (!terminated) {
            OneSidedEngine os = oneSided;
            if (os != null) {
                work += os.doWork(nowNs);
            }
            work += rvSender.post(nowNs, pipeline.nextPsn());
            work += transmit(nowNs);
            work += pipeline.requestMore();
            work += rvReceiver.grant();
            work += rvReceiver.postReads(nowNs);
            work += probe.probe(nowNs);
        }
        int delivered = delivery.deliver();
        work += delivered;
        // messages the subscriber released in onNext: their buffers count as free for the credits below
        work += buffers.drainReleased();
        if (delivered > 0 && !terminated) {
            // a subscriber that answers in onNext (an echo, request/response, the OSU ping-pong) handed its
            // answer to a send() just now: it goes out in this cycle rather than the next, which on the soft
            // provider over IP saves a whole engine pass (a socket poll) per message of a round trip
            work += transmit(nowNs);
        }
        if (!terminated) {
            work += grantor.flush();
            work += failover.sendRailDowns();
            work += close.sendInboundClosedNotices();
            work += close.progress();
        }
        if (terminated) {
            resources.maybeFree();
        }
        return work;
    }

    /** Transmits what the send ops hold (as far as credits allow) and posts it to the rails. @return work done */
    private int transmit(long nowNs) {
        int work = pipeline.transmit(nowNs);
        for (Channel ch : channels) {
            ch.flushSends();
        }
        return work;
    }

    private int drainInputs() {
        int work = buffers.drainReleased();
        // read before the new sends are taken: a close this cycle acts on is then one every send handed in
        // before it (send, then close() on one thread) was taken ahead of, never one that slipped in between
        gracefulCloseSeen = closeRequest.get() == CLOSE_GRACEFUL;
        work += ops.drainNew(state.closeSent());
        work += delivery.drainInputs();
        if (closeRequest.get() == CLOSE_ABORT && !terminated) {
            abortWith("aborted by the application", new ConnectionClosedException(name + " was aborted", false));
        }
        return work;
    }

    // ---------------------------------------------------------------- lifecycle (progress thread)

    ConnectionState state() {
        return state;
    }

    boolean isTerminated() {
        return terminated;
    }

    /** Moves the lifecycle forward to {@code next} (never back). @return the state now */
    ConnectionState advance(ConnectionState next) {
        if (next.compareTo(state) > 0) {
            state = next;
            terminated = next.terminated();
        }
        return state;
    }

    /** A graceful close was asked for, here or by the peer (any thread). */
    void requestGracefulClose() {
        closeRequest.compareAndSet(CLOSE_NONE, CLOSE_GRACEFUL);
        disposed = true;
    }

    /**
     * Whether a graceful close was asked for by the start of this duty cycle (progress thread): the close
     * handshake starts from it, so that the sends handed in before the close were taken this cycle.
     */
    boolean gracefulCloseRequested() {
        return gracefulCloseSeen;
    }

    boolean abortRequested() {
        return closeRequest.get() == CLOSE_ABORT;
    }

    @Nullable Throwable failure() {
        return failure;
    }

    long cycleNs() {
        return cycleNs;
    }

    /**
     * The error a send on this closed connection fails with: the transport or protocol failure that ended
     * it, so a caller learns why; a {@link ConnectionClosedException} after a close.
     */
    RdmaException closedError() {
        Throwable failed = failure;
        if (failed instanceof RdmaException && !(failed instanceof ConnectionClosedException)) {
            return (RdmaException) failed;
        }
        return new ConnectionClosedException(name + " is closed; open a new connection to send", false);
    }

    /** The peer broke the protocol: an abort CLOSE on every rail, then the connection terminates. */
    void protocolFailure(String message) {
        abortWith(message, new RdmaProtocolException(message + "; the connection " + name + " is aborted"));
    }

    /** An abort CLOSE naming {@code reason} on every rail, then termination with {@code error}. */
    void abortWith(String reason, Throwable error) {
        int nextPsn = pipeline.nextPsn();
        for (Channel ch : channels) {
            ch.sendAbort(nextPsn, reason);
        }
        terminate(error);
    }

    /**
     * Ends the connection (once): every send fails with {@code error} (or a closed error after a graceful
     * close), the receive side ends, and the rails are freed once nothing of theirs is held.
     */
    void terminate(@Nullable Throwable error) {
        if (terminated) {
            return;
        }
        if (error != null) {
            failure = error;
        }
        state = ConnectionState.TERMINATED;
        terminated = true;
        disposed = true;
        Throwable sendError = error != null ? error : closedError();
        pipeline.clear();
        ledger.releaseAll();
        ops.failAll(sendError);
        if (error != null) {
            delivery.terminate(error);
            if (!(error instanceof ConnectionClosedException) && !isInternal(error)) {
                // a transport or protocol failure: flush whatever is outstanding; a close (and an internal
                // error's abort, so the peer hears it) lets its CLOSE frame go out
                for (Channel ch : channels) {
                    ch.abort();
                }
            }
        } else if (!delivery.receiveTerminated()) {
            delivery.endUnsubscribed();
        }
        ops.failNew(sendError);
        OneSidedEngine os;
        synchronized (oneSidedLock) {
            oneSidedEnd = sendError;
            os = oneSided;
        }
        if (os != null) {
            os.terminate(sendError);
        }
        node.onConnectionTerminated(this);
        onClose.tryEmitEmpty();
    }

    /** Destroys QPs, CQs and pools; called once when nothing references them (or by node close). */
    void freeResources() {
        resources.free();
    }

    /**
     * Node close (its progress thread stopped): stop now and free everything, whatever is held.
     *
     * @return the received messages the application still held, or null when it held none
     */
    RdmaLeakReporter.@Nullable Leak forceClose() {
        if (!terminated) {
            // releases what the connection itself still queued: what is left is the application's
            abortWith("node closed", new ConnectionClosedException(name + ": its node was closed", false));
        }
        RdmaLeakReporter.Leak leak = resources.heldByApplication();
        resources.free();
        return leak;
    }

    // ---------------------------------------------------------------- channel events, routed to the stages

    @Override
    public int takeMessageCreditTotal() {
        return messageCredits.takeWireTotal();
    }

    @Override
    public long receiveDemand() {
        return messageCredits.demand();
    }

    @Override
    public void onMessageCreditTotal(int total15) {
        sendCredits.onGrantTotal(total15);
        probe.heard(cycleNs);
    }

    @Override
    public void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                       boolean first, boolean last, int messageLength) {
        assembler.onData(ch, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
    }

    @Override
    public void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        assembler.onPackedData(ch, slot, buffer, payloadOffset, firstPsn, count);
    }

    @Override
    public void onRts(Channel ch, int psn, int messageLength) {
        rvReceiver.onRts(ch, psn, messageLength);
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        rvSender.onCts(ch, psn, messageLength, remoteAddress, rkey, flags);
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        rvSender.onCts(ch, psn, messageLength, remoteAddress, railRkeys, flags);
    }

    @Override
    public void onFin(Channel ch, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        rvReceiver.onFin(ch, psn, stripeOffset, stripeLength, stripes, stripeIndex);
    }

    @Override
    public void onRtsRead(Channel ch, int psn, int messageLength, long address, int rkey) {
        rvReceiver.onRtsRead(ch, psn, messageLength, address, rkey);
    }

    @Override
    public void onReadFin(Channel ch, int psn, int messageLength, int flags) {
        rvSender.onReadFin(ch, psn, messageLength, flags);
    }

    @Override
    public void onReadCompleted(Channel ch, long token) {
        if (WorkRequestTokens.isOneSided(token)) {
            OneSidedEngine os = oneSided;
            if (os != null) {
                os.onReadCompleted(ch, token);
            }
        } else {
            rvReceiver.onReadCompleted(token, cycleNs);
        }
    }

    @Override
    public void onWriteCompleted(Channel ch, int tag) {
        OneSidedEngine os = oneSided;
        if (os != null) {
            // without an engine no one-sided write was posted
            os.onWriteCompleted(ch, tag);
        }
    }

    @Override
    public void onOneSidedControl(Channel ch, FrameType type, DirectBuffer buffer, int frameOffset) {
        oneSidedEngine().onControl(ch, type, buffer, frameOffset);
    }

    @Override
    public RendezvousMode rendezvousMode() {
        return rendezvousMode;
    }

    @Override
    public void onSendCompleted(Channel ch, long token) {
        pipeline.onSendCompleted(ch, token, cycleNs);
    }

    @Override
    public void onPeerClose(Channel ch, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        close.onPeerClose(ch, abort, last, nextPsn, reason, railMask);
    }

    @Override
    public void onPeerInboundClosed(Channel ch, int firstUndeliveredPsn) {
        if (!terminated) {
            ops.onPeerInboundClosed(firstUndeliveredPsn);
        }
    }

    @Override
    public void onPeerRailDown(Channel ch, int failedRail) {
        failover.onPeerRailDown(failedRail);
    }

    @Override
    public void onFailure(Channel ch, RdmaException error) {
        failover.onFailure(ch, error);
    }

    // ---------------------------------------------------------------- stages, for each other

    ReceiveBuffers receiveBuffers() {
        return buffers;
    }

    InboundDelivery delivery() {
        return delivery;
    }

    InboundAssembler assembler() {
        return assembler;
    }

    RendezvousReceiver rendezvousReceiver() {
        return rvReceiver;
    }

    RendezvousSender rendezvousSender() {
        return rvSender;
    }

    InflightLedger ledger() {
        return ledger;
    }

    SendOps sendOps() {
        return ops;
    }

    SendPipeline sendPipeline() {
        return pipeline;
    }

    CreditGrantor creditGrantor() {
        return grantor;
    }

    CloseHandshake closeHandshake() {
        return close;
    }

    ConnectionResources resources() {
        return resources;
    }

    // ---------------------------------------------------------------- diagnostics (progress thread; tests through ConnectionProbe)

    /** The live channel of {@code rail}. */
    RcSubchannel subchannel(int rail) {
        return (RcSubchannel) channels[rail];
    }

    /** Packed DATA frames sent over every rail. */
    long packedFramesSent() {
        long n = 0;
        for (Channel ch : channels) {
            n += ch.packedFramesSent();
        }
        return n;
    }

    /** Messages of packed frames taken back from the send buffers of failed rails to be sent again. */
    long packedMessagesTakenBack() {
        return ledger.packedMessagesTakenBack();
    }

    /** Message credits the peer granted and this side has not used. */
    long sendCreditsHeld() {
        return sendCredits.credits();
    }

    /** The one-sided engine, made on first use (any thread); one made after the connection ended is ended too. */
    OneSidedEngine oneSidedEngine() {
        OneSidedEngine os = oneSided;
        if (os != null) {
            return os;
        }
        synchronized (oneSidedLock) {
            os = oneSided;
            if (os == null) {
                os = new OneSidedEngine(name, channels, node.protectionDomain(), this::wakeUp, this::protocolFailure);
                Throwable end = oneSidedEnd;
                if (end != null) {
                    // nothing queued in it yet: its ops fail at once with the connection's error
                    os.terminate(end);
                }
                oneSided = os;
            }
            return os;
        }
    }

    /** Rails that failed while the connection went on over the others. */
    int railFailures() {
        return failover.railFailures();
    }

    /** Zero-credit probes sent so far. */
    long creditProbes() {
        return probe.probes();
    }

    /** Pooled views created so far: the most packed messages held at once. */
    int viewsCreated() {
        return buffers.viewsCreated();
    }

    @Override
    public String toString() {
        return "RdmaConnection{" + name + "}";
    }

    /** Protocol state for diagnostics. */
    String describe() {
        StringBuilder sb = new StringBuilder(name).append(": state=").append(state).append(", ").append(pipeline.describe())
            .append(", ").append(delivery.describe()).append(", ").append(messageCredits).append(", ").append(sendCredits)
            .append(", rendezvous sends=").append(rvSender.inUse()).append(", ").append(rvReceiver.describe())
            .append(", failure=").append(failure).append(", ").append(ops.describe()).append(", ").append(close.describe());
        for (Channel ch : channels) {
            sb.append("\n  ").append(ch).append(" framesInFlight=").append(ch.framesInFlight()).append(" writes=").append(ch.writesInFlight());
        }
        return sb.toString();
    }
}
