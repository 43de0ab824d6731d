package io.rdmaflux.core.tck;

import io.rdmaflux.core.ConnectionClosedException;
import io.rdmaflux.core.MessageTooLargeException;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.tck.ConnectionTckFixture.Side;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Connection TCK: what every {@link io.rdmaflux.core.RdmaConnection} must do, whatever its fabric,
 * threading and channel kind, as an abstract JUnit 5 suite (like rsocket-java's {@code TransportTest}
 * and verbs' {@code ProviderTck}). A suite runs it by extending this class and implementing
 * {@link #openPair(PairOptions)}; it uses nothing but the public API, so it runs unchanged over any
 * connection implementation.
 *
 * <p>Covered: delivery exactly once, in PSN order, byte-exact, over 1 and 2 rails (the second rail slower
 * where the pair can shape it) under every demand pattern; credits bounding what the sender takes from its
 * publisher (checked at every message taken, and against {@code metrics().maxOutstandingRequest()});
 * fragmentation edges around the frame payload and the maximum message size; rendezvous-size messages;
 * graceful close while and after sending; abort; cancel of {@code receive()} mid-stream; a failed rail
 * mid-stream; traffic both ways at once. Every message carries its sequence number and a pattern
 * ({@link TckPayload}) checked byte for byte. Every test ends with the pair closed gracefully, no received
 * message held, and (through the module's {@code RdmaLeakCheckExtension}) no leaked buffer, soft-provider
 * resource or thread.
 *
 * <p>Node settings of every pair: {@value #BUFFER_BYTES}-byte buffers, {@value #RECEIVE_BUFFERS} receive
 * buffers per rail, a send queue of {@value #SEND_QUEUE}, {@value #MAX_MESSAGE_BYTES}-byte maximum message.
 */
public abstract class ConnectionTck {
    protected static final int BUFFER_BYTES = 512;
    protected static final int RECEIVE_BUFFERS = 8;
    protected static final int SEND_QUEUE = 4;
    protected static final int MAX_MESSAGE_BYTES = 12 * 1024;
    /** Whole-message buffers per node and direction for rendezvous (the node default). */
    protected static final int RENDEZVOUS_BUFFERS = 4;
    /** Rail r is r x this slower, one way, where the pair has a rail model. */
    protected static final long RAIL_SKEW_NS = 5_000;

    /** A fresh connected pair as {@code options} asks. */
    protected abstract ConnectionTckFixture openPair(PairOptions options);

    /**
     * Whether {@link #openPair} honours {@link PairOptions#railFaults()} (RC loss, duplication,
     * reordering on the wire). The hook for pairs whose provider can inject them; false here, and the
     * fault tests are skipped.
     */
    protected boolean supportsRailFaults() {
        return false;
    }

    /** The options every test starts from. */
    protected PairOptions options(int rails) {
        return PairOptions.rails(rails).node(b -> b.bufferBytes(BUFFER_BYTES).receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE)
            .maxMessageBytes(MAX_MESSAGE_BYTES).rendezvousBuffers(RENDEZVOUS_BUFFERS));
    }

    static Stream<Arguments> railsAndDemand() {
        List<Arguments> out = new ArrayList<>();
        for (int rails = 1; rails <= 2; rails++) {
            for (Demand d : Demand.values()) {
                out.add(Arguments.of(rails, d));
            }
        }
        return out.stream();
    }

    static Stream<Arguments> railsAndSide() {
        return Stream.of(Arguments.of(1, Side.CLIENT), Arguments.of(1, Side.SERVER), Arguments.of(2, Side.CLIENT), Arguments.of(2, Side.SERVER));
    }

    /** Mostly small (packed) messages, some of a whole frame, every tenth above the rendezvous threshold. */
    static int mixedSize(int seq) {
        if (seq % 10 == 9) {
            return 1500 + seq % 700;
        }
        return seq % 3 == 0 ? 400 : 8 + seq % 50;
    }

    /**
     * What the sender may have taken from its publisher at any moment: no more than the subscriber asked
     * for, nor than the messages it released plus what all receive buffers hold (up to the receiving
     * node's {@code messageCreditsPerBuffer} messages each: small messages share a buffer), plus the send
     * queue.
     */
    private static LongSupplier creditBound(TckReceiver r, int rails) {
        ConnectionTckFixture fx = r.fixture();
        long perBuffer = Math.max(fx.clientNode().messageCreditsPerBuffer(), fx.serverNode().messageCreditsPerBuffer());
        return creditBound(r, rails, perBuffer);
    }

    /**
     * As {@link #creditBound(TckReceiver, int)} with {@code perBuffer} messages per receive buffer.
     * A rendezvous message frees the receive buffer of its RTS before it is delivered: it is held in one
     * of the node's message buffers (RdmaNode.Builder.rendezvousBuffers, default 4) instead.
     */
    private static LongSupplier creditBound(TckReceiver r, int rails, long perBuffer) {
        return () -> Math.min(r.requested(), r.released() + perBuffer * rails * RECEIVE_BUFFERS + RENDEZVOUS_BUFFERS) + SEND_QUEUE;
    }

    private static List<Integer> range(int from, int to) {
        return IntStream.range(from, to).boxed().toList();
    }

    // ------------------------------------------------------------------ ordering and credits

    @ParameterizedTest(name = "{0} rail(s), {1}")
    @MethodSource("railsAndDemand")
    void everyMessageArrivesOnceInPsnOrderByteExactUnderEveryDemandPattern(int rails, Demand demand) {
        try (ConnectionTckFixture fx = openPair(options(rails).railLatencySkewNs(RAIL_SKEW_NS))) {
            int n = 240;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(demand).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize, creditBound(r, rails));
            fx.await("all " + n + " messages arrive and the send completes; " + r + ", " + s, () -> r.received() == n && s.terminated());
            s.assertCompleted();
            r.assertNoFailure();
            assertEquals(range(0, n), r.psns(), "PSNs 0..n-1, each once, in order");
            s.assertBoundHeld();
            long window = Math.min(demand.window, (long) rails * RECEIVE_BUFFERS);
            long maxOutstanding = fx.client().metrics().maxOutstandingRequest();
            assertTrue(maxOutstanding <= window + SEND_QUEUE, "requested from the publisher and not yet transmitted: at most "
                + window + " credits + " + SEND_QUEUE + " queued, was " + maxOutstanding);
            fx.settle();
            assertEquals(n, r.received(), "nothing arrives twice");
            assertEquals(n, fx.server().metrics().messagesReceived());
            assertEquals(n, fx.client().metrics().messagesDelivered());
        }
    }

    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void aStalledSubscriberBoundsWhatTheSenderTakesFromItsPublisher(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int n = 200;
            int demand = 5;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).holding(demand).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize, creditBound(r, rails));
            fx.await("the " + demand + " messages asked for arrive", () -> r.received() == demand);
            fx.settle();
            assertEquals(demand, r.received(), "only what was asked for arrives");
            assertTrue(s.emitted() <= demand + SEND_QUEUE, "the sender took " + s.emitted() + " from its publisher, more than demand "
                + demand + " + send queue " + SEND_QUEUE);
            assertFalse(s.terminated(), "the send waits for credit: " + s);
            assertTrue(fx.client().metrics().maxOutstandingRequest() <= demand + SEND_QUEUE,
                "maxOutstandingRequest " + fx.client().metrics().maxOutstandingRequest());
            s.assertBoundHeld();
            r.stopHolding();
            r.request(n - demand);
            fx.await("the rest arrives once the subscriber asks; " + r + ", " + s, () -> r.received() == n && s.terminated());
            s.assertCompleted();
            r.assertNoFailure();
            r.releaseHeld();
            assertEquals(range(0, n), r.psns());
            s.assertBoundHeld();
        }
    }

    /**
     * The grant's byte bound: a receiver grants several message credits per free receive buffer (small
     * messages share buffers), but messages that each fill a buffer are taken from the publisher as if it
     * granted one per buffer, so once a stalled subscriber's buffers are full their sender holds no more
     * than its send queue (and the one message part-way out) taken from its publisher and not delivered.
     */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void aStalledSubscriberOfMessagesThatFillABufferHoldsTheSenderToTheFreeBuffers(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int frame = fx.maxFramePayloadBytes();
            IntUnaryOperator size = seq -> frame;
            int n = 8 * rails * RECEIVE_BUFFERS;
            TckReceiver r = TckReceiver.builder(fx, size).holding(n).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, size, creditBound(r, rails));
            fx.await("the receive buffers fill", () -> r.received() >= (long) rails * RECEIVE_BUFFERS);
            fx.settle();
            long arrived = r.received();
            assertTrue(arrived < n, "the stalled subscriber's buffers stop the stream: " + r);
            assertTrue(s.emitted() - arrived <= SEND_QUEUE + 1, "the sender took " + s.emitted() + " messages from its publisher with "
                + arrived + " delivered: more than the send queue (" + SEND_QUEUE + ") ahead, riding on credits granted per buffer");
            r.stopHolding();
            fx.await("the rest arrives once the subscriber releases; " + r + ", " + s, () -> r.received() == n && s.terminated());
            s.assertCompleted();
            r.assertNoFailure();
            assertEquals(range(0, n), r.psns());
            s.assertBoundHeld();
        }
    }

    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void trafficBothWaysAtOnceArrivesInOrderOnEachSide(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails).railLatencySkewNs(RAIL_SKEW_NS))) {
            int n = 300;
            IntUnaryOperator size = seq -> 8 + seq % 300;
            TckReceiver atServer = TckReceiver.builder(fx, size).demand(Demand.BURSTS).subscribe(fx.server());
            TckReceiver atClient = TckReceiver.builder(fx, size).demand(Demand.ONE_AT_A_TIME).subscribe(fx.client());
            TckSend up = TckSend.start(fx, fx.client(), 0, n, size, creditBound(atServer, rails));
            TckSend down = TckSend.start(fx, fx.server(), 0, n, size, creditBound(atClient, rails));
            fx.await("both directions deliver everything", () -> atServer.received() == n && atClient.received() == n
                && up.terminated() && down.terminated());
            up.assertCompleted();
            down.assertCompleted();
            atServer.assertNoFailure();
            atClient.assertNoFailure();
            assertEquals(range(0, n), atServer.psns());
            assertEquals(range(0, n), atClient.psns());
            up.assertBoundHeld();
            down.assertBoundHeld();
        }
    }

    // ------------------------------------------------------------------ sizes

    static Stream<Arguments> railsAndRendezvous() {
        return Stream.of(Arguments.of(1, false), Arguments.of(1, true), Arguments.of(2, false), Arguments.of(2, true));
    }

    /**
     * 0 B, 1 B, a frame's payload - 1, + 0, + 1, two frames' and the maximum message size - 1 and + 0, each
     * twice between small messages: as DATA fragments (rendezvous off), or above one frame by rendezvous
     * (the node default threshold is one frame's payload).
     */
    @ParameterizedTest(name = "{0} rail(s), rendezvous {1}")
    @MethodSource("railsAndRendezvous")
    void messagesAtEveryFragmentationEdgeArriveByteExact(int rails, boolean rendezvous) {
        PairOptions o = options(rails).railLatencySkewNs(RAIL_SKEW_NS).node(b -> b.rendezvousBuffers(rendezvous ? RENDEZVOUS_BUFFERS : 0));
        try (ConnectionTckFixture fx = openPair(o)) {
            int mtu = fx.maxFramePayloadBytes();
            int max = fx.client().maxMessageBytes();
            assertEquals(MAX_MESSAGE_BYTES, max, "the negotiated maximum");
            assertTrue(mtu > 1 && mtu < BUFFER_BYTES, "frame payload " + mtu);
            int[] edges = {0, 1, mtu - 1, mtu, mtu + 1, 2 * mtu - 1, 2 * mtu, 2 * mtu + 1, max - 1, max};
            List<Integer> sizes = new ArrayList<>();
            for (int round = 0; round < 2; round++) {
                for (int e : edges) {
                    sizes.add(e);
                    sizes.add(3 + round);
                }
            }
            int n = sizes.size();
            IntUnaryOperator size = sizes::get;
            assertAllDelivered(fx, rails, n, size, Demand.ONE_AT_A_TIME, "every edge size arrives");
        }
    }

    /**
     * Three sends subscribed at once: the second carries a message of the maximum size + 1 after three
     * good ones. Only the second fails, with {@link MessageTooLargeException} naming both sizes; the first
     * and third deliver everything (the third includes a message of exactly the maximum size), and the
     * connection stays usable.
     */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void aMessageAboveTheMaximumFailsOnlyItsSendAndNothingElseIsLost(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int max = fx.client().maxMessageBytes();
            // seq 0..9: send A; 10..15: send B with seq 13 too large; 16..26: send C, 16 of the maximum size
            IntUnaryOperator size = seq -> seq == 13 ? max + 1 : seq == 16 ? max : 20 + seq * 37;
            List<Integer> expected = new ArrayList<>(range(0, 13));
            expected.addAll(range(16, 27));
            TckReceiver r = TckReceiver.builder(fx, size).expectedSeq(expected::get).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend a = TckSend.start(fx, fx.client(), 0, 10, size);
            TckSend b = TckSend.start(fx, fx.client(), 10, 6, size);
            TckSend c = TckSend.start(fx, fx.client(), 16, 11, size);
            fx.await("the three sends end and the good messages arrive; " + r, () -> a.terminated() && b.terminated() && c.terminated()
                && r.received() >= expected.size());
            a.assertCompleted();
            c.assertCompleted();
            MessageTooLargeException e = assertInstanceOf(MessageTooLargeException.class, b.error());
            assertEquals(max + 1, e.lengthBytes());
            assertEquals(max, e.maxMessageBytes());
            assertTrue(e.getMessage().contains((max + 1) + " bytes") && e.getMessage().contains(max + " bytes"), e.getMessage());
            fx.settle();
            r.assertNoFailure();
            assertEquals(expected.size(), r.received(), "the messages before the large one and every other send's, nothing else");
            assertFalse(fx.client().isDisposed(), "the connection stays usable");
            TckSend after = TckSend.start(fx, fx.client(), 27, 0, size);
            fx.await("an empty send after it completes", after::terminated);
            after.assertCompleted();
        }
    }

    /** Messages above the node's rendezvous threshold (one frame's payload), up to the maximum, between small ones. */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void rendezvousSizeMessagesArriveByteExactInOrder(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails).railLatencySkewNs(RAIL_SKEW_NS).node(b -> b.rendezvousBuffers(RENDEZVOUS_BUFFERS)))) {
            int mtu = fx.maxFramePayloadBytes();
            int max = fx.client().maxMessageBytes();
            IntUnaryOperator size = seq -> switch (seq % 4) {
                case 0 -> mtu + 1 + seq * 97 % (max - mtu);
                case 1 -> 16;
                case 2 -> max;
                default -> 3 * mtu + seq;
            };
            int n = 40;
            assertAllDelivered(fx, rails, n, size, Demand.RELEASE_OUT_OF_ORDER, "every large message arrives");
        }
    }

    // ------------------------------------------------------------------ close, abort, cancel

    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void aGracefulCloseWhileSendingDeliversEverythingAndClosesBothSides(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int n = 150;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(Demand.BURSTS).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize);
            fx.client().close();
            TckSend refused = TckSend.start(fx, fx.client(), n, 1, ConnectionTck::mixedSize);
            fx.await("the send under way completes, the receive stream completes, both sides close; " + r + ", " + s,
                () -> s.terminated() && r.terminated() && fx.closed(Side.CLIENT) && fx.closed(Side.SERVER));
            s.assertCompleted();
            r.assertNoFailure();
            assertTrue(r.completed(), "receive() completes after the peer's graceful close: " + r);
            assertEquals(range(0, n), r.psns());
            fx.await("a send after close() ends", refused::terminated);
            assertInstanceOf(ConnectionClosedException.class, refused.error(), "a send after close(): " + refused);
        }
    }

    @ParameterizedTest(name = "{0} rail(s), {1} closes first")
    @MethodSource("railsAndSide")
    void aGracefulCloseAfterSendingCompletesTheReceiveStream(int rails, Side first) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int n = 60;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize);
            fx.await("the send completes", () -> s.terminated() && r.received() == n);
            s.assertCompleted();
            fx.connection(first).close();
            fx.connection(first == Side.CLIENT ? Side.SERVER : Side.CLIENT).close();
            fx.await("both sides close and receive() completes; " + r,
                () -> r.terminated() && fx.closed(Side.CLIENT) && fx.closed(Side.SERVER));
            assertTrue(r.completed(), "receive() completes: " + r);
            r.assertNoFailure();
            assertEquals(range(0, n), r.psns());
            assertTrue(fx.client().isDisposed() && fx.server().isDisposed());
        }
    }

    /**
     * The receiver holds 5 of 200 messages (the sender waits for credit), then {@code side} aborts: the
     * send and the receive stream fail with {@link ConnectionClosedException}, by the peer on the other
     * side; the 5 delivered stay valid and byte-exact until released.
     */
    @ParameterizedTest(name = "{0} rail(s), {1} aborts")
    @MethodSource("railsAndSide")
    void anAbortMidStreamFailsBothSidesWithConnectionClosedAndKeepsDeliveredMessages(int rails, Side aborter) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int n = 200;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).holding(5).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize);
            fx.await("5 messages arrive", () -> r.received() == 5);
            fx.connection(aborter).abort();
            fx.await("the send and the receive stream fail, both sides close; " + r + ", " + s,
                () -> s.terminated() && r.terminated() && fx.closed(Side.CLIENT) && fx.closed(Side.SERVER));
            ConnectionClosedException sendError = assertInstanceOf(ConnectionClosedException.class, s.error(), "send: " + s);
            ConnectionClosedException receiveError = assertInstanceOf(ConnectionClosedException.class, r.error(), "receive: " + r);
            assertEquals(aborter == Side.SERVER, sendError.byPeer(), "send error byPeer: " + sendError);
            assertEquals(aborter == Side.CLIENT, receiveError.byPeer(), "receive error byPeer: " + receiveError);
            r.assertNoFailure();
            assertEquals(range(0, 5), r.psns());
            assertEquals(5, r.heldCount(), "delivered messages stay valid after the abort");
            r.releaseHeld();
            TckSend late = TckSend.start(fx, fx.connection(aborter), 1000, 1, ConnectionTck::mixedSize);
            fx.await("a send after abort ends", late::terminated);
            assertInstanceOf(ConnectionClosedException.class, late.error());
        }
    }

    /**
     * The subscriber cancels inside {@code onNext} of the 37th of 150 messages while the sender streams:
     * the sender's send fails with {@link ConnectionClosedException} by the peer naming the messages it took
     * from the publisher and did not deliver (all it took but the 37) and the 37 the subscriber got, and
     * saying the publisher was cancelled; a later send is refused; the connection still closes gracefully.
     */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void cancellingReceiveMidStreamFailsTheSendNamingWhatWasNotDelivered(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int n = 150;
            int k = 37;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(Demand.UNBOUNDED).cancelAfter(k).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize);
            fx.await("the send fails after the cancel; " + r + ", " + s, () -> s.terminated() && r.received() == k);
            ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, s.error(), "send: " + s);
            assertTrue(e.byPeer(), "the peer's inbound side closed: " + e);
            String m = e.getMessage();
            long notDelivered = s.emitted() - k;
            assertTrue(s.emitted() < n, "the publisher was cancelled before it ended: " + s);
            assertTrue(m.contains(notDelivered + (notDelivered == 1 ? " message" : " messages") + " of this send() were not delivered"
                + " and its publisher was cancelled"), "took " + s.emitted() + ": " + m);
            assertTrue(m.contains("its subscriber got " + k + " of them"), m);
            fx.settle();
            assertEquals(k, r.received(), "nothing is delivered after the cancel");
            r.assertNoFailure();
            assertEquals(range(0, k), r.psns());
            assertFalse(fx.client().isDisposed() || fx.server().isDisposed(), "a cancel closes the inbound side, not the connection");
            TckSend later = TckSend.start(fx, fx.client(), n, 1, ConnectionTck::mixedSize);
            fx.await("a later send ends", later::terminated);
            ConnectionClosedException refused = assertInstanceOf(ConnectionClosedException.class, later.error());
            assertTrue(refused.getMessage().contains("send() refused"), refused.getMessage());
        }
    }

    // ------------------------------------------------------------------ late subscriber, publisher errors

    /**
     * The client sends 120 mixed messages before the server subscribes to {@code receive()}: without demand
     * there is no credit, so the sender takes no more than its send queue and nothing arrives; once the
     * subscriber comes, every message arrives exactly once, in PSN order, byte-exact, within the credit
     * bound all along.
     */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void aLateReceiveSubscriberGetsEveryMessageThatWaitedForCredit(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails).railLatencySkewNs(RAIL_SKEW_NS))) {
            int n = 120;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(Demand.BURSTS).build();
            AtomicReference<LongSupplier> bound = new AtomicReference<>(() -> SEND_QUEUE);
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize, () -> bound.get().getAsLong());
            fx.settle();
            assertFalse(s.terminated(), "the send waits for credit: " + s);
            assertTrue(s.emitted() <= SEND_QUEUE, "without a subscriber the sender took " + s.emitted() + " > send queue " + SEND_QUEUE);
            assertEquals(0, fx.server().metrics().messagesReceived(), "nothing arrives without demand");
            bound.set(creditBound(r, rails));
            r.subscribeTo(fx.server());
            fx.await("every message arrives once the subscriber came; " + r + ", " + s, () -> r.received() == n && s.terminated());
            s.assertCompleted();
            r.assertNoFailure();
            assertEquals(range(0, n), r.psns(), "each once, in PSN order");
            s.assertBoundHeld();
            fx.settle();
            assertEquals(n, r.received(), "nothing arrives twice");
        }
    }

    static Stream<Arguments> railsAndMessagesBeforeError() {
        return Stream.of(Arguments.of(1, 0), Arguments.of(1, 30), Arguments.of(2, 30));
    }

    /**
     * A publisher that signals an error after {@code before} mixed messages (the last of them a rendezvous
     * one): the send fails with that very error once the messages before it were delivered; they arrive, in
     * order, byte-exact, and nothing else; the connection stays usable and its PSNs go on.
     */
    @ParameterizedTest(name = "{0} rail(s), error after {1} messages")
    @MethodSource("railsAndMessagesBeforeError")
    void aPublisherErrorFailsItsSendWithThatErrorAfterTheMessagesBeforeIt(int rails, int before) {
        try (ConnectionTckFixture fx = openPair(options(rails).railLatencySkewNs(RAIL_SKEW_NS))) {
            IllegalStateException boom = new IllegalStateException("the publisher failed after " + before + " messages");
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.startFailing(fx, fx.client(), 0, before, ConnectionTck::mixedSize, boom, creditBound(r, rails));
            fx.await("the send fails and the messages before the error arrive; " + r + ", " + s,
                () -> s.terminated() && r.received() == before);
            assertSame(boom, s.error(), "the send fails with the publisher's error: " + s);
            fx.settle();
            r.assertNoFailure();
            assertEquals(range(0, before), r.psns(), "the messages before the error, each once, in order");
            s.assertBoundHeld();
            assertFalse(fx.client().isDisposed() || fx.server().isDisposed(), "a publisher error fails only its send");
            TckSend after = TckSend.start(fx, fx.client(), before, 10, ConnectionTck::mixedSize);
            fx.await("a send after the failed one delivers", () -> after.terminated() && r.received() == before + 10);
            after.assertCompleted();
            r.assertNoFailure();
            assertEquals(range(0, before + 10), r.psns());
        }
    }

    /**
     * The receiver holds 5 messages while the publisher emits 8 (within 5 credits + the send queue) and
     * then an error: the send does not fail while 3 of the 8 wait for credit; once the subscriber asks for
     * more they arrive, and then the send fails with the publisher's error.
     */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void aPublisherErrorWaitsForTheMessagesBeforeItThatWaitForCredit(int rails) {
        try (ConnectionTckFixture fx = openPair(options(rails))) {
            int demand = 5;
            int before = 8;
            IllegalStateException boom = new IllegalStateException("the publisher failed after " + before + " messages");
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).holding(demand).subscribe(fx.server());
            TckSend s = TckSend.startFailing(fx, fx.client(), 0, before, ConnectionTck::mixedSize, boom, creditBound(r, rails));
            fx.await("the " + demand + " messages asked for arrive", () -> r.received() == demand);
            fx.settle();
            assertEquals(before, s.emitted(), "the publisher emitted everything and its error: " + s);
            assertFalse(s.terminated(), "the send waits for its messages still waiting for credit: " + s);
            r.stopHolding();
            r.request(before);
            fx.await("the rest arrives, then the send fails; " + r + ", " + s, () -> r.received() == before && s.terminated());
            assertSame(boom, s.error(), "the send fails with the publisher's error: " + s);
            r.assertNoFailure();
            assertEquals(range(0, before), r.psns());
            s.assertBoundHeld();
        }
    }

    // ------------------------------------------------------------------ subchannels()

    /**
     * {@code subchannels()} on both sides: one snapshot per rail, in rail order, in an unmodifiable list,
     * of the kind the spec asked for, USABLE, on distinct ports, nothing sent yet. After 60 messages of one
     * frame or less a new snapshot shows them (every message completed on some rail of the sender, bytes on
     * every rail that carried one) while the old one still shows nothing: a picture, not a view. After a graceful close no
     * rail is USABLE.
     */
    @ParameterizedTest(name = "{0} rail(s)")
    @ValueSource(ints = {1, 2})
    void subchannelsAreImmutableSnapshotsOnePerRail(int rails) {
        PairOptions o = options(rails);
        try (ConnectionTckFixture fx = openPair(o)) {
            for (Side side : Side.values()) {
                List<SubchannelSnapshot> before = fx.connection(side).subchannels();
                assertEquals(rails, before.size(), side + ": one snapshot per rail");
                assertThrows(UnsupportedOperationException.class, () -> before.remove(0), side + ": the list is unmodifiable");
                for (int i = 0; i < rails; i++) {
                    SubchannelSnapshot sc = before.get(i);
                    assertEquals(i, sc.rail(), side + ": rail order");
                    assertEquals(o.connectionSpec().channelKind(i), sc.kind(), side + " rail " + i);
                    assertEquals(SubchannelSnapshot.State.USABLE, sc.state(), side + " rail " + i);
                    assertTrue(sc.isUsable());
                    assertEquals(fx.maxFramePayloadBytes(), sc.maxFramePayloadBytes(), side + " rail " + i);
                    assertEquals(0, sc.messagesCompleted(), side + " rail " + i + " before any send");
                }
                assertEquals(rails, before.stream().map(SubchannelSnapshot::port).distinct().count(), side + ": a port per rail (of one device or several)");
                assertEquals(rails, before.stream().map(SubchannelSnapshot::identity).distinct().count(), side + ": an identity per rail");
            }
            List<SubchannelSnapshot> clientBefore = fx.client().subchannels();
            int n = 60;
            IntUnaryOperator size = seq -> 1 + seq * 7 % fx.maxFramePayloadBytes();
            TckReceiver r = TckReceiver.builder(fx, size).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, size);
            fx.await("the messages arrive; " + r + ", " + s, () -> r.received() == n && s.terminated());
            s.assertCompleted();
            fx.settle();
            List<SubchannelSnapshot> clientAfter = fx.client().subchannels();
            assertEquals(n, clientAfter.stream().mapToLong(SubchannelSnapshot::messagesCompleted).sum(), "every message completed on a rail: "
                + clientAfter);
            for (int i = 0; i < rails; i++) {
                SubchannelSnapshot now = clientAfter.get(i);
                assertSame(clientBefore.get(i).identity(), now.identity(), "the same rail in every snapshot");
                assertTrue(now.messagesCompleted() == 0 || now.bytesSent() > 0, "a rail that carried messages sent bytes: " + now);
                assertEquals(0, clientBefore.get(i).messagesCompleted(), "an old snapshot does not change");
                assertEquals(0, clientBefore.get(i).bytesSent(), "an old snapshot does not change");
                assertEquals(SubchannelSnapshot.State.USABLE, now.state());
            }
            fx.client().close();
            fx.server().close();
            fx.await("both sides close", () -> fx.closed(Side.CLIENT) && fx.closed(Side.SERVER));
            for (Side side : Side.values()) {
                for (SubchannelSnapshot sc : fx.connection(side).subchannels()) {
                    assertFalse(sc.isUsable(), side + ": after close no rail is usable: " + sc);
                }
            }
        }
    }

    // ------------------------------------------------------------------ rails

    /**
     * Two rails, the second slower; when the receiver got 60 of 300 mixed messages (small, one frame,
     * rendezvous), {@code side}'s port of rail {@code rail} goes down. Every message arrives exactly once,
     * in PSN order, byte-exact; the send completes; the connection lives on one rail and still closes
     * gracefully.
     */
    @ParameterizedTest(name = "rail {0} fails on the {1} side")
    @MethodSource("railAndSide")
    void aRailFailingMidStreamLosesDuplicatesAndMisordersNothing(int rail, Side side) {
        PairOptions o = options(2).railLatencySkewNs(RAIL_SKEW_NS).fastRailFailureDetection();
        try (ConnectionTckFixture fx = openPair(o)) {
            Assumptions.assumeTrue(fx.supportsRailFailure(), "this pair cannot take a port down");
            int n = 300;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::mixedSize).demand(Demand.BURSTS)
                .onMessage(k -> {
                    if (k == 60) {
                        fx.failRail(side, rail);
                    }
                })
                .subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, n, ConnectionTck::mixedSize, creditBound(r, 2));
            fx.await("every message arrives after the failover; " + r + ", " + s, () -> r.received() == n && s.terminated());
            s.assertCompleted();
            r.assertNoFailure();
            assertEquals(range(0, n), r.psns(), "exactly once, in PSN order");
            assertFalse(fx.client().isDisposed(), "one rail left: the connection lives");
            for (Side each : Side.values()) {
                fx.await(each + "'s snapshot of rail " + rail + " shows it FAILED: " + fx.connection(each).subchannels(),
                    () -> fx.connection(each).subchannels().get(rail).state() == SubchannelSnapshot.State.FAILED);
                SubchannelSnapshot other = fx.connection(each).subchannels().get(1 - rail);
                assertEquals(SubchannelSnapshot.State.USABLE, other.state(), each + ": the other rail carries on: " + other);
            }
            // no settle(): a real-time pair's probe connection may run on the rail that failed; the next send
            // is the barrier instead, and a late copy of an earlier message would break its PSN sequence
            TckSend after = TckSend.start(fx, fx.client(), n, 20, ConnectionTck::mixedSize);
            fx.await("a send after the failover", () -> after.terminated() && r.received() >= n + 20);
            after.assertCompleted();
            r.assertNoFailure();
            assertEquals(range(0, n + 20), r.psns(), "no copy arrives late");
        }
    }

    static Stream<Arguments> railAndSide() {
        return Stream.of(Arguments.of(0, Side.SERVER), Arguments.of(1, Side.SERVER), Arguments.of(0, Side.CLIENT), Arguments.of(1, Side.CLIENT));
    }

    /** Rendezvous above this under rail faults, so messages between a frame's payload and it go as DATA fragments. */
    protected static final int FAULT_RENDEZVOUS_THRESHOLD_BYTES = 1024;

    /**
     * Packed small messages, single frames, messages of 2 or 3 DATA fragments (above a frame's payload,
     * below {@link #FAULT_RENDEZVOUS_THRESHOLD_BYTES}) and rendezvous messages (RTS, RDMA WRITE, FIN).
     */
    static int faultSize(int seq) {
        return switch (seq % 10) {
            case 9 -> 1500 + seq % 700;
            case 4 -> 600 + seq % 400;
            case 0, 3, 6 -> 400;
            default -> 8 + seq % 50;
        };
    }

    static Stream<Arguments> faultProfilesAndRails() {
        List<Arguments> out = new ArrayList<>();
        for (RailFaultProfile p : RailFaultProfile.values()) {
            out.add(Arguments.of(p, 1));
            out.add(Arguments.of(p, 2));
        }
        return out.stream();
    }

    /**
     * RC loss, duplication and reordering of the frames every rail carries each way
     * ({@link RailFaultProfile}), with traffic both ways (packed, single-frame, fragmented and rendezvous
     * messages; credits and ACKs going back) and then a graceful close: every message arrives exactly once,
     * in PSN order, byte-exact, the sender never takes more than credits allow, both sides close gracefully,
     * and the pair's counters show the faults happened and were recovered from by go-back-N. Under a profile
     * whose retries may run out, a clean {@link RdmaTransportException} is the other correct outcome: then
     * what was delivered before it is still a gap-free, duplicate-free PSN prefix, and both sides end. Runs
     * only where {@link #supportsRailFaults()}.
     */
    @ParameterizedTest(name = "{0}, {1} rail(s)")
    @MethodSource("faultProfilesAndRails")
    void underRailFaultsEveryMessageArrivesOnceInPsnOrder(RailFaultProfile profile, int rails) {
        Assumptions.assumeTrue(supportsRailFaults(), "this pair cannot inject RC wire faults (see RailFaults)");
        PairOptions o = options(rails).railLatencySkewNs(RAIL_SKEW_NS).railFaults(profile.faults())
            .node(b -> b.rendezvousThresholdBytes(FAULT_RENDEZVOUS_THRESHOLD_BYTES));
        try (ConnectionTckFixture fx = openPair(o)) {
            Assumptions.assumeTrue(fx.virtualTime() || !profile.retriesMayRunOut(),
                profile.name() + " may exhaust the RC retries: its outcome is fixed in virtual time only");
            int up = 300;
            int down = 100;
            AtomicReference<Object> clientClose = closeOutcome(fx.client());
            AtomicReference<Object> serverClose = closeOutcome(fx.server());
            TckReceiver atServer = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.LIMIT_RATE).subscribe(fx.server());
            TckReceiver atClient = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.BURSTS).subscribe(fx.client());
            TckSend upSend = TckSend.start(fx, fx.client(), 0, up, ConnectionTck::faultSize, whileOpen(fx.client(), creditBound(atServer, rails)));
            TckSend downSend = TckSend.start(fx, fx.server(), 0, down, ConnectionTck::faultSize, whileOpen(fx.server(), creditBound(atClient, rails)));
            fx.await("both directions end under " + profile + "; " + atServer + ", " + upSend + "; " + atClient + ", " + downSend,
                () -> upSend.terminated() && downSend.terminated() && (atServer.received() == up || atServer.terminated())
                    && (atClient.received() == down || atClient.terminated()));
            RailFaultCounters counters = fx.railFaultCounters();
            atServer.assertNoFailure();
            atClient.assertNoFailure();
            assertEquals(range(0, atServer.received()), atServer.psns(), "client to server: a PSN prefix, each once");
            assertEquals(range(0, atClient.received()), atClient.psns(), "server to client: a PSN prefix, each once");
            upSend.assertBoundHeld();
            downSend.assertBoundHeld();
            assertTrue(profile.happenedIn(counters), "the faults of " + profile + " happened and were recovered from: " + counters);
            if (profile.retriesMayRunOut() && (upSend.error() != null || downSend.error() != null)) {
                fx.await("both sides end after the transport failure; " + atServer + ", " + atClient,
                    () -> fx.closed(Side.CLIENT) && fx.closed(Side.SERVER) && atServer.terminated() && atClient.terminated());
                assertCleanTransportFailure("client to server", upSend, atServer, up);
                assertCleanTransportFailure("server to client", downSend, atClient, down);
                return;
            }
            upSend.assertCompleted();
            downSend.assertCompleted();
            fx.client().close();
            fx.server().close();
            fx.await("both sides close gracefully under " + profile + "; " + atServer + ", " + atClient,
                () -> clientClose.get() != null && serverClose.get() != null && atServer.terminated() && atClient.terminated());
            assertEquals(Boolean.TRUE, clientClose.get(), "client onClose() completes");
            assertEquals(Boolean.TRUE, serverClose.get(), "server onClose() completes");
            assertTrue(atServer.completed() && atClient.completed(), "both receive streams complete, neither fails: " + atServer + ", " + atClient);
            assertEquals(up, atServer.received());
            assertEquals(down, atClient.received());
        }
    }

    /** A send and its peer's receive stream that a transport failure ended: each completed in full or failed with it. */
    private static void assertCleanTransportFailure(String direction, TckSend s, TckReceiver r, int n) {
        if (s.completed()) {
            assertEquals(n, r.received(), direction + ": a completed send delivered everything");
        } else {
            assertInstanceOf(RdmaTransportException.class, s.error(), direction + " send: " + s);
        }
        if (!r.completed()) {
            assertInstanceOf(RdmaTransportException.class, r.error(), direction + " receive: " + r);
        }
    }

    /**
     * {@code bound} while {@code c} is open: a send on a connection that failed takes (and discards) what its
     * publisher still has, which credits no longer govern.
     */
    private static LongSupplier whileOpen(RdmaConnection c, LongSupplier bound) {
        return () -> c.isDisposed() ? Long.MAX_VALUE : bound.getAsLong();
    }

    /** Holds {@code Boolean.TRUE} once {@code c.onClose()} completed, its error if it failed, null before. */
    private static AtomicReference<Object> closeOutcome(RdmaConnection c) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        c.onClose().subscribe(null, outcome::set, () -> outcome.set(Boolean.TRUE));
        return outcome;
    }

    /**
     * Sends messages 0..n-1 of {@code size(seq)} bytes to a receiver with {@code demand}: every one arrives
     * once, in PSN order, byte-exact, the send completes, and the sender never held more than the credit
     * bound allows.
     */
    private static void assertAllDelivered(ConnectionTckFixture fx, int rails, int n, IntUnaryOperator size, Demand demand,
                                           String what) {
        TckReceiver r = TckReceiver.builder(fx, size).demand(demand).subscribe(fx.server());
        TckSend s = TckSend.start(fx, fx.client(), 0, n, size, creditBound(r, rails));
        fx.await(what + "; " + r + ", " + s, () -> r.received() == n && s.terminated());
        s.assertCompleted();
        r.assertNoFailure();
        assertEquals(range(0, n), r.psns());
        s.assertBoundHeld();
    }
}
