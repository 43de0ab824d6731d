package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.engine.ProgressEngine;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.internal.credit.MessageCredits;
import io.rdmaflux.core.internal.credit.SendCredits;
import io.rdmaflux.core.internal.onesided.OneSidedEngine;
import io.rdmaflux.core.onesided.OneSided;
import io.rdmaflux.verbs.ProgressAgent;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connection: the public {@link RdmaConnection} façade and the duty cycle that runs its stages in
 * order over an explicit {@link ConnectionState} on the progress thread. Every piece of protocol state
 * lives in a stage (one concept each); other threads reach the connection only through lock-free inputs
 * (new sends, demand, released messages, close requests). Its channels' events go to the stages through a
 * {@link ChannelEventRouter}; the end of the connection is {@link ConnectionTermination}'s, its metrics
 * and diagnostics {@link ConnectionDiagnostics}', its one-sided engine {@link LazyOneSidedEngine}'s.
 *
 * <pre>
 * send(Publisher) -&gt; SendOps -&gt; SendPipeline (credits, PSN, scheduler, pack/fragment) -&gt; Channel
 *                                    |-&gt; RendezvousSender (RTS, stripes, completion filter) -&gt; Channel
 *                                    '-&gt; InflightLedger (kept for failover)
 * Channel events -&gt; InboundAssembler / RendezvousReceiver -&gt; InboundDelivery (PSN/ESN) -&gt; receive()
 * release() -&gt; ReceiveBuffers -&gt; Channel.releaseReceiveBuffer; CreditGrantor -&gt; credits to the peer
 * Failover, CloseHandshake, ConnectionTermination, ConnectionResources: rail failure, the graceful close, the end, freeing
 * </pre>
 *
 * <p>Large messages go by the RDMA WRITE rendezvous of seed 001 &sect;3, Fig. 2 ({@link RendezvousSender},
 * {@link RendezvousReceiver}), striped over rails by the scheduler (seed 000 &sect;4).
 */
final class DefaultRdmaConnection implements RdmaConnection, ProgressAgent {
    private static final int CLOSE_NONE = 0;
    private static final int CLOSE_GRACEFUL = 1;
    private static final int CLOSE_ABORT = 2;

    private final RdmaNode node;
    private final String name;
    private final Channel[] channels;
    /** This connection's place in the node engine's duty cycle; null until {@link #scheduledAs}. */
    private volatile ProgressEngine.@Nullable Registration registration;
    private final Runnable wakeHandle = this::wakeUp;
    private final int peerMaxMessageBytes;
    private final RendezvousMode rendezvousMode;
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
    private final SendPipeline pipeline;
    private final CreditGrantor grantor;
    private final CloseHandshake close;
    private final Failover failover;
    private final CreditProbe probe;
    private final ConnectionResources resources;
    private final LazyOneSidedEngine oneSided;
    private final ConnectionTermination termination;
    private final ConnectionDiagnostics diagnostics;

    // inputs from other threads
    private final AtomicInteger closeRequest = new AtomicInteger(CLOSE_NONE);
    private volatile boolean disposed;
    /** Progress thread: {@link #closeRequest} was graceful at the start of this duty cycle ({@link #drainInputs}). */
    private boolean gracefulCloseSeen;

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
        this.node = node;
        this.name = name;
        this.channels = channels;
        this.peerMaxMessageBytes = peerMaxMessageBytes;
        this.sendCredits = new SendCredits(sendQueue);
        this.messageCredits = new MessageCredits(creditThreshold);
        int sendSlots = 0;
        int peerBuffers = 0;
        for (Channel ch : channels) {
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
        this.oneSided = new LazyOneSidedEngine(this, node, channels, devices);
        this.termination = new ConnectionTermination(this, node, channels, pipeline, ledger, ops, delivery, oneSided, resources);
        this.diagnostics = new ConnectionDiagnostics(this);
        ChannelEventRouter events = new ChannelEventRouter(this, messageCredits, sendCredits, probe, assembler, rvReceiver,
            rvSender, pipeline, ops, close, failover, oneSided);
        for (Channel ch : channels) {
            ch.events(events);
        }
    }

    String name() {
        return name;
    }

    /** {@link #wakeUp} as one object, for the node's shared pools to call when they have room again. */
    Runnable wakeHandle() {
        return wakeHandle;
    }

    /**
     * Work was handed in (from another thread, or from another agent's callback): this connection is visited
     * in the next duty cycle and the progress thread stops idling (a fence and a volatile read if busy).
     */
    void wakeUp() {
        ProgressEngine.Registration r = registration;
        if (r != null) {
            r.signal();
        }
        node.wake();
    }

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

    /**
     * Registered with the node's engine (before its first duty cycle): when every channel signals the
     * completions that reach it, the connection is signal driven, and a busy engine skips it while it is idle
     * (its timers, such as the credit probe, then run late by at most the engine's rotation).
     */
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
                SendOps.refuseClosed(sink, messages, failed != null && !(failed instanceof ConnectionClosedException) ? failed
                    : new ConnectionClosedException("send on " + name + " which is closed", false));
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
        return termination.onClose();
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

    @Override
    public RendezvousMode rendezvousMode() {
        return rendezvousMode;
    }

    @Override
    public List<SubchannelSnapshot> subchannels() {
        return diagnostics.subchannels();
    }

    @Override
    public OneSided oneSided() {
        return oneSided.forUser();
    }

    @Override
    public ConnectionMetrics metrics() {
        return diagnostics.metrics();
    }

    /**
     * Whether the rails' resources (QPs, CQs, send and receive buffers) were freed: after close, once no
     * receive buffer is held and nothing is in flight. Rendezvous and reassembled messages still held do
     * not delay it; the node lists the connection until they are released too.
     */
    boolean isFreed() {
        return resources.isFreed();
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
            termination.abortOnInternalError(e);
            throw e;
        }
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
            OneSidedEngine os = oneSided.current();
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
            termination.abortWith("aborted by the application", new ConnectionClosedException(name + " was aborted", false));
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
     * The lifecycle's part of {@link ConnectionTermination#terminate}: the connection is terminated (and
     * disposed), having failed with {@code error} when it is not null.
     */
    void markTerminated(@Nullable Throwable error) {
        if (error != null) {
            failure = error;
        }
        state = ConnectionState.TERMINATED;
        terminated = true;
        disposed = true;
    }

    // ---------------------------------------------------------------- stages, for each other

    Channel[] channels() {
        return channels;
    }

    MessageCredits messageCredits() {
        return messageCredits;
    }

    SendCredits sendCredits() {
        return sendCredits;
    }

    Failover failover() {
        return failover;
    }

    CreditProbe creditProbe() {
        return probe;
    }

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

    ConnectionTermination termination() {
        return termination;
    }

    /** Metrics and diagnostics (tests reach them through {@code ConnectionProbe}). */
    ConnectionDiagnostics diagnostics() {
        return diagnostics;
    }

    /** The one-sided engine, made on first use (any thread); one made after the connection ended is ended too. */
    OneSidedEngine oneSidedEngine() {
        return oneSided.engine();
    }

    @Override
    public String toString() {
        return "RdmaConnection{" + name + "}";
    }
}
