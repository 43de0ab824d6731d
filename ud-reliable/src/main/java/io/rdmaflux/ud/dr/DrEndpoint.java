package io.rdmaflux.ud.dr;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.RdmaTransportException;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

import java.util.Objects;

/**
 * DR-style reliability for one peer, both directions, over unreliable datagrams on one or more rails (seed 003
 * &sect;4.2, after Open MPI's DR PML, &sect;3.1). An agent in the Aeron sense: no threads and no clock of its
 * own; the owner feeds it datagrams ({@link #onDatagram}), messages ({@link #offer}), local completions, and
 * calls {@link #doWork(long)} at the latest at {@link #nextDeadlineNs()}.
 *
 * <h2>Protocol</h2>
 * <ul>
 * <li>Every VFRAG (one datagram of at most {@link DrConfig#datagramBytes()}) has a PSN, per peer and direction;
 *     the VFRAG is the unit of acknowledgement. Deviation from DR, whose VFRAG spans several BTL fragments with
 *     a bitmap of its own: here a VFRAG is one UD datagram, and the ACK's 64-bit SACK bitmap over the PSNs
 *     after the cumulative one gives the same selective information.</li>
 * <li>ACKs carry the cumulative PSN (the ESN), the SACK bitmap and the credit limit; the receiver coalesces them:
 *     one per {@link DrConfig#ackEveryVfrags()} new VFRAGs or {@link DrConfig#ackDelayNs()} after the first
 *     unacknowledged one (the ACK timer), at once on a hole, a duplicate or a PROBE.</li>
 * <li>The sender keeps, per VFRAG, a local-completion timer ({@link DrConfig#localCompletionTimeoutNs()}) and a
 *     retransmission timer whose RTO follows the measured RTT ({@link RtoEstimator}, Karn's rule) with
 *     exponential backoff. In {@link RetransmitMode#SELECTIVE} it retransmits only the VFRAGs the SACK shows
 *     missing (with three later VFRAGs held) or that timed out; in {@link RetransmitMode#GO_BACK_N}, everything
 *     from the oldest unacknowledged PSN.</li>
 * <li>The receiver drops duplicates and VFRAGs beyond its credit, restores order by PSN/ESN and hands out
 *     whole messages only. Every datagram's CRC32C is checked first: a corrupted one is dropped and counted,
 *     never delivered.</li>
 * <li>After more than {@link DrConfig#maxRetriesPerRail()} timeouts in a row without progress <em>and</em>
 *     {@link DrConfig#railTimeoutNs()} without any ACK from the peer on it (the give-up budget in time, apart from the
 *     RTT-driven RTO: see {@link RailSet}) the rail fails and the peer's traffic moves to the next rail; failed rails are probed and come back when they answer. When every
 *     rail failed the endpoint fails with an {@link RdmaTransportException} naming the peer, the rails and the
 *     retries, within {@link DrConfig#failureBoundNs(int)} of the peer going silent while work is outstanding
 *     (plus {@link DrConfig#keepaliveNs()} when the endpoint only waits to receive).</li>
 * </ul>
 *
 * <p>Its parts: {@link SendWindow} and {@link ReceiveWindow} (the state of each direction), {@link AckCoalescer}
 * (when ACKs go), {@link RetransmitPolicy} (what is sent again), {@link RtoEstimator}, {@link RailSet} and
 * {@link DrTimers} (retransmission, local-completion, keepalive/persist and dead-rail timers, failover, giving up);
 * this class holds the owner's API, the dispatch of inbound datagrams, the sending duty cycle and the counters.
 *
 * <p><b>Concurrency:</b> not thread-safe; one thread drives it at a time.
 */
public final class DrEndpoint {
    private final DrConfig config;
    private final int localId;
    private final int peerId;
    private final String peerName;
    private final DatagramSink sink;
    private final SendWindow send;
    private final ReceiveWindow receive;
    private final RtoEstimator rto;
    private final RailSet rails;
    private final DrDatagram decoder = new DrDatagram();
    private final SendWindow.RttListener rttListener = this::onRttSample;
    private final AckCoalescer acks;
    private final RetransmitPolicy retx;
    private final DrTimers timers;
    private @Nullable RdmaException failure;

