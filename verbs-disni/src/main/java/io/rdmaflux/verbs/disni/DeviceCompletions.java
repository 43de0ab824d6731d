package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import org.agrona.collections.Int2ObjectHashMap;

/**
 * A device's one native CQ, polled through one {@link SVCPollCq} built once over a reused
 * {@code IbvWC[]} batch (nothing allocated per poll or per completion), and the demultiplexing of its
 * completions by native QP number to the QP they belong to, which maps them onto its SPI completion
 * queues ({@link DisniQueuePair#onNativeCompletion}).
 *
 * <p>Every QP of the device completes into this CQ, so its entries bound the device's outstanding
 * work requests ({@link DisniDevice#reserveCqEntries}).
 *
 * <p><b>Concurrency:</b> {@link #drain()} is thread-safe (one drain at a time); lock order: this, then
 * a QP, then an SPI CQ.
 */
final class DeviceCompletions {
    /** Completions per native poll. */
    static final int BATCH = 32;

    private final DisniDevice device;
    private final RdmaSeam.Cq cq;
    private final int entries;
    private final IbvWC[] wcs = new IbvWC[BATCH];
    private final SVCPollCq poll;
    private final Int2ObjectHashMap<DisniQueuePair> qps = new Int2ObjectHashMap<>();
    private long strays;
    private boolean closed;

    DeviceCompletions(DisniDevice device, RdmaSeam.Cq cq, int entries) throws IOException {
        this.device = device;
        this.cq = cq;
        this.entries = entries;
        for (int i = 0; i < BATCH; i++) {
            wcs[i] = new IbvWC();
        }
        this.poll = cq.poll(wcs);
    }

    /** The native CQ, which every QP of the device is created with. */
    RdmaSeam.Cq nativeCq() {
        return cq;
    }

    /** Entries of the native CQ. */
    int entries() {
        return entries;
    }

    synchronized void register(int nativeQpn, DisniQueuePair qp) {
        qps.put(nativeQpn, qp);
    }

    synchronized void unregister(int nativeQpn) {
        qps.remove(nativeQpn);
    }

    /** Completions of QPs already destroyed (dropped, as verbs drops them with the QP). */
    synchronized long strays() {
        return strays;
    }

    /**
     * Moves every completion the native CQ holds into the SPI completion queues, then moves the QPs of
     * any SPI CQ that overflowed to ERROR.
     *
     * @return completions moved
     * @throws VerbsException if {@code ibv_poll_cq} fails
     */
    int drain() {
        int moved = 0;
        synchronized (this) {
            if (closed) {
                return 0;
            }
            while (true) {
                int n;
                try {
                    n = poll.execute().getPolls();
                } catch (IOException e) {
                    throw new VerbsException("ibv_poll_cq failed on " + device.name() + ": " + e.getMessage(), e);
                }
                if (n < 0) {
                    throw new VerbsException("ibv_poll_cq failed on " + device.name() + " (returned " + n + ")");
                }
                for (int i = 0; i < n; i++) {
                    DisniQueuePair qp = qps.get(wcs[i].getQp_num());
                    if (qp == null) {
                        strays++;
                    } else {
                        qp.onNativeCompletion(wcs[i]);
                    }
                }
                moved += n;
                if (n < BATCH) {
                    break;
                }
            }
        }
        DisniCompletionQueue[] spi = device.completionQueues();
        for (int i = 0; i < spi.length; i++) {
            spi[i].errorUsersIfOverrun();
        }
        return moved;
    }

    void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            qps.clear();
        }
        poll.free();
        try {
            cq.destroy();
        } catch (IOException e) {
            // closing
        }
    }
}
