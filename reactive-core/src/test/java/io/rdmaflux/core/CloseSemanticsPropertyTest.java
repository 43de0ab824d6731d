package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Property: graceful close, abort, cancel and a late {@code receive()} subscriber, in any order and at any
 * pass, keep the outcomes the {@link RdmaConnection} contract promises. Each scenario is generated from
 * one seed: one to three rails, small pools, up to 40 messages (some fragmented or sent by rendezvous) in
 * one to three {@code send()}s from the client, a server subscriber that comes at a random pass (or only
 * after both closed), asks in random chunks, holds and releases in random order and may cancel, and a
 * close by either side, both, or an abort. INVOKER mode and virtual time, so a seed replays exactly:
 * {@code -Drdmaflux.closeSeed=<seed>} runs that one scenario. What is checked:
 *
 * <ul>
 *   <li>both {@code onClose()} complete within the pass bound, unless something still waits as the
 *       contract allows (a live subscriber that asks for no more or holds messages, or a peer that may
 *       still subscribe); then one more step (demand, cancel, close or abort) must end it;</li>
 *   <li>the subscriber gets messages in PSN order, a prefix of the sends' messages in subscription order,
 *       never beyond its demand, each byte for byte, and intact while held;</li>
 *   <li>a send completes only with each of its messages delivered; one that fails because the peer's
 *       inbound side closed names how many its subscriber got, and that is what it got; other failures
 *       come from a close (nothing of the send delivered) or an abort;</li>
 *   <li>the subscriber completes after a graceful close, or gets {@link ConnectionClosedException} when it
 *       came after its own side closed without it or after an abort;</li>
 *   <li>every message is released: the received ones (node metrics, and no leak reported when the nodes
 *       close) and the sent ones (reference count 0).</li>
 * </ul>
 */
class CloseSemanticsPropertyTest {
    private static final long FIRST_SEED = 20_260_501L;
    private static final int SCENARIOS = 300;
    /** Message sizes stay below this (bytes); larger than a few buffers, so some are fragmented or go by rendezvous. */
    private static final int MAX_MESSAGE_BYTES = 4 * 512 + 100;
    /** Passes one settling may take at most, active or idle. */
    private static final int MAX_PASSES = 200_000;
    /** Consecutive idle passes (virtual time moving 1 ms each after the first ten) after which nothing more happens by itself. */
    private static final int QUIET_PASSES = 100;

    @Test
    void closeAbortCancelAndLateSubscribeInAnyOrderKeepTheContractsOutcomes() {
        Long only = Long.getLong("rdmaflux.closeSeed");
        if (only != null) {
            runScenario(only);
            return;
        }
        for (int i = 0; i < SCENARIOS; i++) {
            runScenario(FIRST_SEED + i);
        }
    }

    private static void runScenario(long seed) {
        List<RdmaLeakReporter.Leak> leaks = Collections.synchronizedList(new ArrayList<>());
        RdmaLeakReporter previous = RdmaLeakReporter.install(leaks::add);
        Scenario s = new Scenario(seed);
        try {
            s.run();
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (" + s + "): " + e.getMessage() + "\nevents: " + s.log, e);
        } finally {
            RdmaLeakReporter.install(previous);
        }
        if (!leaks.isEmpty()) {
            throw new AssertionError("seed " + seed + " (" + s + "): received messages leaked at node close: " + leaks + "\nevents: " + s.log);
        }
    }

    /** The byte at {@code offset} of message {@code index} of send {@code send}. */
    private static byte byteAt(int send, int index, int offset) {
        return (byte) (send * 71 + index * 31 + offset * 7 + 1);
    }

    private enum Kind { SEND, SUBSCRIBE, REQUEST, RELEASE_ONE, RELEASE_ALL, CANCEL, CLOSE_CLIENT, CLOSE_SERVER, ABORT_CLIENT, ABORT_SERVER }

    private record Action(Kind kind, int arg) {
    }