    private long vfragsSent;
    private long acksReceived;
    private long vfragsReceived;
    private long duplicatesDropped;
    private long outOfWindowDropped;
    private long corruptedDropped;
    private long malformedDropped;
    private long messagesDelivered;
    private long rttSamples;

    /**
     * @param localId  this endpoint's id, carried in every datagram it sends
     * @param peerId   the peer's id: datagrams from any other source are dropped as foreign
     * @param peerName how errors name the peer (an address, a node name)
     * @param rails    rails the peer is reached on, in [1, 64]
     * @param nowNs    the time now, ns
     */
    public DrEndpoint(DrConfig config, int localId, int peerId, String peerName, int rails, DatagramSink sink, long nowNs) {
        this.config = Objects.requireNonNull(config, "config");
        this.localId = localId;
        this.peerId = peerId;
        this.peerName = Objects.requireNonNull(peerName, "peerName");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.rails = new RailSet(rails, nowNs);
        this.send = new SendWindow(config, localId);
        this.receive = new ReceiveWindow(config);
        this.rto = new RtoEstimator(config.initialRtoNs(), config.minRtoNs(), config.maxRtoNs());
        this.acks = new AckCoalescer(config, localId, sink, receive);
        this.retx = new RetransmitPolicy(config.mode(), sink, send, this.rails, rto);
        this.timers = new DrTimers(config, localId, peerName, sink, send, receive, rto, this.rails, retx, nowNs);
    }

    // ------------------------------------------------------------------ owner's commands

    /**
     * Queues a whole message for sending (the array is kept, not copied, until sent).
     *
     * @throws IllegalArgumentException if it is longer than {@link DrConfig#maxMessageBytes()}
     * @throws IllegalStateException    after {@link #finish()}
     */
    public void offer(byte[] message) {
        offer(MessageSource.of(message));
    }

    /**
     * Queues a whole message for sending, read from {@code message} as its VFRAGs are made (no copy first; see
     * {@link MessageSource} for how long its bytes must stay unchanged).
     *
     * @throws IllegalArgumentException if it is longer than {@link DrConfig#maxMessageBytes()}
     * @throws IllegalStateException    after {@link #finish()}
     */
    public void offer(MessageSource message) {
        if (message.length() > config.maxMessageBytes()) {
            throw new IllegalArgumentException("message of " + message.length() + " bytes exceeds maxMessageBytes="
                + config.maxMessageBytes() + "; split it or raise DrConfig.maxMessageBytes");
        }
        send.enqueue(message);
    }

    /** Ends the outbound stream after every queued message: the peer's receiver sees the end once all arrived. */
    public void finish() {
        send.finish();
    }

    /** Whether the endpoint still waits for inbound messages (keepalive probes run while it does); default true. */
    public void expectingInbound(boolean expecting) {
        timers.expectingInbound(expecting);
    }

    /**
     * Sets how many VFRAGs of credit the peer may hold (its grant from a receive pool shared with other peers),
     * clamped to [1, {@link DrConfig#receiveBufferVfrags()}]; a smaller grant takes effect as held VFRAGs are
     * consumed, a credit already advertised is never taken back.
     */
    public void receiveBudget(int vfrags) {
        receive.budget(vfrags);
    }

    /** The peer's current credit grant, VFRAGs. */
    public int receiveBudget() {
        return receive.budget();
    }

    /**
     * Hands back the array of a message {@link #poll()} returned once the owner is done with it (it must not be read or
     * written after this): the next message of the same length is reassembled into it instead of a fresh array.
     */
    public void recycle(byte[] delivered) {
        receive.recycle(delivered);
    }

    /**
     * Has received messages placed by {@code placement} straight into memory it names, one copy per VFRAG (see
     * {@link MessagePlacement}), instead of reassembled into arrays for {@link #poll()}; null turns it off. Placed
     * messages count as delivered.
     *
     * @throws IllegalStateException while a message is being placed
     */
    public void placement(@Nullable MessagePlacement placement) {
        receive.placement(placement);
    }

