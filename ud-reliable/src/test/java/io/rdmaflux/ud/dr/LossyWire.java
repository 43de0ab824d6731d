package io.rdmaflux.ud.dr;

import org.agrona.concurrent.UnsafeBuffer;

import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A simulated unreliable datagram network between endpoints, in virtual time: per datagram a seeded chance of
 * loss, duplication, reordering (extra delay) and corruption (a burst of at most 32 flipped bits, which CRC32C
 * always detects), per rail a one-way latency, and rails that can be cut (everything on them lost) or
 * restored. Test-only; not thread-safe.
 */
final class LossyWire {
    /** Where a delivered datagram goes. */
    interface Receiver {
        void receive(int rail, UnsafeBuffer datagram, int length, long nowNs);
    }

    private record Event(long atNs, long seq, int to, int rail, byte[] bytes) {
    }

    final double loss;
    final double duplicate;
    final double reorder;
    final double corrupt;
    final long latencyNs;
    private final SplittableRandom random;
    private final PriorityQueue<Event> queue = new PriorityQueue<>((a, b) -> a.atNs != b.atNs ? Long.compare(a.atNs, b.atNs) : Long.compare(a.seq, b.seq));
    private final Receiver[] receivers = new Receiver[2];
    private final boolean[] cut = new boolean[8];
    private final boolean[] deaf = new boolean[2];
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private long seq;
    private long bandwidthBytesPerSec;
    private long maxQueueNs;
    private final long[] linkFreeAtNs = new long[2];
    long corruptedDelivered;
    long sent;
    long lost;

    LossyWire(long seed, double loss, double duplicate, double reorder, double corrupt, long latencyNs) {
        this.random = new SplittableRandom(seed);
        this.loss = loss;
        this.duplicate = duplicate;
        this.reorder = reorder;
        this.corrupt = corrupt;
        this.latencyNs = latencyNs;
    }

    /** Serializes each direction at {@code bytesPerSec} (0: infinitely fast), so goodput has a ceiling. */
    LossyWire bandwidth(long bytesPerSec) {
        this.bandwidthBytesPerSec = bytesPerSec;
        this.maxQueueNs = 512L * 2048 * 1_000_000_000L / bytesPerSec; // a send queue of 512 MTU datagrams
        return this;
    }

    void attach(int node, Receiver r) {
        receivers[node] = r;
    }

    /** Cuts or restores a rail: a cut rail loses every datagram, both ways. */
    void cut(int rail, boolean isCut) {
        cut[rail] = isCut;
    }

    /** A node that vanished: everything to it is lost. */
    void vanish(int node) {
        deaf[node] = true;
    }

    /** The sink of node {@code from}: everything goes to the other node. */
    DatagramSink sinkOf(int from, LongSupplierNs clock) {
        return (rail, datagram, length, psn) -> {
            long now = clock.nowNs();
            if (bandwidthBytesPerSec > 0 && linkFreeAtNs[1 - from] - now > maxQueueNs) {
                return DatagramSink.BACK_PRESSURED; // the send queue is full
            }
            send(1 - from, rail, datagram, length, now);
            return DatagramSink.SENT;
        };
    }

    /** The current virtual time. */
    interface LongSupplierNs {
        long nowNs();
    }

    void send(int to, int rail, byte[] datagram, int length, long nowNs) {
        sent++;
        if (bandwidthBytesPerSec > 0) {
            long start = Math.max(nowNs, linkFreeAtNs[to]);
            linkFreeAtNs[to] = start + length * 1_000_000_000L / bandwidthBytesPerSec;
            nowNs = linkFreeAtNs[to];
        }
        if (cut[rail] || deaf[to] || random.nextDouble() < loss) {
            lost++;
            return;
        }
        int copies = random.nextDouble() < duplicate ? 2 : 1;
        for (int c = 0; c < copies; c++) {
            byte[] b = java.util.Arrays.copyOf(datagram, length);
            if (random.nextDouble() < corrupt) {
                int bit = random.nextInt(length * 8);
                int burst = 1 + random.nextInt(Math.min(32, length * 8 - bit));
                for (int k = 0; k < burst; k++) {
                    b[(bit + k) >> 3] ^= (byte) (1 << ((bit + k) & 7));
                }
                corruptedDelivered++;
            }
            long delay = latencyNs + (random.nextDouble() < reorder ? random.nextLong(1, 4 * latencyNs + 2) : 0);
            queue.add(new Event(nowNs + delay, seq++, to, rail, b));
        }
    }

    /** Delivers every datagram due at or before {@code nowNs}. @return how many */
    int deliver(long nowNs) {
        int n = 0;
        while (!queue.isEmpty() && queue.peek().atNs <= nowNs) {
            Event e = queue.poll();
            view.wrap(e.bytes);
            receivers[e.to].receive(e.rail, view, e.bytes.length, nowNs);
            n++;
        }
        return n;
    }

    long nextDeliveryNs() {
        return queue.isEmpty() ? Long.MAX_VALUE : queue.peek().atNs;
    }
}