    /** How one send ended, classified by the contract's wording. */
    private enum Failure { NOT_DELIVERED, REFUSED_BY_PEER, CLOSED, ABORTED }

    private static final Pattern NOT_DELIVERED = Pattern.compile(
        ": (\\d+) messages? of this send\\(\\) were not delivered( and its publisher was cancelled)?: the peer closed its inbound side .* after its subscriber got (\\d+) of them$");

    private static final class Scenario {
        final long seed;
        final Random r;
        final StringBuilder log = new StringBuilder();
        final int rails;
        final int bufferBytes;
        final int receiveBuffers;
        final int sendQueue;
        final int creditThreshold;
        final int rendezvousBuffers;
        final int[][] sizes;
        /** Per message position across sends (PSN when every send before it was sent whole): send and index. */
        final int[] sendOf;
        final int[] indexOf;
        final TreeMap<Integer, List<Action>> schedule = new TreeMap<>();
        final boolean subscribeOnlyAtEnd;
        final int initialRequest;
        /** Probability (in 1/4) that an arriving message is held rather than released in onNext. */
        final int holdQuarters;

        final List<RdmaMessage> created = new ArrayList<>();
        SendResult[] sends;
        Receiver receiver;
        InvokerPair p;
        final AtomicBoolean clientClosed = new AtomicBoolean();
        final AtomicBoolean serverClosed = new AtomicBoolean();

        int seq;
        int clientCloseAt = Integer.MAX_VALUE;
        int serverCloseAt = Integer.MAX_VALUE;
        int abortAt = Integer.MAX_VALUE;
        int subscribedAt = Integer.MAX_VALUE;
        boolean clientSendsFinishedAtServerClose;

        Scenario(long seed) {
            this.seed = seed;
            r = new Random(seed);
            rails = 1 + r.nextInt(3);
            bufferBytes = 96 + r.nextInt(512 - 96 + 1);
            receiveBuffers = 1 + r.nextInt(6);
            sendQueue = 1 + r.nextInt(4);
            creditThreshold = 1 + r.nextInt(receiveBuffers);
            rendezvousBuffers = r.nextBoolean() ? 0 : 1 + r.nextInt(3);
            int total = r.nextInt(8) == 0 ? 0 : r.nextInt(41);
            int sendCount = 1 + r.nextInt(3);
            int[] counts = new int[sendCount];
            for (int i = 0; i < total; i++) {
                counts[r.nextInt(sendCount)]++;
            }
            sizes = new int[sendCount][];
            sendOf = new int[total];
            indexOf = new int[total];
            int at = 0;
            for (int s = 0; s < sendCount; s++) {
                sizes[s] = new int[counts[s]];
                for (int j = 0; j < counts[s]; j++) {
                    sizes[s][j] = r.nextInt(5) == 0 ? r.nextInt(Math.min(3 * bufferBytes, MAX_MESSAGE_BYTES)) : r.nextInt(bufferBytes - 24 + 1);
                    sendOf[at] = s;
                    indexOf[at] = j;
                    at++;
                }
            }
            int[] sendPasses = r.ints(sendCount, 0, 31).sorted().toArray();
            for (int s = 0; s < sendCount; s++) {
                at(sendPasses[s], Kind.SEND, s);
            }
            subscribeOnlyAtEnd = r.nextInt(4) == 0;
            if (!subscribeOnlyAtEnd) {
                at(r.nextInt(61), Kind.SUBSCRIBE, 0);
            }
            initialRequest = r.nextInt(4);
            holdQuarters = r.nextInt(5);
            for (int i = r.nextInt(16); i > 0; i--) {
                at(r.nextInt(121), Kind.REQUEST, 1 + r.nextInt(6));
            }
            for (int i = r.nextInt(16); i > 0; i--) {
                at(r.nextInt(121), Kind.RELEASE_ONE, r.nextInt(1000));
            }
            for (int i = r.nextInt(3); i > 0; i--) {
                at(r.nextInt(121), Kind.RELEASE_ALL, 0);
            }
            if (r.nextInt(5) == 0) {
                at(r.nextInt(101), Kind.CANCEL, 0);
            }
            int closeAt = r.nextInt(81);
            switch (r.nextInt(8)) {
                case 0, 1 -> at(closeAt, Kind.CLOSE_CLIENT, 0);
                case 2 -> at(closeAt, Kind.CLOSE_SERVER, 0);
                case 3, 4 -> {
                    at(closeAt, Kind.CLOSE_CLIENT, 0);
                    at(r.nextInt(81), Kind.CLOSE_SERVER, 0);
                }
                case 5 -> at(closeAt, Kind.ABORT_CLIENT, 0);
                case 6 -> at(closeAt, Kind.ABORT_SERVER, 0);
                default -> {
                    int which = r.nextInt(3);
                    if (which != 1) {
                        at(closeAt, Kind.CLOSE_CLIENT, 0);
                    }
                    if (which != 0) {
                        at(closeAt + r.nextInt(5), Kind.CLOSE_SERVER, 0);
                    }
                    at(closeAt + r.nextInt(60), r.nextBoolean() ? Kind.ABORT_CLIENT : Kind.ABORT_SERVER, 0);
                }
            }
        }

