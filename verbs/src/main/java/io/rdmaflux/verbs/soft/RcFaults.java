package io.rdmaflux.verbs.soft;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * The RC wire faults of one port ({@link RailConfig#rcLoss()}, {@link RailConfig#rcDuplicateRate()},
 * {@link RailConfig#rcReorderRate()}, {@link RailConfig#rcCorruptRate()}), applied by the NIC to every RC frame the port sends, requests
 * and responses alike, between the rail's shaping and the {@link FrameTransport}.
 *
 * <ul>
 *   <li><b>Loss:</b> the frame is released instead of transmitted.</li>
 *   <li><b>Duplication:</b> a second frame with the same header and payload references follows it.</li>
 *   <li><b>Corruption:</b> the frame is replaced by a copy (header, and the payload copied into the
 *       copy's own buffer: the sender's registered memory is never touched) that carries the
 *       {@link Icrc} of the intact frame, then one byte of its payload is flipped (a frame without
 *       payload: one bit of its PSN). The receiving NIC's ICRC check fails and drops it
 *       ({@link SoftDevice#icrcDrops()}); the requester's retransmission recovers it, as after a loss.
 *       Drawn after duplication, so a duplicate is intact (each packet on a wire is hit on its own).</li>
 *   <li><b>Silent corruption</b> ({@link RailConfig#rcSilentCorruptRate()}): as corruption, but the byte is
 *       flipped before the ICRC is computed, so the receiving NIC accepts the frame and places the damage
 *       ({@link SoftPort#rcFramesSilentlyCorrupted()}); frames without payload are not hit.</li>
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
    private final double corruptRate;
    private final double silentCorruptRate;

    private RcFaults(SoftPort port, RailConfig rail) {
        this.port = port;
        this.loss = rail.rcLoss().copy();
        this.random = new SplittableRandom(rail.rcFaultSeed());
        this.duplicateRate = rail.rcDuplicateRate();
        this.reorderRate = rail.rcReorderRate();
        this.reorderDelayNs = rail.rcReorderDelayNs();
        this.corruptRate = rail.rcCorruptRate();
        this.silentCorruptRate = rail.rcSilentCorruptRate();
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
        if (corruptRate > 0 && random.nextDouble() < corruptRate) {
            f = corrupt(f, nic, false);
            port.rcCorrupted++;
        } else if (silentCorruptRate > 0 && f.payloadCount > 0 && random.nextDouble() < silentCorruptRate) {
            f = corrupt(f, nic, true);
            port.rcSilentlyCorrupted++;
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

    /**
     * A corrupted copy of {@code f} (released), carrying the ICRC of the intact one, or with {@code silent} the
     * ICRC of the damaged bytes (the damage happened before the NIC computed it: the receiver accepts the frame).
     */
    private SoftFrame corrupt(SoftFrame f, SoftDevice nic, boolean silent) {
        SoftFrame c = nic.claimFrame();
        c.shareFrom(f);
        int payload = 0;
        for (int i = 0; i < f.payloadCount; i++) {
            payload += f.payloadLengths[i];
        }
        ByteBuffer own = null;
        if (payload > 0) {
            own = c.ownPayload(payload);
            int pos = 0;
            for (int i = 0; i < f.payloadCount; i++) {
                own.put(pos, f.payloadBuffers[i], f.payloadOffsets[i], f.payloadLengths[i]);
                pos += f.payloadLengths[i];
            }
            c.payloadCount = 0;
            c.addPayload(own, 0, payload);
        }
        if (!silent) {
            c.icrc = Icrc.of(c);
            c.hasIcrc = true;
        }
        if (own != null) {
            int at = random.nextInt(payload);
            own.put(at, (byte) (own.get(at) ^ 0x5A));
        } else {
            c.psn ^= 1 << random.nextInt(24);
        }
        if (silent) {
            c.icrc = Icrc.of(c);
            c.hasIcrc = true;
        }
        f.release();
        return c;
    }
}
