package io.rdmaflux.core;

import io.rdmaflux.core.channel.RcSubchannel;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelListener;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.credit.MessageCredits;
import io.rdmaflux.core.credit.SendCredits;
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
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The connection engine: one {@link ProgressAgent} per connection that owns every piece of
 * protocol state (subchannels, credits, PSN/ESN, send queue) on the progress thread. Other threads
 * reach it only through atomics and lock-free queues (demand, released messages, new sends, close
 * requests).
 */
final class DefaultRdmaConnection implements RdmaConnection, ProgressAgent, SubchannelListener {
    private static final int CLOSE_NONE = 0;
    private static final int CLOSE_GRACEFUL = 1;
    private static final int CLOSE_ABORT = 2;

    private final RdmaNode node;
    private final String name;
    private final RcSubchannel[] subchannels;
    private final List<RcSubchannel> subchannelList;
    private final SubchannelScheduler scheduler;
    private final int peerMaxMessageBytes;
    private final int localMaxMessageBytes;
    private final int sendQueue;
    private final int sendOpQueueCapacity;
    private final ReceivedMessage[][] receivedMessages;

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
    private volatile boolean disposed;
    private final Sinks.Empty<Void> onClose = Sinks.empty();

    // progress-thread state: receive side
    private final ReorderWindow<RdmaMessage> reorder;
    private final ArrayDeque<RdmaMessage> ready = new ArrayDeque<>();
    private final AssembledMessage[] partial;
    private final Consumer<RdmaMessage> toReady = ready::add;
    private long demand;
    private boolean inboundClosed;
    private boolean receiveTerminated;
    private final AtomicBoolean terminalSent = new AtomicBoolean();
    private volatile boolean receiveTerminalReady;
    private volatile @Nullable Throwable receiveError;
    private int peerClosedRails;
    private int peerNextPsn = -1;
    private @Nullable Throwable failure;

    // progress-thread state: send side
    private final ArrayDeque<SendOp> sendOps = new ArrayDeque<>();
    private final ArrayDeque<SendOp> inflightOps = new ArrayDeque<>();
    private final SendCredits sendCredits;
    private final MessageCredits messageCredits;
    private final long[] messageStartNs;
    private final int[] messageLength;
    private final int inflightMask;
    private @Nullable RdmaMessage current;
    private @Nullable SendOp currentOp;
    private int currentOffset;
    private int currentRail;
    private int currentPsn;
    private int nextPsn;
    private boolean localCloseSent;
    private boolean terminated;
    private volatile boolean resourcesFreed;

    // counters
    private volatile long messagesSent;
    private volatile long messagesDelivered;
    private volatile long messagesReceived;
    private volatile long outOfOrder;

    DefaultRdmaConnection(RdmaNode node, String name, RcSubchannel[] subchannels, SubchannelScheduler scheduler,
                          int peerMaxMessageBytes, int localMaxMessageBytes, int sendQueue, int reorderWindow,
                          int creditThreshold) {
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
        int slots = 0;
        int sendSlots = 0;
        int peerBuffers = 0;
        for (RcSubchannel sc : subchannels) {
            sc.listener(this);
            sc.connectionCredits(messageCredits, sendCredits);
            // buffer credits of a rail cover all its free buffers; demand is covered once, by message credits
            sc.receiveCredits().onDemand(Long.MAX_VALUE);
            ReceivedMessage[] msgs = new ReceivedMessage[sc.receiveSlots()];
            for (int i = 0; i < msgs.length; i++) {
                msgs[i] = new ReceivedMessage(this, sc, i);
            }
            receivedMessages[sc.rail()] = msgs;
            slots += msgs.length;
            sendSlots += sc.sendBufferCount();
            peerBuffers += sc.peerReceiveBuffers();
        }
        this.released = new ManyToOneConcurrentArrayQueue<>(Math.max(2, slots));
        this.sendOpQueueCapacity = peerBuffers + sendQueue;
        int ring = Integer.highestOneBit(Math.max(2, sendSlots) * 2);
        this.messageStartNs = new long[ring];
        this.messageLength = new int[ring];
        this.inflightMask = ring - 1;
    }