        private void at(int pass, Kind kind, int arg) {
            schedule.computeIfAbsent(pass, k -> new ArrayList<>()).add(new Action(kind, arg));
        }

        @Override
        public String toString() {
            return "rails=" + rails + " bufferBytes=" + bufferBytes + " receiveBuffers=" + receiveBuffers + " sendQueue=" + sendQueue
                + " creditThreshold=" + creditThreshold + " rendezvousBuffers=" + rendezvousBuffers + " sizes=" + Arrays.deepToString(sizes)
                + " hold=" + holdQuarters + "/4 initialRequest=" + initialRequest + " schedule=" + schedule;
        }

        void run() {
            p = InvokerPair.open(rails, ConnectionSpec.rails(rails), b -> b.bufferBytes(bufferBytes).receiveBuffers(receiveBuffers)
                .sendQueue(sendQueue).creditThreshold(creditThreshold).rendezvousBuffers(rendezvousBuffers).maxMessageBytes(MAX_MESSAGE_BYTES));
            try {
                p.client.onClose().subscribe(null, e -> fail("client onClose failed: " + e), () -> clientClosed.set(true));
                p.server.onClose().subscribe(null, e -> fail("server onClose failed: " + e), () -> serverClosed.set(true));
                sends = new SendResult[sizes.length];
                receiver = new Receiver();
                int last = schedule.lastKey();
                for (int pass = 0; pass <= last; pass++) {
                    for (Action a : schedule.getOrDefault(pass, List.of())) {
                        apply(a);
                    }
                    if (p.pass() == 0) {
                        p.soft.clock().advance(1_000);
                    }
                    receiver.assertNoFailures();
                }
                settle();
                if (!bothClosed()) {
                    resolveWait();
                    settle();
                    check(bothClosed(), "both onClose() complete once nothing waits any more (after the resolving step)");
                }
                if (!receiver.subscribed) {
                    receiver.unbounded = true;
                    subscribe();
                    p.drive();
                }
                receiver.assertNoFailures();
                releaseAll();
                p.drive();
                checkOutcomes();
                check(p.serverNode.metrics().buffersOutstanding() == 0, "server node holds no buffer once every message was released: "
                    + p.serverNode.metrics());
                check(p.clientNode.metrics().buffersOutstanding() == 0, "client node holds no buffer: " + p.clientNode.metrics());
                for (RdmaMessage m : created) {
                    check(m.refCnt() == 0, "every message given to send() is released by the connection: " + m + " refCnt " + m.refCnt());
                }
            } finally {
                receiver.releaseQuietly();
                p.close();
            }
        }

        private void fail(String why) {
            receiver.failures.add(why);
        }

        private void check(boolean ok, String what) {
            if (!ok) {
                throw new AssertionError(what + "\n" + state());
            }
        }

