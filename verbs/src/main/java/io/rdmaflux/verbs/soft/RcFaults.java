package io.rdmaflux.verbs.soft;

import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * The RC wire faults of one port ({@link RailConfig#rcLoss()}, {@link RailConfig#rcDuplicateRate()},
 * {@link RailConfig#rcReorderRate()}), applied by the NIC to every RC frame the port sends, requests
 * and responses alike, between the rail's shaping and the {@link FrameTransport}.
 *
 * <ul>
 *   <li><b>Loss:</b> the frame is released instead of transmitted.</li>
 *   <li><b>Duplication:</b> a second frame with the same header and payload references follows it.</li>
 *   <li><b>Reordering:</b> the frame's arrival time moves {@link RailConfig#rcReorderDelayNs()} later;
 *       the receiving NIC holds it until then, so frames sent after it within that time arrive first.
 *       The port's arrival order of the other frames is untouched.</li>
 * </ul>
 * The transport still carries frames in transmission order, as its contract asks; only arrival times
 * change. Draws come from generators seeded by the rail, and times from the provider's clock, so a
 * run is reproducible, in virtual time too.
 *
 * <p><b>Concurrency:</b> engine thread only. A port makes a new instance whenever its rail changes.
 */
final class RcFaults {
    private final SoftPort port;
    private final LossGenerator loss;
    private final SplittableRandom random;
    private final double duplicateRate;
    private final double reorderRate;
    private final long reorderDelayNs;

    private RcFaults(SoftPort port, RailConfig rail) {
        this.port = port;
        this.loss = rail.rcLoss().copy();
        this.random = new SplittableRandom(rail.rcFaultSeed());
        this.duplicateRate = rail.rcDuplicateRate();
        this.reorderRate = rail.rcReorderRate();
        this.reorderDelayNs = rail.rcReorderDelayNs();
    }

    /** The fault stage of {@code rail}, or null when it has no RC fault (the hot path then skips it). */
    static @Nullable RcFaults of(SoftPort port, RailConfig rail) {
        return rail.hasRcFaults() ? new RcFaults(port, rail) : null;
    }

    /** Sends {@code f} (its arrival time already set) through the faults; takes ownership. */
    void transmit(SoftFrame f, long nowNs, SoftDevice nic) {
        if (loss.shouldDrop(nowNs, f.length)) {
            port.rcLost++;
            f.release();
            return;
        }
        SoftFrame dup = null;
        if (duplicateRate > 0 && random.nextDouble() < duplicateRate) {
            dup = nic.claimFrame();
            dup.shareFrom(f);
            port.rcDuplicated++;
        }
        if (reorderRate > 0 && random.nextDouble() < reorderRate) {
            f.deliverAtNs += reorderDelayNs;
            port.rcReordered++;
        }
        FrameTransport.Attachment transport = nic.attachment();
        transport.transmit(f);
        if (dup != null) {
            transport.transmit(dup);
        }
    }
}