    /** The credit limit last advertised to the peer: it may send PSNs below it. */
    public int advertisedCreditLimit() {
        return acks.advertisedLimit();
    }

    /** The next whole message in order, or null; taking it frees credit for the peer. */
    public byte @Nullable [] poll() {
        byte[] m = receive.poll();
        if (m != null) {
            messagesDelivered++;
        }
        return m;
    }

    /** The sink reported the local completion of DATA VFRAG {@code psn} it had answered {@link DatagramSink#POSTED} for. */
    public void onLocalCompletion(int psn) {
        send.markLocalDone(psn);
    }

    // ------------------------------------------------------------------ state

    /** Messages queued and not yet fully fragmented. */
    public int queuedMessages() {
        return send.queuedMessages();
    }

    /** Bytes of the messages queued and not yet fully fragmented. */
    public long queuedBytes() {
        return send.queuedBytes();
    }

    /** Messages whose every VFRAG the peer acknowledged, counted in the order {@link #offer} took them. */
    public long messagesAcknowledged() {
        return send.messagesAcknowledged();
    }

    /** VFRAGs sent and not acknowledged. */
    public int inFlight() {
        return send.inFlight();
    }

    /** Whole messages received and not yet taken by {@link #poll()}. */
    public int readyMessages() {
        return receive.readyMessages();
    }

    /** Whether every queued message and the FIN were sent and acknowledged. */
    public boolean outboundFinished() {
        return send.finAcknowledged();
    }

    /** Whether every queued message was acknowledged (the FIN aside). */
    public boolean outboundIdle() {
        return send.queuedMessages() == 0 && send.inFlight() == 0;
    }

    /** Whether the peer's FIN arrived and every message before it was taken. */
    public boolean inboundFinished() {
        return receive.finished();
    }

    /** The failure that ended this endpoint, or null. */
    public @Nullable RdmaException failure() {
        return failure;
    }

    /** The rail the peer's traffic goes on now. */
    public int currentRail() {
        return rails.current();
    }

    public boolean railFailed(int rail) {
        return rails.isFailed(rail);
    }

    public String peerName() {
        return peerName;
    }

    public DrStats stats() {
        return new DrStats(vfragsSent, retx.vfragsRetransmitted(), timers.timeouts(), acks.acksSent(), acksReceived, vfragsReceived, duplicatesDropped,
            outOfWindowDropped, corruptedDropped, malformedDropped, messagesDelivered + receive.messagesPlaced(), rttSamples, timers.failovers(), timers.railsRevived(),
            rto.srttNs(), rto.rtoNs());
    }

    // ------------------------------------------------------------------ inbound

    /**
     * A datagram arrived on {@code rail}: checked (length, CRC32C, type, source), then handled.
     *
     * @return {@link DrDatagram#OK} or why it was dropped ({@link DrDatagram#TRUNCATED}, {@link DrDatagram#BAD_CRC},
     *     {@link DrDatagram#FOREIGN}: unknown type or another source)
     */
    public int onDatagram(int rail, DirectBuffer buffer, int offset, int length, long nowNs) {
        if (failure != null) {
            return DrDatagram.OK;
        }
        int r = decoder.decode(buffer, offset, length);
        if (r == DrDatagram.BAD_CRC) {
            corruptedDropped++;
            return r;
        }
        if (r != DrDatagram.OK) {
            malformedDropped++;
            return r;
        }
        if (decoder.sourceId != peerId || rail < 0 || rail >= rails.rails()) {
            malformedDropped++;
            return DrDatagram.FOREIGN;
        }
        timers.heard(nowNs);
        switch (decoder.type) {
            case DrDatagram.DATA -> onData(rail, buffer, nowNs);
            case DrDatagram.ACK -> onAck(rail, nowNs);
            default -> { // PROBE: answer on the rail it came on
                acks.probeFrom(rail, decoder.wordB);
            }
        }
        return DrDatagram.OK;
    }