        private String state() {
            StringBuilder sb = new StringBuilder();
            sb.append("received ").append(receiver.received).append(" (requested ").append(receiver.requested).append(", held ")
                .append(receiver.held.size()).append(", subscribed ").append(receiver.subscribed).append(", cancelled ").append(receiver.cancelled)
                .append(", terminal ").append(receiver.completed ? "complete" : String.valueOf(receiver.error)).append(")");
            for (int s = 0; s < sends.length; s++) {
                sb.append("\nsend ").append(s).append(" of ").append(sizes[s].length).append(": ").append(sends[s]);
            }
            sb.append("\nclosed: client ").append(clientClosed.get()).append(", server ").append(serverClosed.get());
            if (p != null) {
                sb.append("\n").append(ConnectionProbe.describe(p.client)).append("\n").append(ConnectionProbe.describe(p.server));
            }
            return sb.toString();
        }

        private boolean bothClosed() {
            return clientClosed.get() && serverClosed.get();
        }

        private void event(String what) {
            log.append(seq).append(':').append(what).append(' ');
            seq++;
        }

        private void apply(Action a) {
            switch (a.kind()) {
                case SEND -> {
                    int s = a.arg();
                    event("send" + s);
                    sends[s] = new SendResult(s);
                    int[] sz = sizes[s];
                    SendResult result = sends[s];
                    p.client.send(Flux.range(0, sz.length).map(j -> {
                        byte[] bytes = new byte[sz[j]];
                        for (int k = 0; k < bytes.length; k++) {
                            bytes[k] = byteAt(s, j, k);
                        }
                        RdmaMessage m = RdmaMessage.of(bytes);
                        created.add(m);
                        return m;
                    })).subscribe(null, result::failed, result::completed);
                }
                case SUBSCRIBE -> subscribe();
                case REQUEST -> {
                    if (receiver.subscribed && !receiver.cancelled) {
                        event("request" + a.arg());
                        receiver.request(a.arg());
                    }
                }
                case RELEASE_ONE -> {
                    if (!receiver.held.isEmpty()) {
                        receiver.release(receiver.held.remove(a.arg() % receiver.held.size()));
                    }
                }
                case RELEASE_ALL -> releaseAll();
                case CANCEL -> {
                    if (receiver.subscribed && !receiver.cancelled) {
                        event("cancel");
                        receiver.cancel();
                    }
                }
                case CLOSE_CLIENT -> {
                    event("closeClient");
                    clientCloseAt = Math.min(clientCloseAt, seq);
                    p.client.close();
                }
                case CLOSE_SERVER -> {
                    event("closeServer");
                    if (serverCloseAt == Integer.MAX_VALUE) {
                        clientSendsFinishedAtServerClose = Arrays.stream(sends).allMatch(x -> x == null || x.finished());
                    }
                    serverCloseAt = Math.min(serverCloseAt, seq);
                    p.server.close();
                }
                case ABORT_CLIENT -> {
                    event("abortClient");
                    abortAt = Math.min(abortAt, seq);
                    p.client.abort();
                }
                case ABORT_SERVER -> {
                    event("abortServer");
                    abortAt = Math.min(abortAt, seq);
                    p.server.abort();
                }
            }
        }

        private void subscribe() {
            event("subscribe");
            subscribedAt = seq;
            p.server.receive().subscribe(receiver);
            if (receiver.unbounded) {
                receiver.request(Long.MAX_VALUE);
            } else if (initialRequest > 0) {
                receiver.request(initialRequest);
            }
        }

        private void releaseAll() {
            List<RdmaMessage> order = new ArrayList<>(receiver.held);
            receiver.held.clear();
            Collections.shuffle(order, r);
            order.forEach(receiver::release);
        }

