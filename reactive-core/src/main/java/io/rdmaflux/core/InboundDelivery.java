package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.internal.credit.MessageCredits;
import io.rdmaflux.core.reorder.ReorderWindow;
import io.rdmaflux.core.reorder.ReorderWindowOverflowException;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.function.Consumer;

/**
 * Connection stage: PSN/ESN reordering and delivery to the one {@code receive()} subscriber. Whole
 * messages enter by {@link #offerInOrder} from the assembler and the rendezvous receiver; the ESN window
 * (seed 000 &sect;5.2, seed 001 &sect;4.5) releases them in PSN order to a ready queue, which is handed
 * to the subscriber as far as its demand goes. A packed frame that arrives in order on a single rail
 * with demand for all of it skips the window and the queue ({@link #deliverPackedInOrder}).
 *
 * <p>Demand is added by the subscriber's {@code request(n)} on any thread and folded in on the progress
 * thread, where it becomes message credits ({@link MessageCredits#onDemand}).
 *
 * <p><b>Discard support:</b> messages queued here (ready or out of order) are released when the
 * subscriber cancels, the receive side errors or the connection terminates.
 *
 * <p><b>Concurrency:</b> {@link #request}, {@link #cancel}, {@link #subscribe} on any thread; the rest
 * on the progress thread.
 */
final class InboundDelivery {
    private static final AtomicLongFieldUpdater<InboundDelivery> MESSAGES_RECEIVED =
        AtomicLongFieldUpdater.newUpdater(InboundDelivery.class, "messagesReceived");
    private static final AtomicLongFieldUpdater<InboundDelivery> BYTES_RECEIVED =
        AtomicLongFieldUpdater.newUpdater(InboundDelivery.class, "bytesReceived");

    private final DefaultRdmaConnection connection;
    private final MessageCredits messageCredits;
    private final ReceiveBuffers buffers;
    private final boolean singleRail;
    private final ReorderWindow<RdmaMessage> reorder;
    private final ArrayDeque<RdmaMessage> ready = new ArrayDeque<>();
    private final Consumer<RdmaMessage> toReady = ready::add;

    // inputs from other threads
    private final AtomicLong newDemand = new AtomicLong();
    private final AtomicBoolean subscribed = new AtomicBoolean();
    private final AtomicBoolean terminalSent = new AtomicBoolean();
    private volatile @Nullable CoreSubscriber<? super RdmaMessage> receiver;
    private volatile boolean cancelled;
    private volatile boolean badRequest;
    /** The first {@code n <= 0} given to {@code request(n)}; published by {@link #badRequest}. */
    private long badRequestN;
    private volatile boolean terminalReady;
    private volatile @Nullable Throwable error;

    // progress thread
    private long demand;
    private boolean inboundClosed;
    private boolean terminated;
    private volatile long messagesReceived;
    /** Bytes of the messages handed to the subscriber (written by the progress thread only). */
    private volatile long bytesReceived;
    private volatile long outOfOrder;

    InboundDelivery(DefaultRdmaConnection connection, MessageCredits messageCredits, ReceiveBuffers buffers, int rails,
                    int reorderWindow) {
        this.connection = connection;
        this.messageCredits = messageCredits;
        this.buffers = buffers;
        this.singleRail = rails == 1;
        this.reorder = new ReorderWindow<>(0, reorderWindow);
    }

    // ---------------------------------------------------------------- subscriber side (any thread)

    /** {@code receive()}'s subscribe: one subscriber. */
    void subscribe(CoreSubscriber<? super RdmaMessage> actual, ReceiveFlux.ReceiveSubscription subscription) {
        if (!subscribed.compareAndSet(false, true)) {
            Operators.error(actual, new IllegalStateException("receive() of " + connection.name()
                + " allows one subscriber and already has one; share it with publish() or share()"));
            return;
        }
        actual.onSubscribe(subscription);
        if (!cancelled) {
            receiver = actual;
        }
        if (terminalReady && connection.isFreed()) {
            // terminated before this subscriber came and no progress thread will look again
            signalTerminal();
        }
    }

    void request(long n) {
        if (n <= 0) {
            if (!badRequest) {
                badRequestN = n;
                badRequest = true;
                connection.wakeUp();
            }
            return;
        }
        long prev;
        long next;
        do {
            prev = newDemand.get();
            next = prev + n < 0 ? Long.MAX_VALUE : prev + n;
        } while (!newDemand.compareAndSet(prev, next));
        connection.wakeUp();
    }

    void cancel() {
        cancelled = true;
        receiver = null;
    }

    boolean isSubscribed() {
        return subscribed.get();
    }

    boolean isCancelled() {
        return cancelled;
    }