    private void onData(int rail, DirectBuffer buffer, long nowNs) {
        int result;
        try {
            result = receive.accept(decoder.psn, decoder.flags, decoder.wordA, buffer, decoder.payloadOffset, decoder.payloadLength);
        } catch (DrProtocolException e) {
            fail(e);
            return;
        }
        acks.dataOn(rail);
        switch (result) {
            case ReceiveWindow.NEW_IN_ORDER -> {
                vfragsReceived++;
                acks.newInOrder(nowNs);
            }
            case ReceiveWindow.NEW_OUT_OF_ORDER -> {
                vfragsReceived++;
                acks.ackNow();
            }
            case ReceiveWindow.DUPLICATE -> {
                duplicatesDropped++;
                acks.ackNow();
            }
            default -> {
                outOfWindowDropped++;
                acks.ackNow();
            }
        }
    }

    private void onAck(int rail, long nowNs) {
        acksReceived++;
        int oldLimit = send.creditLimit();
        int oldUna = send.una();
        boolean progress = send.onAck(decoder.psn, decoder.wordB, decoder.wordA, nowNs, rttListener);
        boolean probeReply = (decoder.flags & DrDatagram.FLAG_PROBE_REPLY) != 0;
        timers.onAck(rail, probeReply, progress, send.una() == oldUna && send.inFlight() > 0, send.creditLimit() != oldLimit, nowNs);
    }

    private void onRttSample(long rttNs) {
        rttSamples++;
        rto.sample(rttNs);
    }

    // ------------------------------------------------------------------ duty cycle

    /**
     * Runs the timers that are due, sends the VFRAGs the window and credit allow and the ACK that is due.
     *
     * @return work done (datagrams sent, timers fired)
     */
    public int doWork(long nowNs) {
        if (failure != null) {
            return 0;
        }
        int work = timers.run(nowNs);
        if (timers.failure() != null) {
            fail(timers.failure());
            return work;
        }
        if (send.unsent() > 0 && !sendUnsent(nowNs)) {
            return work + acks.acknowledge(nowNs);
        }
        while (send.canFragment()) {
            int psn = send.nextPsn();
            boolean wasIdle = send.inFlight() == 0;
            send.fragmentNext(nowNs);
            if (wasIdle) {
                timers.sentFromIdle(nowNs);
            }
            int r = sink.send(rails.current(), send.datagram(psn), send.length(psn), psn);
            if (r == DatagramSink.BACK_PRESSURED) {
                send.markUnsent(psn); // fragmented, not out: it goes first on a later duty cycle
                break;
            }
            if (r == DatagramSink.SENT) {
                send.markLocalDone(psn);
            }
            vfragsSent++;
            work++;
        }
        work += acks.acknowledge(nowNs);
        return work;
    }

    /** Whether this endpoint owes its peer an ACK (VFRAGs received and not yet acknowledged, or one due at once). */
    public boolean ackOwed() {
        return failure == null && acks.owed();
    }

    /** Sends the VFRAGs a back-pressured sink refused. @return false if the sink refuses again */
    private boolean sendUnsent(long nowNs) {
        for (int psn = send.una(); psn - send.nextPsn() < 0 && send.unsent() > 0; psn++) {
            if (send.transmissions(psn) == 0) {
                int r = sink.send(rails.current(), send.datagram(psn), send.length(psn), psn);
                if (r == DatagramSink.BACK_PRESSURED) {
                    return false;
                }
                send.markFirstSent(psn, nowNs, r == DatagramSink.SENT);
                vfragsSent++;
            }
        }
        return true;
    }

    /**
     * When {@link #doWork} has to run next at the latest (a timer), ns; {@code Long.MAX_VALUE} when only a new
     * datagram, message or completion can give it work. Call it after {@code doWork}.
     */
    public long nextDeadlineNs() {
        if (failure != null) {
            return Long.MAX_VALUE;
        }
        return Math.min(timers.nextDeadlineNs(), acks.deadlineNs());
    }

    /** Whether something is due now without a timer (a new VFRAG may go, an ACK is owed). */
    public boolean hasImmediateWork() {
        return failure == null && (send.canFragment() || acks.hasImmediateWork());
    }

    /** Fails the endpoint (both directions) with {@code error}; the first failure wins. */
    public void fail(RdmaException error) {
        if (failure == null) {
            failure = error;
            receive.abandon();
        }
    }
}