        /** Runs passes until both closed or nothing moved for {@link #QUIET_PASSES} passes. */
        private void settle() {
            int idle = 0;
            for (int i = 0; i < MAX_PASSES; i++) {
                receiver.assertNoFailures();
                if (bothClosed()) {
                    return;
                }
                if (p.pass() == 0) {
                    idle++;
                    if (idle >= QUIET_PASSES) {
                        return;
                    }
                    p.soft.clock().advance(idle > 10 ? 1_000_000 : 1_000);
                } else {
                    idle = 0;
                }
            }
            throw new AssertionError("still busy after " + MAX_PASSES + " passes\n" + state());
        }

        private boolean anySendUnfinished() {
            return Arrays.stream(sends).anyMatch(x -> x != null && !x.finished());
        }

        private int messagesOfCompletedSends() {
            return Arrays.stream(sends).filter(x -> x != null && x.completed).mapToInt(x -> sizes[x.send].length).sum();
        }

        /**
         * Not both closed and quiet: legitimate only when the contract says a close waits. A live subscriber
         * that asks for no more (or holds messages, so no buffer is free) while messages are still to come;
         * or no subscriber yet, this side not closed, and the peer's send waiting for one.
         */
        private void resolveWait() {
            boolean noAbort = abortAt == Integer.MAX_VALUE;
            boolean liveWaits = noAbort && receiver.subscribed && !receiver.cancelled && !receiver.terminated()
                && (anySendUnfinished() || receiver.received < messagesOfCompletedSends())
                && (receiver.received >= receiver.requested || !receiver.held.isEmpty());
            boolean mayStillSubscribe = noAbort && !receiver.subscribed && serverCloseAt == Integer.MAX_VALUE && anySendUnfinished();
            check(liveWaits || mayStillSubscribe, "both onClose() complete within the pass bound: nothing the contract lets a close wait for is left");
            releaseAll();
            int choice = r.nextInt(3);
            if (choice == 2) {
                apply(new Action(r.nextBoolean() ? Kind.ABORT_CLIENT : Kind.ABORT_SERVER, 0));
            } else if (liveWaits) {
                if (choice == 0) {
                    event("unbounded");
                    receiver.unbounded = true;
                    receiver.request(Long.MAX_VALUE);
                } else {
                    apply(new Action(Kind.CANCEL, 0));
                }
            } else if (choice == 0) {
                apply(new Action(Kind.CLOSE_SERVER, 0));
            } else {
                receiver.unbounded = true;
                subscribe();
            }
        }

        /** Messages of send {@code s} the subscriber got. */
        private int receivedOf(int s) {
            int n = 0;
            for (int i = 0; i < receiver.received; i++) {
                if (sendOf[i] == s) {
                    n++;
                }
            }
            return n;
        }