    /** Whether the subscriber got (or will get, once it comes) a terminal signal. */
    boolean isTerminated() {
        return terminalReady;
    }

    @Nullable CoreSubscriber<? super RdmaMessage> actual() {
        return receiver;
    }

    /** Demand signalled and not yet met (an estimate off the progress thread). */
    long requested() {
        long d = demand + newDemand.get();
        return d < 0 ? Long.MAX_VALUE : d;
    }

    /** Messages ready or out of order (an estimate off the progress thread). */
    int buffered() {
        return ready.size() + reorder.queued();
    }

    long messagesReceived() {
        return messagesReceived;
    }

    long bytesReceived() {
        return bytesReceived;
    }

    long outOfOrder() {
        return outOfOrder;
    }

    // ---------------------------------------------------------------- progress thread

    int esn() {
        return reorder.esn();
    }

    int windowSize() {
        return reorder.windowSize();
    }

    boolean isQueued(int psn) {
        return reorder.isQueued(psn);
    }

    /** Whether PSN {@code psn} arrived already: before the ESN or waiting out of order (a copy re-sent after a failover). */
    boolean arrived(int psn) {
        return psn - reorder.esn() < 0 || reorder.isQueued(psn);
    }

    boolean inboundClosed() {
        return inboundClosed;
    }

    boolean receiveTerminated() {
        return terminated;
    }

    boolean hasReceiver() {
        return receiver != null;
    }

    /** Whether every message the peer numbered before {@code peerNextPsn} was handed on and none waits. */
    boolean deliveredUpTo(int peerNextPsn) {
        return ready.isEmpty() && reorder.esn() == peerNextPsn;
    }

    /** Takes in what the other threads signalled: demand, a bad request, a cancel. @return work done */
    int drainInputs() {
        int work = 0;
        if (foldDemand() != 0) {
            work++;
        }
        if (badRequest && !terminated) {
            terminate(new IllegalArgumentException("receive() of " + connection.name() + ": request(" + badRequestN
                + ") violates Reactive Streams rule 3.9, n > 0 required; request at least 1 message"));
        }
        if (cancelled && !inboundClosed) {
            closeInbound();
            work++;
        }
        return work;
    }

    /** A whole message of PSN {@code psn} is here: into the window, released to the ready queue in PSN order. */
    void offerInOrder(int psn, RdmaMessage m) {
        messageCredits.onMessageQueued();
        try {
            if (reorder.offer(psn, m, toReady) == 0) {
                outOfOrder++;
            }
        } catch (ReorderWindowOverflowException e) {
            m.release();
            connection.termination().terminate(e);
        }
    }

    /** Replaces the messages waiting out of order (after a failover they are copied out of their buffers). */
    void replaceQueued(java.util.function.UnaryOperator<RdmaMessage> copy) {
        reorder.replaceQueued(copy);
    }

    /** Hands ready messages on and signals the terminal when due. @return messages delivered */
    int deliver() {
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (terminated) {
            signalTerminal();
            return 0;
        }
        if (r == null) {
            return 0;
        }
        int work = deliverReady(r);
        if (cancelled) {
            closeInbound();
            return work;
        }
        if (ready.isEmpty()) {
            Throwable failure = connection.failure();
            if (failure != null) {
                terminate(failure);
            } else if (connection.closeHandshake().peerClosed() && reorder.esn() == connection.closeHandshake().peerNextPsn()) {
                terminated = true;
                inboundClosed = true;
                signalTerminal();
            }
        }
        return work;
    }

    /** Delivers what is ready now if a subscriber waits (right after a frame, while its views are in cache). */
    void deliverIfReady() {
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (r != null && !terminated && !ready.isEmpty()) {
            deliverReady(r);
        }
    }

    /**
     * Hands ready messages to the subscriber while it has demand (demand it added from {@code onNext}
     * included). Only delivery: cancellation and terminal signals are {@link #deliver()}'s.
     */
    private int deliverReady(CoreSubscriber<? super RdmaMessage> r) {
        int n = 0;
        long bytes = 0;
        ArrayDeque<RdmaMessage> q = ready;
        while (!q.isEmpty() && !cancelled) {
            if (demand == 0 && (inboundClosed || newDemand.get() == 0 || foldDemand() == 0)) {
                break;
            }
            RdmaMessage m = q.poll();
            if (demand != Long.MAX_VALUE) {
                demand--;
            }
            messageCredits.onDelivered();
            n++;
            bytes += m.lengthBytes();
            try {
                r.onNext(m);
            } catch (Throwable t) {
                // Reactive Streams 2.13: onNext must not throw; one that does is treated as cancelled
                Exceptions.throwIfJvmFatal(t);
                cancelled = true;
                receiver = null;
                Operators.onErrorDropped(t, r.currentContext());
            }
        }
        if (n > 0) {
            BYTES_RECEIVED.lazySet(this, bytesReceived + bytes);
            MESSAGES_RECEIVED.lazySet(this, messagesReceived + n);
        }
        return n;
    }

