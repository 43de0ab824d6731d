package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.internal.credit.SendCredits;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * Connection stage: the {@code send()} operations, in the order they came, and their outcome. One op
 * transmits at a time (the head of the queue) and takes its PSNs in one run; ops whose messages are in
 * flight wait for their completions here. The last step of the completion filter (seed 000 &sect;4.1)
 * lands here: a message counts as delivered for its op once its last frame (or every stripe) completed,
 * and the op's {@code Mono} completes once its publisher completed and every message it took was
 * delivered &mdash; or errors, carrying the publisher's own error as a suppressed one when the
 * connection fails it for another reason.
 *
 * <p>When the peer closes its inbound side, every op with messages from the first PSN its subscriber
 * did not get fails with a {@link ConnectionClosedException} naming how many were not delivered.
 *
 * <p><b>Concurrency:</b> {@link #offer} and {@link #refuseClosed} on any thread; the rest on the progress thread.
 */
final class SendOps {
    /**
     * The most messages a {@code send} on a closed connection takes from its publisher (and releases) before
     * cancelling it: enough for any array or list of messages built beforehand (which a cancel alone would
     * strand), and an end for a publisher that never completes, which would otherwise hold the caller's
     * thread for good.
     */
    static final long CLOSED_SEND_DRAIN_LIMIT = 1 << 16;
    private static final AtomicLongFieldUpdater<SendOps> MESSAGES_DELIVERED =
        AtomicLongFieldUpdater.newUpdater(SendOps.class, "messagesDelivered");
    private static final AtomicLongFieldUpdater<SendOps> DELIVERY_TOTAL_NS =
        AtomicLongFieldUpdater.newUpdater(SendOps.class, "deliveryTotalNs");

    private final DefaultRdmaConnection connection;
    private final SubchannelScheduler scheduler;
    private final InflightLedger ledger;
    private final SendCredits sendCredits;
    private final ManyToOneConcurrentLinkedQueue<SendOp> newSends = new ManyToOneConcurrentLinkedQueue<>();
    private final ArrayDeque<SendOp> queued = new ArrayDeque<>();
    private final ArrayDeque<SendOp> inflight = new ArrayDeque<>();
    /** The op whose message is part-way out (a fragmented message, or one being re-sent); set by the pipeline. */
    private @Nullable SendOp transmitting;
    /** The peer closed its inbound side: messages from {@link #peerFirstUndelivered} on are never delivered. */
    private boolean peerInboundClosed;
    private int peerFirstUndelivered;
    private volatile long messagesDelivered;
    /** Sum of the delivered messages' delivery times, ns (written by the progress thread only). */
    private volatile long deliveryTotalNs;

    SendOps(DefaultRdmaConnection connection, SubchannelScheduler scheduler, InflightLedger ledger, SendCredits sendCredits) {
        this.connection = connection;
        this.scheduler = scheduler;
        this.ledger = ledger;
        this.sendCredits = sendCredits;
    }

    long messagesDelivered() {
        return messagesDelivered;
    }

    long deliveryTotalNs() {
        return deliveryTotalNs;
    }

    /**
     * A {@code send()} on a connection already closed (any thread): {@code sink} fails with {@code error}, then
     * the publisher's messages are taken, up to {@link #CLOSED_SEND_DRAIN_LIMIT}, and discarded.
     */
    static void refuseClosed(MonoSink<Void> sink, Publisher<? extends RdmaMessage> messages, Throwable error) {
        sink.error(error);
        Context context = Context.of(sink.contextView());
        Flux.from(messages).contextWrite(context).take(CLOSED_SEND_DRAIN_LIMIT, true)
            .subscribe(m -> SendOp.discard(m, context), e -> { }, () -> { }, s -> s.request(Long.MAX_VALUE));
    }

    /** A new {@code send()}: queued for the progress thread (any thread). */
    void offer(SendOp op) {
        newSends.offer(op);
    }

    void transmitting(@Nullable SendOp op) {
        transmitting = op;
    }

    @Nullable SendOp transmitting() {
        return transmitting;
    }

    /**
     * Takes the sends that came from other threads: queued, or refused when {@code closed} (after the
     * CLOSE no rail carries messages), or when the peer's inbound side closed. @return ops taken
     */
    int drainNew(boolean closed) {
        int work = 0;
        SendOp op;
        while ((op = newSends.poll()) != null) {
            if (closed) {
                op.sink.error(withPublisherError(connection.termination().closedError(), op));
                op.cancelFromUser();
                op.drainQueue();
            } else if (!peerInboundClosed || !refuseUndelivered(op)) {
                queued.add(op);
            }
            work++;
        }
        return work;
    }

    /** The op to transmit from now, starting it (first PSN) when it is new; null when none has messages to go. */
    @Nullable SendOp active(int nextPsn) {
        for (;;) {
            SendOp op = queued.peek();
            if (op == null) {
                return null;
            }
            if (op.firstPsn < 0) {
                op.firstPsn = nextPsn;
                inflight.add(op);
                sendCredits.resetOutstanding();
            }
            if (op.cancelled || op.overflowed) {
                queued.poll();
                finish(op, op.overflowed
                    ? new IllegalStateException("the publisher given to send() emitted more messages than requested (Reactive Streams rule 1.1)")
                    : null);
                continue;
            }
            // a publisher error ends the op like a completion (the messages emitted before it are sent and
            // delivered first, as Reactive Streams orders onError after them), then fails it with the error
            if (op.publisherDone && op.isEmpty() && transmitting != op) {
                queued.poll();
                checkDone(op);
                continue;
            }
            return op;
        }
    }

    /** The op at the head of the queue, started or not. */
    @Nullable SendOp head() {
        return queued.peek();
    }

    /** The op at the head failed before sending its message (too large): it ends with {@code error}. */
    void failHead(SendOp op, Throwable error) {
        queued.poll();
        op.cancelFromUser();
        finish(op, error);
    }

    /** Whether nothing is queued or in flight (the graceful close may go). */
    boolean isIdle() {
        return queued.isEmpty() && inflight.isEmpty();
    }

    /** Sends not yet started when the close came are refused, never half sent. */
    void refuseNotStarted() {
        SendOp op = queued.peek();
        while (op != null && op.firstPsn < 0) {
            queued.poll();
            op.cancelFromUser();
            finish(op, connection.termination().closedError());
            op = queued.peek();
        }
    }

    // ---------------------------------------------------------------- completions

    /**
     * A packed frame of {@code count} messages from {@code firstPsn} completed: each message is reported
     * to the scheduler, the op they came from (one op fills a packed frame) counts them at once.
     */
    void onPackedCompleted(Channel ch, int firstPsn, int count, long nowNs) {
        long totalNs = 0;
        for (int i = 0; i < count; i++) {
            int psn = firstPsn + i;
            long elapsedNs = ledger.elapsedNs(psn, nowNs);
            totalNs += elapsedNs;
            scheduler.onMessageCompleted(ch, psn, ledger.length(psn), elapsedNs);
            ledger.completed(psn);
        }
        // plain ordered stores, one per frame: a metrics reader on another thread sees each total grow
        DELIVERY_TOTAL_NS.lazySet(this, deliveryTotalNs + totalNs);
        MESSAGES_DELIVERED.lazySet(this, messagesDelivered + count);
        SendOp head = inflight.peekFirst();
        if (head != null && firstPsn - head.firstPsn >= 0 && firstPsn + count - 1 - head.firstPsn < head.taken) {
            head.completed += count;
            checkDone(head);
            return;
        }
        for (int i = 0; i < count; i++) {
            countDelivered(firstPsn + i);
        }
    }

    /** Message {@code psn} sent on {@code ch} was delivered: reported to the scheduler and counted for its op. */
    void onMessageDelivered(Channel ch, int psn) {
        long elapsedNs = ledger.elapsedNs(psn, connection.cycleNs());
        DELIVERY_TOTAL_NS.lazySet(this, deliveryTotalNs + elapsedNs);
        MESSAGES_DELIVERED.lazySet(this, messagesDelivered + 1);
        scheduler.onMessageCompleted(ch, psn, ledger.length(psn), elapsedNs);
        ledger.completed(psn);
        countDelivered(psn);
    }

    /** Counts message {@code psn} delivered for the send op it came from. */
    void countDelivered(int psn) {
        SendOp head = inflight.peekFirst();
        if (head != null && psn - head.firstPsn >= 0 && psn - head.firstPsn < head.taken) {
            // the common case, one send() at a time: no iterator on the per-message path
            head.completed++;
            checkDone(head);
            return;
        }
        for (SendOp op : inflight) {
            if (psn - op.firstPsn >= 0 && psn - op.firstPsn < op.taken) {
                op.completed++;
                checkDone(op);
                return;
            }
        }
    }

    /** Ends {@code op} if its publisher is done and every message it took was delivered. */
    void checkDone(SendOp op) {
        if (op.completed != op.taken || op.finished) {
            // the common case on the per-message path: more completions to come
            return;
        }
        if (op.refusal != null) {
            if (transmitting != op) {
                finish(op, op.refusal);
            }
            return;
        }
        if (op.publisherDone && op.isEmpty() && transmitting != op) {
            if (!queued.contains(op)) {
                finish(op, op.publisherError);
            } else if (queued.peek() == op) {
                queued.poll();
                finish(op, op.publisherError);
            }
        }
    }

    void finish(SendOp op, @Nullable Throwable error) {
        if (op.finished) {
            return;
        }
        op.finished = true;
        inflight.remove(op);
        queued.remove(op);
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
    static Throwable withPublisherError(Throwable error, SendOp op) {
        Throwable pe = op.publisherError;
        if (pe != null && pe != error && Arrays.stream(error.getSuppressed()).noneMatch(x -> x == pe)) {
            error.addSuppressed(pe);
        }
        return error;
    }

    // ---------------------------------------------------------------- the peer's inbound side closed

    /**
     * The peer closed its inbound side (cancelled {@code receive()}, or closed without subscribing to it)
     * after its subscriber got the messages before PSN {@code firstUndelivered}: every send with a message
     * from that PSN on, or with messages still to send, fails naming how many of its messages were not
     * delivered, and so does every later send. A send whose messages all came before that PSN and whose
     * publisher completed completes as before. Messages in flight still complete at the RC level (the
     * peer acknowledges and drops them); a failing send ends once they did.
     */
    void onPeerInboundClosed(int firstUndelivered) {
        if (peerInboundClosed) {
            return;
        }
        peerInboundClosed = true;
        peerFirstUndelivered = firstUndelivered;
        for (SendOp op : List.copyOf(inflight)) {
            refuseUndelivered(op);
        }
        for (SendOp op : List.copyOf(queued)) {
            if (!op.finished && op.refusal == null) {
                refuseUndelivered(op);
            }
        }
    }

    /**
     * Ends {@code op} with a {@link ConnectionClosedException} naming its messages the peer's subscriber
     * did not get, once its messages in flight completed, unless every message came before and the
     * publisher completed.
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
        queued.remove(op);
        long delivered = op.taken - sentNotDelivered;
        String name = connection.name();
        String why = "the peer closed its inbound side (it cancelled receive(), or closed without subscribing to it)";
        op.refusal = new ConnectionClosedException(op.taken == 0 && notDelivered == 0
            ? name + ": send() refused: " + why
            : name + ": " + notDelivered + (notDelivered == 1 ? " message" : " messages") + " of this send() were not delivered"
                + (publisherDone ? "" : " and its publisher was cancelled") + ": " + why + " after its subscriber got "
                + delivered + " of them", true);
        if (op.completed == op.taken && transmitting != op) {
            finish(op, op.refusal);
        }
        return true;
    }

    /** The connection terminated: every op queued or in flight ends with {@code error} (then {@link #failNew}). */
    void failAll(Throwable error) {
        transmitting = null;
        for (SendOp op : List.copyOf(queued)) {
            op.cancelFromUser();
            finish(op, error);
        }
        for (SendOp op : List.copyOf(inflight)) {
            finish(op, error);
        }
    }

    /** Fails the sends that came from other threads and were not taken yet. */
    void failNew(Throwable error) {
        SendOp op;
        while ((op = newSends.poll()) != null) {
            op.cancelFromUser();
            op.sink.error(withPublisherError(error, op));
            op.drainQueue();
        }
    }

    String describe() {
        return "sendOps=" + queued.size() + ", inflightOps=" + inflight.size() + ", peerInboundClosed=" + peerInboundClosed;
    }
}