        private void checkOutcomes() {
            String client = ConnectionProbe.name(p.client);
            String server = ConnectionProbe.name(p.server);
            boolean aborted = abortAt != Integer.MAX_VALUE;
            int firstGraceful = Math.min(clientCloseAt, serverCloseAt);
            boolean live = subscribedAt < serverCloseAt && subscribedAt < abortAt;
            boolean cutEarly = receiver.cancelled || !live;

            // the subscriber
            if (receiver.cancelled) {
                check(receiver.terminalAfterCancel == null, "no signal after cancel: " + receiver.terminalAfterCancel);
            } else {
                check(receiver.terminated(), "receive() ends with completion or an error once both closed");
                if (receiver.error != null) {
                    check(receiver.error instanceof ConnectionClosedException, "receive() fails only with ConnectionClosedException: " + receiver.error);
                }
                if (live && !aborted) {
                    check(receiver.completed, "a subscriber there before its side closed, no abort: receive() completes, error " + receiver.error);
                } else if (!live && !aborted) {
                    boolean mayComplete = clientCloseAt < serverCloseAt && clientSendsFinishedAtServerClose;
                    check(receiver.completed ? mayComplete : receiver.error.getMessage().contains(server + " closed before receive() was subscribed"),
                        "a subscriber after its side closed without one: \"closed before receive() was subscribed\", unless the peer's CLOSE "
                            + "(having sent nothing) came first; got " + (receiver.completed ? "completion" : receiver.error));
                } else {
                    check(!receiver.completed || firstGraceful < abortAt, "an abort before any graceful close ends receive() with an error");
                }
            }
            if (receiver.completed) {
                for (SendResult x : sends) {
                    int got = receivedOf(x.send);
                    check(x.completed ? got == sizes[x.send].length : got == 0,
                        "receive() completed: each send either completed with all its messages received or failed with none; send " + x.send
                            + " got " + got);
                }
                check(receiver.received == messagesOfCompletedSends(), "receive() completed with exactly the completed sends' messages");
            }

            // the sends
            for (SendResult x : sends) {
                check(x.finished(), "send " + x.send + " ended once both closed");
                int size = sizes[x.send].length;
                int got = receivedOf(x.send);
                if (x.completed) {
                    check(cutEarly || aborted || got == size, "a completed send's messages all reached a subscriber that was there to the end: send "
                        + x.send + " got " + got + " of " + size);
                    continue;
                }
                check(x.error instanceof ConnectionClosedException, "a send fails only with ConnectionClosedException: " + x.error);
                ConnectionClosedException e = (ConnectionClosedException) x.error;
                String m = String.valueOf(e.getMessage());
                Failure f = classify(m);
                check(f != null, "send " + x.send + " failed with an error the contract does not describe: " + m);
                switch (f) {
                    case NOT_DELIVERED -> {
                        Matcher mm = NOT_DELIVERED.matcher(m);
                        check(mm.find() && m.startsWith(client + ": "), "the message names the connection: " + m);
                        int notDelivered = Integer.parseInt(mm.group(1));
                        boolean publisherCancelled = mm.group(2) != null;
                        int subscriberGot = Integer.parseInt(mm.group(3));
                        check(e.byPeer(), "byPeer: " + m);
                        check(cutEarly, "only a cancel or a close without a subscriber closes the inbound side early: " + m);
                        check(subscriberGot == got, "the send says its subscriber got " + subscriberGot + " of its messages; it got " + got + ": " + m);
                        check(notDelivered >= 1, "a send fails this way only with a message not delivered: " + m);
                        // a fused publisher that gave its last message has not said it is done until polled once more: it
                        // can be "cancelled" with every message taken, so then the counts may add up to the whole send
                        check(publisherCancelled ? notDelivered + subscriberGot <= size : notDelivered + subscriberGot == size,
                            "not delivered + delivered = the send's " + size + " messages (at most, when its publisher was cancelled): " + m);
                    }
                    case REFUSED_BY_PEER -> {
                        check(e.byPeer() && m.startsWith(client + ": "), "byPeer, naming the connection: " + m);
                        check(cutEarly, "only a cancel or a close without a subscriber closes the inbound side early: " + m);
                        check(got == 0, "a refused send delivered nothing; got " + got + ": " + m);
                    }
                    case CLOSED -> {
                        check(!e.byPeer() && m.contains(client), "this side's close, naming the connection: " + m);
                        check(firstGraceful != Integer.MAX_VALUE || aborted, "a close refusal needs a close or an abort: " + m);
                        check(got == 0, "a send refused by a close is never half sent; got " + got + ": " + m);
                    }
                    case ABORTED -> check(aborted, "an abort error needs an abort: " + m);
                }
            }
        }

        private static Failure classify(String m) {
            if (NOT_DELIVERED.matcher(m).find()) {
                return Failure.NOT_DELIVERED;
            }
            if (m.contains(": send() refused: the peer closed its inbound side")) {
                return Failure.REFUSED_BY_PEER;
            }
            if (m.endsWith(" is closed; open a new connection to send") || (m.startsWith("send on ") && m.endsWith(" which is closed"))) {
                return Failure.CLOSED;
            }
            if (m.contains(" was aborted") || m.contains("peer aborted ")) {
                return Failure.ABORTED;
            }
            return null;
        }