    /**
     * The fast path of a packed frame (one rail, nothing out of order or waiting, demand and message
     * credits for all of it): its messages go straight to the subscriber, without the reorder window and
     * the ready queue, with the credit and ESN accounting done once for the frame. Messages left after the
     * subscriber cancelled from {@code onNext} are released here.
     *
     * @return false, having changed nothing, when the frame must take the general path
     */
    boolean deliverPackedInOrder(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (r == null || !singleRail || inboundClosed || connection.isTerminated() || terminated || cancelled
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
        long bytes = 0;
        ReceiveBuffers b = buffers;
        b.beginFrame(ch, slot);
        // the view released in its own onNext (the common subscriber) carries the next message: no pool traffic
        ReceivedMessage spare = null;
        try {
            for (int i = 0; i < count; i++) {
                int len = DataFrameCodec.packedLengthAt(base + pos);
                int at = pos + DataFrameCodec.PACKED_PREFIX_BYTES;
                pos = at + len;
                if (cancelled) {
                    b.releaseShare(ch, slot);
                    continue;
                }
                ReceivedMessage v = spare != null ? spare : b.lendView(ch);
                spare = null;
                int psn = firstPsn + i;
                v.initPacked(ch, slot, psn, base + at, len);
                b.delivering(psn);
                if (demand != Long.MAX_VALUE) {
                    demand--;
                }
                delivered++;
                bytes += len;
                try {
                    r.onNext(v);
                } catch (Throwable t) {
                    Exceptions.throwIfJvmFatal(t);
                    cancelled = true;
                    receiver = null;
                    Operators.onErrorDropped(t, r.currentContext());
                }
                if (b.deliveredReleased()) {
                    spare = v;
                }
            }
        } finally {
            b.endFrame();
        }
        if (spare != null) {
            b.returnView(spare);
        }
        b.returnFrameShares(ch, slot);
        messageCredits.onDeliveredUnqueued(delivered);
        BYTES_RECEIVED.lazySet(this, bytesReceived + bytes);
        MESSAGES_RECEIVED.lazySet(this, messagesReceived + delivered);
        return true;
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

    /** The subscriber cancelled: the inbound side closes, what is queued is released, the peer is told. */
    private void closeInbound() {
        inboundClosed = true;
        terminated = true;
        terminalSent.set(true);
        receiver = null;
        demand = 0;
        messageCredits.onNoDemand();
        releaseQueued();
        connection.closeHandshake().oweInboundClosedNotice(messagesReceived);
    }

    /** Ends the receive side with {@code error} (once), releasing what is queued. */
    void terminate(Throwable error) {
        if (terminated) {
            return;
        }
        terminated = true;
        inboundClosed = true;
        this.error = error;
        releaseQueued();
        connection.closeHandshake().oweInboundClosedNotice(messagesReceived);
        signalTerminal();
    }

    /** Ends the receive side with completion: the peer's stream is whole. */
    void complete() {
        terminated = true;
        inboundClosed = true;
        signalTerminal();
    }

    /**
     * Ends a receive side that has no subscriber yet, for the one that may still come. If the peer began
     * its close and every message it numbered arrived and was handed on, its stream is whole: completion
     * (a peer that connects and closes without sending is an empty stream). Otherwise, when this side
     * closed first or the peer's messages are not all in, what it meant for the subscriber is lost:
     * {@link ConnectionClosedException}.
     */
    void endUnsubscribed() {
        CloseHandshake close = connection.closeHandshake();
        if (close.peerBegan() && deliveredUpTo(close.peerNextPsn())) {
            complete();
        } else {
            terminate(new ConnectionClosedException(connection.name() + " closed before receive() was subscribed", false));
        }
    }

    private void releaseQueued() {
        RdmaMessage m;
        while ((m = ready.poll()) != null) {
            m.release();
        }
        reorder.clear(RdmaMessage::release);
        connection.assembler().releasePartials();
    }

    private void signalTerminal() {
        terminalReady = true;
        CoreSubscriber<? super RdmaMessage> r = receiver;
        if (r != null && terminalSent.compareAndSet(false, true)) {
            receiver = null;
            Throwable e = error;
            if (e != null) {
                r.onError(e);
            } else {
                r.onComplete();
            }
        }
    }

    String describe() {
        return "esn=" + reorder.esn() + ", queued=" + reorder.queued() + ", ready=" + ready.size() + ", demand=" + demand
            + ", inboundClosed=" + inboundClosed;
    }
}
