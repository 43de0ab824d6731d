package io.rdmaflux.ud.dr;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Two {@link DrLink}s joined by a seeded lossy wire (loss, duplication, corruption of one bit, reordering by a
 * delay on the timer scheduler), for the operator's tests. {@link #vanish()} makes b deaf and mute. Test-only.
 */
final class LinkPair implements AutoCloseable {
    final DrLink a;
    final DrLink b;
    private final FluxSink<Datagram>[] to;
    private final SplittableRandom random;
    private final double loss;
    private final double dup;
    private final double corrupt;
    private final double reorder;
    private final Scheduler timers;
    private volatile boolean bVanished;
    volatile long corrupted;

    @SuppressWarnings("unchecked")
    LinkPair(DrConfig config, long seed, double loss, double dup, double corrupt, double reorder, Scheduler timers, LongSupplier clockNs) {
        this.random = new SplittableRandom(seed);
        this.loss = loss;
        this.dup = dup;
        this.corrupt = corrupt;
        this.reorder = reorder;
        this.timers = timers;
        this.to = new FluxSink[2];
        Flux<Datagram> inA = Flux.create(s -> to[0] = s);
        Flux<Datagram> inB = Flux.create(s -> to[1] = s);
        a = Dr.link(config, 1, 2, "link-b", 1, sinkTo(1), inA, timers, clockNs);
        b = Dr.link(config, 2, 1, "link-a", 1, sinkTo(0), inB, timers, clockNs);
    }

    void vanish() {
        bVanished = true;
    }

    private DatagramSink sinkTo(int node) {
        return (rail, datagram, length, psn) -> {
            Datagram d = null;
            int copies = 0;
            synchronized (random) {
                if ((node == 1 || node == 0) && bVanished) {
                    return DatagramSink.SENT;
                }
                if (random.nextDouble() >= loss) {
                    byte[] c = Arrays.copyOf(datagram, length);
                    boolean bad = random.nextDouble() < corrupt;
                    if (bad) {
                        int bit = random.nextInt(length * 8);
                        c[bit >> 3] ^= (byte) (1 << (bit & 7));
                    }
                    d = new Datagram(rail, c, length);
                    copies = random.nextDouble() < dup ? 2 : 1;
                    if (bad) {
                        corrupted += copies;
                    }
                }
            }
            FluxSink<Datagram> s = to[node];
            if (d == null || s == null) {
                return DatagramSink.SENT;
            }
            for (int i = 0; i < copies; i++) {
                Datagram x = d;
                boolean late;
                synchronized (random) {
                    late = random.nextDouble() < reorder;
                }
                if (late) {
                    timers.schedule(() -> s.next(x), 50, TimeUnit.MICROSECONDS);
                } else {
                    s.next(x);
                }
            }
            return DatagramSink.SENT;
        };
    }

    @Override
    public void close() {
        a.dispose();
        b.dispose();
    }
}
