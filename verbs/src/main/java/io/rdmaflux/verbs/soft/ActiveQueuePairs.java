package io.rdmaflux.verbs.soft;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.Arrays;
import java.util.function.Supplier;

/**
 * The queue pairs a soft device's engine pass visits: those with send-side work (posted work requests not yet
 * completed, a retransmission or RNR timer, a broken route or an ERROR state still to flush), not every QP
 * the device has. A QP joins when its doorbell rings ({@link SoftQueuePair#ring()}: a work request posted, a
 * state change, a route failure) and leaves when a pass finds it quiescent
 * ({@link SoftQueuePair#quiescent()}), as a NIC's doorbell hands it only the send queues that have work and
 * its scheduler walks only those.
 *
 * <p>Why: a pass walked every QP twice (and the idle wait once more), so 256 idle connections' QPs cost one
 * active connection on the same device most of its rate (README "Rate with many active connections").
 *
 * <p>A doorbell that rings while the QP is being taken out cannot be lost (the QP's flag is cleared before it
 * is visited, and a ring after that queues it again); as a backstop against a state change that rings no
 * doorbell, every {@link #SCAN_PASSES}th pass also takes in every QP that is not quiescent.
 *
 * <p><b>Concurrency:</b> {@link #rang} from any thread; everything else on the engine thread.
 */
final class ActiveQueuePairs {
    /** Passes between two backstop scans of every QP. */
    static final int SCAN_PASSES = 1024;
    private static final int DOORBELL_QUEUE_CAPACITY = 4096;

    private final Supplier<SoftQueuePair[]> all;
    private final ManyToOneConcurrentArrayQueue<SoftQueuePair> doorbells = new ManyToOneConcurrentArrayQueue<>(DOORBELL_QUEUE_CAPACITY);
    /** A doorbell found the queue full: the next pass scans every QP. */
    private volatile boolean overflow;
    private SoftQueuePair[] active = new SoftQueuePair[16];
    private int count;
    private int passes;

    ActiveQueuePairs(Supplier<SoftQueuePair[]> all) {
        this.all = all;
    }

    /** A QP's doorbell rang (any thread, once per engine pass at most: the QP keeps a flag). */
    void rang(SoftQueuePair qp) {
        if (!doorbells.offer(qp)) {
            overflow = true;
        }
    }

    /**
     * Engine, at the start of a pass: takes in the QPs whose doorbells rang (and, every {@link #SCAN_PASSES}
     * passes or after an overflow, every QP that is not quiescent), and drops the QPs closed since.
     *
     * @return the active QPs, valid up to {@link #count()} until {@link #retire()}
     */
    SoftQueuePair[] take() {
        SoftQueuePair qp;
        while ((qp = doorbells.poll()) != null) {
            qp.doorbellTaken();
            add(qp);
        }
        if (++passes >= SCAN_PASSES || overflow) {
            passes = 0;
            overflow = false;
            for (SoftQueuePair q : all.get()) {
                q.doorbellTaken();
                if (!q.quiescent()) {
                    add(q);
                }
            }
        }
        // a QP closed since the last pass is not visited again (as it left the device's list of QPs)
        drop(false);
        return active;
    }

    int count() {
        return count;
    }

    /** Engine, at the end of a pass: drops the QPs that are quiescent or no longer on the device. */
    void retire() {
        drop(true);
    }

    /** Drops the QPs no longer on the device and, with {@code quiescentToo}, those with nothing to do. */
    private void drop(boolean quiescentToo) {
        int n = 0;
        for (int i = 0; i < count; i++) {
            SoftQueuePair q = active[i];
            if (q.removedFromDevice() || (quiescentToo && q.quiescent())) {
                q.active = false;
            } else {
                active[n++] = q;
            }
        }
        if (n < count) {
            Arrays.fill(active, n, count, null);
            count = n;
        }
    }

    private void add(SoftQueuePair qp) {
        if (qp.active || qp.removedFromDevice()) {
            return;
        }
        qp.active = true;
        if (count == active.length) {
            active = Arrays.copyOf(active, count * 2);
        }
        active[count++] = qp;
    }
}