        /** The server's subscriber: checks each message on arrival and release, and records violations (signals never throw). */
        private final class Receiver implements Subscriber<RdmaMessage> {
            final List<String> failures = new ArrayList<>();
            final List<RdmaMessage> held = new ArrayList<>();
            Subscription subscription;
            boolean subscribed;
            boolean cancelled;
            boolean unbounded;
            long requested;
            int received;
            boolean completed;
            Throwable error;
            String terminalAfterCancel;

            boolean terminated() {
                return completed || error != null;
            }

            @Override
            public void onSubscribe(Subscription s) {
                subscribed = true;
                subscription = s;
            }

            void request(long n) {
                requested = requested + n < 0 ? Long.MAX_VALUE : requested + n;
                subscription.request(n);
            }

            void cancel() {
                cancelled = true;
                subscription.cancel();
            }

            @Override
            public void onNext(RdmaMessage m) {
                if (cancelled || terminated()) {
                    failures.add("onNext after " + (cancelled ? "cancel" : "a terminal signal") + ": PSN " + m.psn());
                }
                if (received >= requested) {
                    failures.add("PSN " + m.psn() + " delivered beyond the " + requested + " requested");
                }
                if (m.psn() != received) {
                    failures.add("PSN " + m.psn() + " delivered when PSN " + received + " was next");
                }
                String bad = mismatch(m, received);
                if (bad != null) {
                    failures.add("on arrival: " + bad);
                }
                received++;
                if (!unbounded && r.nextInt(4) < holdQuarters) {
                    held.add(m);
                } else {
                    release(m);
                }
            }

            @Override
            public void onError(Throwable t) {
                terminal(t.toString());
                error = t;
            }

            @Override
            public void onComplete() {
                terminal("completion");
                completed = true;
            }

            private void terminal(String what) {
                if (terminated()) {
                    failures.add("a second terminal signal: " + what);
                }
                if (cancelled) {
                    terminalAfterCancel = what;
                }
                event("receive:" + what);
            }

            void release(RdmaMessage m) {
                int psn = m.psn();
                String bad = mismatch(m, psn);
                if (bad != null) {
                    failures.add("while held: " + bad);
                }
                if (!m.release()) {
                    failures.add("PSN " + psn + " was not freed by its one release");
                }
            }

            void releaseQuietly() {
                held.forEach(RdmaMessage::release);
                held.clear();
            }

            /** What is wrong with {@code m} as the message at position {@code at} of all sends, or null. */
            private String mismatch(RdmaMessage m, int at) {
                if (at < 0 || at >= sendOf.length) {
                    return "PSN " + m.psn() + " beyond the " + sendOf.length + " messages sent";
                }
                int s = sendOf[at];
                int j = indexOf[at];
                byte[] got = m.toByteArray();
                if (got.length != sizes[s][j]) {
                    return "PSN " + m.psn() + " has " + got.length + " bytes, message " + j + " of send " + s + " has " + sizes[s][j];
                }
                for (int k = 0; k < got.length; k++) {
                    if (got[k] != byteAt(s, j, k)) {
                        return "PSN " + m.psn() + " (message " + j + " of send " + s + ") differs at byte " + k;
                    }
                }
                return null;
            }

            void assertNoFailures() {
                if (!failures.isEmpty()) {
                    throw new AssertionError(failures + "\n" + state());
                }
            }
        }

        /** How one send() ended. */
        private final class SendResult {
            final int send;
            boolean completed;
            Throwable error;

            SendResult(int send) {
                this.send = send;
            }

            boolean finished() {
                return completed || error != null;
            }

            void completed() {
                if (finished()) {
                    receiver.failures.add("send " + send + " signalled twice");
                }
                completed = true;
                event("send" + send + ":complete");
            }

            void failed(Throwable t) {
                if (finished()) {
                    receiver.failures.add("send " + send + " signalled twice");
                }
                error = t;
                event("send" + send + ":" + t.getMessage());
            }

            @Override
            public String toString() {
                return completed ? "completed" : error != null ? String.valueOf(error) : "pending";
            }
        }
    }
}
