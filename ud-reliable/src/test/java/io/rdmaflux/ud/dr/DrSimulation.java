package io.rdmaflux.ud.dr;

import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Two {@link DrEndpoint}s over a {@link LossyWire} in virtual time: node 0 sends {@code messages} seeded
 * random messages (and, when {@code bidirectional}, node 1 as many back), each side's consumer takes one
 * message every {@code consumeEveryNs} (0: at once). Runs until both directions finished, an endpoint
 * failed, or {@code limitNs} passed. Test-only.
 */
final class DrSimulation {
    final DrEndpoint[] ep = new DrEndpoint[2];
    final LossyWire wire;
    final List<List<byte[]>> sent = List.of(new ArrayList<>(), new ArrayList<>());
    final List<List<byte[]>> received = List.of(new ArrayList<>(), new ArrayList<>());
    final long consumeEveryNs;
    long nowNs;
    private final long[] nextConsumeNs = new long[2];
    long maxReadyMessages;

    DrSimulation(DrConfig config, LossyWire wire, int rails, long seed, int messages, int maxMessageBytes, boolean bidirectional,
                 long consumeEveryNs) {
        this(config, wire, rails, seed, messages, maxMessageBytes, bidirectional, consumeEveryNs, false);
    }

    /** @param fixedSize every message exactly {@code maxMessageBytes} long */
    DrSimulation(DrConfig config, LossyWire wire, int rails, long seed, int messages, int maxMessageBytes, boolean bidirectional,
                 long consumeEveryNs, boolean fixedSize) {
        this.wire = wire;
        this.consumeEveryNs = consumeEveryNs;
        for (int n = 0; n < 2; n++) {
            int node = n;
            ep[n] = new DrEndpoint(config, 100 + n, 100 + (1 - n), "node-" + (1 - n), rails, wire.sinkOf(n, () -> nowNs), 0);
            wire.attach(n, (rail, d, len, t) -> ep[node].onDatagram(rail, d, 0, len, t));
        }
        SplittableRandom r = new SplittableRandom(seed ^ 0x5DEECE66DL);
        for (int n = 0; n < (bidirectional ? 2 : 1); n++) {
            for (int i = 0; i < messages; i++) {
                byte[] m = new byte[fixedSize ? maxMessageBytes : r.nextInt(maxMessageBytes + 1)];
                for (int k = 0; k < m.length; k++) {
                    m[k] = (byte) r.nextInt();
                }
                sent.get(n).add(m);
                ep[n].offer(m);
            }
            ep[n].finish();
        }
        if (!bidirectional) {
            ep[1].finish();
        }
    }

    /** Runs; returns whether both directions finished (else an endpoint failed or time ran out). */
    boolean run(long limitNs) {
        int spins = 0;
        while (nowNs <= limitNs) {
            int work = wire.deliver(nowNs);
            for (int n = 0; n < 2; n++) {
                work += ep[n].doWork(nowNs);
                maxReadyMessages = Math.max(maxReadyMessages, ep[n].readyMessages());
                if (nowNs >= nextConsumeNs[n]) {
                    byte[] m = ep[n].poll();
                    if (m != null) {
                        received.get(1 - n).add(m);
                        nextConsumeNs[n] = nowNs + consumeEveryNs;
                        work++;
                    }
                }
            }
            if (ep[0].failure() != null || ep[1].failure() != null) {
                return false;
            }
            if (done()) {
                wire.deliver(Long.MAX_VALUE); // the datagrams still on the wire (stale ACKs, duplicates) arrive too
                return true;
            }
            if (work > 0) {
                if (++spins > 1_000_000) {
                    throw new AssertionError("no progress in virtual time at " + nowNs + " ns: a busy loop");
                }
                continue;
            }
            spins = 0;
            long next = Math.min(wire.nextDeliveryNs(), Math.min(ep[0].nextDeadlineNs(), ep[1].nextDeadlineNs()));
            if (ep[0].hasImmediateWork() || ep[1].hasImmediateWork()) {
                next = Math.min(next, nowNs + 1_000); // back-pressured by the wire: try again once it drained a little
            }
            for (int n = 0; n < 2; n++) {
                if (ep[n].readyMessages() > 0) {
                    next = Math.min(next, nextConsumeNs[n]);
                }
            }
            if (next == Long.MAX_VALUE) {
                return done();
            }
            nowNs = Math.max(nowNs + 1, next);
        }
        return false;
    }

    /** What is wrong with direction {@code n} (node n to node 1 - n): a message missing, extra or not byte-exact; or null. */
    @Nullable String deliveryProblem(int n) {
        List<byte[]> s = sent.get(n);
        List<byte[]> got = received.get(n);
        if (s.size() != got.size()) {
            return "direction " + n + ": sent " + s.size() + " received " + got.size();
        }
        for (int i = 0; i < s.size(); i++) {
            if (!Arrays.equals(s.get(i), got.get(i))) {
                return "direction " + n + ": message " + i + " (" + s.get(i).length + " B) differs";
            }
        }
        return null;
    }

    /**
     * Whether every corrupted datagram the wire delivered was caught, or what was not (a flipped length field can make a
     * datagram look truncated: it is caught as malformed, not as a bad CRC).
     */
    @Nullable String corruptionProblem() {
        long caught = ep[0].stats().corruptedDropped() + ep[1].stats().corruptedDropped()
            + ep[0].stats().malformedDropped() + ep[1].stats().malformedDropped();
        return caught == wire.corruptedDelivered ? null : "corrupted datagrams delivered " + wire.corruptedDelivered + " but caught " + caught;
    }

    boolean done() {
        return ep[0].outboundFinished() && ep[1].outboundFinished() && ep[0].inboundFinished() && ep[1].inboundFinished();
    }
}