    String name() {
        return name;
    }

    void wakeUp() {
        // the progress thread polls; nothing to signal in a busy/backoff idle loop
    }

    // ---------------------------------------------------------------- public API (any thread)

    @Override
    public Mono<Void> send(Publisher<? extends RdmaMessage> messages) {
        return Mono.create(sink -> {
            SendOp op = new SendOp(this, sink, sendOpQueueCapacity);
            sink.onCancel(op::cancelFromUser);
            if (disposed) {
                sink.error(new ConnectionClosedException("send on " + name + " which is closed", false));
                Flux.from(messages).subscribe(m -> m.release(), e -> { }, () -> { }, s -> s.request(Long.MAX_VALUE));
                return;
            }
            messages.subscribe(op);
            newSends.offer(op);
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
    }

    @Override
    public void abort() {
        closeRequest.set(CLOSE_ABORT);
        disposed = true;
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
        return new ConnectionMetrics(messagesSent, messagesDelivered, messagesReceived, held, sendCredits.credits(),
            sendCredits.maxOutstandingSeen(), outOfOrder);
    }

    /** Whether every resource was freed (after close and the release of every received message). */
    boolean isFreed() {
        return resourcesFreed;
    }

    /** Receive buffers held plus reassembled messages not released: what a leak check expects to be 0. */
    int buffersOutstanding() {
        int held = 0;
        for (RcSubchannel sc : subchannels) {
            held += sc.receiveBuffersHeld();
        }
        return held + assembledOutstanding.get();
    }

    void onReleased(ReceivedMessage m) {
        released.offer(m);
    }

    void onAssembledReleased() {
        assembledOutstanding.decrementAndGet();
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
        int work = drainInputs();
        for (RcSubchannel sc : subchannels) {
            work += sc.doWork(nowNs);
        }
        if (!terminated) {
            work += transmit(nowNs);
            work += requestMore();
        }
        work += deliver();
        if (!terminated) {
            work += flushCredits();
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
        messageCredits.grant(free);
        int work = 0;
        for (RcSubchannel sc : subchannels) {
            work += sc.flushCredits();
        }
        if (messageCredits.explicitCreditDue()) {
            for (RcSubchannel sc : subchannels) {
                if (sc.sendCreditFrame()) {
                    work++;
                    break;
                }
            }
        }
        return work;
    }

    private int drainInputs() {
        int work = 0;
        ReceivedMessage m;
        while ((m = released.poll()) != null) {
            m.subchannel().releaseReceiveBuffer(m.slot());
            work++;
        }
        SendOp op;
        while ((op = newSends.poll()) != null) {
            if (terminated) {
                op.sink.error(closedError());
                op.cancelFromUser();
                op.drainQueue();
            } else {
                sendOps.add(op);
            }
            work++;
        }
        long d = newDemand.getAndSet(0);
        if (d != 0 && !inboundClosed) {
            demand = demand + d < 0 ? Long.MAX_VALUE : demand + d;
            messageCredits.onDemand(d);
            work++;
        }
        if (badRequest && !receiveTerminated) {
            terminateReceive(new IllegalArgumentException("receive(): request(n) with n <= 0 violates Reactive Streams rule 3.9"));
        }
        if (receiveCancelled && !inboundClosed) {
            closeInbound();
            work++;
        }
        int cr = closeRequest.get();
        if (cr == CLOSE_ABORT && !terminated) {
            for (RcSubchannel sc : subchannels) {
                sc.sendClose(true, nextPsn, "aborted by the application");
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
                partial[i] = null;
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
            if (op.cancelled || op.overflowed || op.publisherError != null) {
                sendOps.poll();
                finishOp(op, op.overflowed
                    ? new IllegalStateException("the publisher given to send() emitted more messages than requested (Reactive Streams rule 1.1)")
                    : op.publisherError);
                continue;
            }
            if (op.publisherDone && op.queue.isEmpty() && currentOp != op) {
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
            if (m == null) {
                SendOp op = activeOp();
                if (op == null) {
                    return work;
                }
                RdmaMessage next = op.queue.peek();
                if (next == null) {
                    return work;
                }
                int len = next.lengthBytes();
                if (len > peerMaxMessageBytes) {
                    op.queue.poll();
                    sendCredits.onTaken();
                    next.release();
                    sendOps.poll();
                    op.cancelFromUser();
                    finishOp(op, new MessageTooLargeException(len, peerMaxMessageBytes));
                    work++;
                    continue;
                }
                if (!sendCredits.hasCredits(1)) {
                    return work;
                }
                int rail = scheduler.select(nextPsn, len, subchannels);
                if (rail < 0) {
                    return work;
                }
                if (!subchannels[rail].canSend()) {
                    throw new IllegalStateException("scheduler " + scheduler + " chose rail " + rail + " which cannot send");
                }
                op.queue.poll();
                sendCredits.onTaken();
                sendCredits.consume();
                op.taken++;
                current = next;
                currentOp = op;
                currentOffset = 0;
                currentRail = rail;
                currentPsn = nextPsn++;
                messageStartNs[currentPsn & inflightMask] = nowNs;
                messageLength[currentPsn & inflightMask] = len;
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
            long token = last ? currentPsn & 0xFFFFFFFFL : -2;
            if (last) {
                // a failed post terminates the connection inside sendData: it must not find this message as current
                current = null;
                currentOp = null;
            }
            sc.sendData(m, currentOffset, frag, first, last, currentPsn, token);
            currentOffset += frag;
            work++;
            if (last) {
                messagesSent++;
                m.release();
            }
            if (terminated) {
                return work;
            }
        }
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
        int psn = (int) token;
        messagesDelivered++;
        scheduler.onMessageCompleted(subchannel, psn, messageLength[psn & inflightMask],
            node.clock().nanoTime() - messageStartNs[psn & inflightMask]);
        for (SendOp op : inflightOps) {
            if (psn - op.firstPsn >= 0 && psn - op.firstPsn < op.taken) {
                op.completed++;
                checkOpDone(op);
                return;
            }
        }
    }

    private void checkOpDone(SendOp op) {
        if (!op.finished && op.publisherDone && op.queue.isEmpty() && currentOp != op && op.completed == op.taken
            && !sendOps.contains(op)) {
            finishOp(op, null);
        } else if (!op.finished && op.publisherDone && op.queue.isEmpty() && currentOp != op && op.completed == op.taken
            && sendOps.peek() == op) {
            sendOps.poll();
            finishOp(op, null);
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
            op.sink.error(error);
        } else {
            op.sink.success();
        }
    }

    @Override
    public void onData(RcSubchannel sc, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                       boolean first, boolean last, int messageLength) {
        if (first && !messageCredits.onMessageArrived()) {
            sc.releaseReceiveBuffer(slot);
            protocolFailure("peer started message PSN " + psn + " on rail " + sc.rail() + " without holding a message credit");
            return;
        }
        if (inboundClosed || terminated) {
            sc.releaseReceiveBuffer(slot);
            return;
        }
        int rail = sc.rail();
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
            partial[rail] = p;
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
            partial[rail] = null;
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
            sc.sendClose(true, nextPsn, message);
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
        int work = 0;
        while (demand > 0 && !ready.isEmpty() && !receiveCancelled) {
            RdmaMessage m = ready.poll();
            if (demand != Long.MAX_VALUE) {
                demand--;
            }
            messageCredits.onDelivered();
            messagesReceived++;
            r.onNext(m);
            work++;
        }
        if (receiveCancelled) {
            closeInbound();
            return work;
        }
        if (ready.isEmpty()) {
            if (failure != null) {
                terminateReceive(failure);
            } else if (peerClosedRails == subchannels.length && reorder.esn() == peerNextPsn) {
                receiveTerminated = true;
                inboundClosed = true;
                signalReceiveTerminal();
            }
        }
        return work;
    }

    private void terminateReceive(Throwable error) {
        if (receiveTerminated) {
            return;
        }
        receiveTerminated = true;
        inboundClosed = true;
        receiveError = error;
        releaseQueued();
        signalReceiveTerminal();
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
    public void onPeerClose(RcSubchannel subchannel, boolean abort, int nextPsn, String reason) {
        if (abort) {
            terminate(new ConnectionClosedException("peer aborted " + name + (reason.isEmpty() ? "" : ": " + reason), true));
            return;
        }
        peerClosedRails++;
        peerNextPsn = nextPsn;
        closeRequest.compareAndSet(CLOSE_NONE, CLOSE_GRACEFUL);
        disposed = true;
    }

    @Override
    public void onFailure(RcSubchannel subchannel, RdmaException error) {
        scheduler.onSubchannelFailed(subchannel);
        // no failover yet: unacknowledged messages of the failed rail are not re-sent elsewhere, so the connection fails
        terminate(error);
    }

    private int progressClose() {
        if (closeRequest.get() != CLOSE_GRACEFUL) {
            return 0;
        }
        if (!localCloseSent) {
            SendOp op = sendOps.peek();
            while (op != null && op.firstPsn < 0) {
                // sends not yet started when the close came are refused, never half sent
                sendOps.poll();
                op.cancelFromUser();
                finishOp(op, closedError());
                op = sendOps.peek();
            }
            if (!sendOps.isEmpty() || current != null || !inflightOps.isEmpty()) {
                return 0;
            }
            for (RcSubchannel sc : subchannels) {
                if (sc.framesInFlight() > 0) {
                    return 0;
                }
            }
            for (RcSubchannel sc : subchannels) {
                sc.sendClose(false, nextPsn, "");
            }
            localCloseSent = true;
            return 1;
        }
        if (peerClosedRails == subchannels.length && (receiveTerminated || receiver == null)) {
            for (RcSubchannel sc : subchannels) {
                if (sc.sendBuffersInUse() > 0) {
                    return 0;
                }
            }
            terminate(null);
            return 1;
        }
        return 0;
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
        RdmaMessage m = current;
        if (m != null) {
            current = null;
            m.release();
        }
        currentOp = null;
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
            terminateReceive(new ConnectionClosedException(name + " closed before receive() was subscribed", false));
        }
        SendOp op;
        while ((op = newSends.poll()) != null) {
            op.cancelFromUser();
            op.sink.error(sendError);
            op.drainQueue();
        }
        node.onConnectionTerminated(this);
        onClose.tryEmitEmpty();
    }

    private void maybeFree() {
        ReceivedMessage m;
        while ((m = released.poll()) != null) {
            m.subchannel().releaseReceiveBuffer(m.slot());
        }
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
        node.onConnectionFreed(this);
    }

    /** Node close: stop now, whatever is held. */
    void forceClose() {
        if (!terminated) {
            for (RcSubchannel sc : subchannels) {
                sc.sendClose(true, nextPsn, "node closed");
            }
            terminate(new ConnectionClosedException(name + ": its node was closed", false));
        }
        freeResources();
    }

    @Override
    public String toString() {
        return "RdmaConnection{" + name + "}";
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
                        badRequest = true;
                        return;
                    }
                    long prev;
                    long next;
                    do {
                        prev = newDemand.get();
                        next = prev + n < 0 ? Long.MAX_VALUE : prev + n;
                    } while (!newDemand.compareAndSet(prev, next));
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
