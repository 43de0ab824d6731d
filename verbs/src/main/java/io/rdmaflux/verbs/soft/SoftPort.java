package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.PortState;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * A soft NIC port: one rail, with the {@link RailConfig} the NIC applies to every frame leaving it.
 *
 * <h2>Shaping</h2>
 * A token bucket in its virtual-scheduling form (GCRA): the port remembers when its link finishes
 * serializing what it has accepted ({@code busyUntilNs}). A frame of {@code n} bytes departs at
 * {@code max(now, busyUntil)} and occupies the link for {@code n * 1e9 / bandwidth} ns; it reaches
 * the peer that much later plus the one-way latency. The NIC may queue frames on the link as long
 * as it is busy for at most {@code burstBytes} worth of time ahead of now (the bucket depth). All
 * times come from the provider's injected clock, so shaping is exact in virtual time. An unshaped
 * port (bandwidth {@link Long#MAX_VALUE}, latency 0) skips all of it.
 *
 * <h2>State</h2>
 * {@link #setState(PortState)} takes the link down or up, from any thread: while DOWN, frames the
 * port would send or receive are lost, so RC requesters retry and then fail with RETRY_EXC_ERR,
 * and UD datagrams are dropped.
 *
 * <h2>RC faults</h2>
 * When the rail has RC faults ({@link RailConfig#hasRcFaults()}), every RC frame the port sends goes
 * through its {@link RcFaults} stage (loss, duplication, reordering) on the way to the transport.
 *
 * <p><b>Concurrency:</b> accessors and {@link #setState}/{@link #setRail} are thread-safe; the shaping
 * and fault state is used only by the device's engine.
 */
public final class SoftPort implements Port {
    private final SoftDevice device;
    private final int number;
    private volatile PortAddress address;
    private volatile PortState state = PortState.ACTIVE;
    private volatile RailConfig rail;
    private volatile boolean railChanged;

    private RailConfig engineRail;
    private long busyUntilNs;
    private long lastArrivalNs = Long.MIN_VALUE;
    private boolean anyArrival;
    private long horizonNs;
    private LossGenerator loss;
    private SplittableRandom faults;
    private long framesLost;
    private long framesDuplicated;
    private long framesReordered;
    private long framesCorrupted;
    private @Nullable RcFaults rcFaults;
    long rcLost;
    long rcDuplicated;
    long rcReordered;
    long rcCorrupted;
    long rcSilentlyCorrupted;
    private boolean lastDatagramCorrupted;

    SoftPort(SoftDevice device, int number, RailConfig rail) {
        this.device = device;
        this.number = number;
        this.rail = rail;
        this.address = new PortAddress("unbound", device.name(), number);
        applyRail(rail);
    }

    void bound(PortAddress address) {
        this.address = address;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public int number() {
        return number;
    }

    @Override
    public PortAddress address() {
        return address;
    }

    @Override
    public PortState state() {
        return state;
    }

    /** Takes the link down or up (fault injection). */
    public void setState(PortState state) {
        this.state = java.util.Objects.requireNonNull(state, "state");
    }

    @Override
    public int mtuBytes() {
        return rail.mtuBytes();
    }

    @Override
    public long bandwidthBytesPerSec() {
        return rail.bandwidthBytesPerSec();
    }

    @Override
    public long latencyNs() {
        return rail.latencyNs();
    }

    /** False while the rail model tears RDMA WRITEs ({@link RailConfig#tornWrites()}), else true as the soft NIC places the last word last. */
    @Override
    public boolean orderedWritePlacement() {
        return !rail.tornWrites();
    }

    /** The rail model in force. */
    public RailConfig rail() {
        return rail;
    }

    /**
     * Replaces the rail model; the engine picks it up before its next frame (shaping state and fault
     * generators restart from the new configuration's seeds).
     */
    public void setRail(RailConfig rail) {
        this.rail = java.util.Objects.requireNonNull(rail, "rail");
        this.railChanged = true;
    }

    /** UD datagrams this port's loss model dropped. */
    public long framesLost() {
        return framesLost;
    }

    /** UD datagrams sent twice. */
    public long framesDuplicated() {
        return framesDuplicated;
    }

    /** UD datagrams held back so later ones overtook them. */
    public long framesReordered() {
        return framesReordered;
    }

    /** UD datagrams with a flipped byte (a duplicate of one counts again: both arrive corrupted). */
    public long framesCorrupted() {
        return framesCorrupted;
    }

    /**
     * RC frames (requests and responses) this port's RC loss model dropped
     * ({@link RailConfig#rcLoss()}). Written by the engine thread; a read from another thread may lag.
     */
    public long rcFramesLost() {
        return rcLost;
    }

    /** RC frames this port sent twice ({@link RailConfig#rcDuplicateRate()}); may lag as {@link #rcFramesLost()}. */
    public long rcFramesDuplicated() {
        return rcDuplicated;
    }

    /** RC frames this port held back so later ones overtook them ({@link RailConfig#rcReorderRate()}); may lag. */
    public long rcFramesReordered() {
        return rcReordered;
    }

    /**
     * RC frames this port corrupted ({@link RailConfig#rcCorruptRate()}), each of which the receiving NIC's
     * ICRC check drops ({@link SoftDevice#icrcDrops()}); may lag as {@link #rcFramesLost()}.
     */
    public long rcFramesCorrupted() {
        return rcCorrupted;
    }

    /**
     * RC frames this port corrupted where the ICRC does not see it ({@link RailConfig#rcSilentCorruptRate()}):
     * each was accepted by the receiving NIC with its damage; may lag (engine thread).
     */
    public long rcFramesSilentlyCorrupted() {
        return rcSilentlyCorrupted;
    }

    // ---- engine side ----

    private void applyRail(RailConfig r) {
        engineRail = r;
        loss = r.loss().copy();
        rcFaults = RcFaults.of(this, r);
        faults = new SplittableRandom(r.faultSeed());
        horizonNs = r.bandwidthBytesPerSec() == Long.MAX_VALUE ? 0 : serializationNs(r.burstBytes(), r.bandwidthBytesPerSec());
    }

    RailConfig engineRail() {
        if (railChanged) {
            railChanged = false;
            applyRail(rail);
        }
        return engineRail;
    }

    /**
     * The RC fault stage of the rail in force, null when it has none; read after {@link #engineRail()}
     * in the same pass (which picks up a changed rail).
     */
    @Nullable RcFaults rcFaults() {
        return rcFaults;
    }

    boolean isUp() {
        return state == PortState.ACTIVE;
    }

    /** Whether the link may accept another frame now (bucket not exhausted). */
    boolean mayTransmit(long nowNs) {
        RailConfig r = engineRail();
        return r.bandwidthBytesPerSec() == Long.MAX_VALUE || busyUntilNs - nowNs <= horizonNs;
    }

    /**
     * Accepts {@code bytes} onto the link.
     *
     * @return when the frame reaches the peer, ns (departure end + latency)
     */
    long depart(long nowNs, long bytes) {
        RailConfig r = engineRail();
        long bw = r.bandwidthBytesPerSec();
        if (bw == Long.MAX_VALUE) {
            return nowNs + r.latencyNs();
        }
        long start = Math.max(nowNs, busyUntilNs);
        busyUntilNs = start + serializationNs(bytes, bw);
        return busyUntilNs + r.latencyNs();
    }

    /** When a small control frame (ACK/NAK, READ request) sent now reaches the peer. */
    long controlArrival(long nowNs) {
        return nowNs + engineRail().latencyNs();
    }

    static long serializationNs(long bytes, long bandwidthBytesPerSec) {
        return Math.multiplyHigh(bytes, 1_000_000_000L) == 0 && bytes * 1_000_000_000L >= 0
            ? (bytes * 1_000_000_000L + bandwidthBytesPerSec - 1) / bandwidthBytesPerSec
            : (long) Math.ceil(bytes * 1e9 / bandwidthBytesPerSec);
    }

    /** Keeps arrivals from this port in transmission order (a small control frame never overtakes data). */
    long monotone(long arrivalNs) {
        if (anyArrival && arrivalNs - lastArrivalNs < 0) {
            return lastArrivalNs;
        }
        anyArrival = true;
        lastArrivalNs = arrivalNs;
        return arrivalNs;
    }

    boolean udLost(long nowNs, int lengthBytes) {
        if (loss.shouldDrop(nowNs, lengthBytes)) {
            framesLost++;
            return true;
        }
        return false;
    }

    /** Drawn after {@link #udCorruptOffset} for the same datagram: a duplicate of a corrupted one is corrupted too, and counted. */
    boolean udDuplicate() {
        double p = engineRail.duplicateRate();
        if (p > 0 && faults.nextDouble() < p) {
            framesDuplicated++;
            if (lastDatagramCorrupted) {
                framesCorrupted++;
            }
            return true;
        }
        return false;
    }

    boolean udReorder() {
        double p = engineRail.reorderRate();
        if (p > 0 && faults.nextDouble() < p) {
            framesReordered++;
            return true;
        }
        return false;
    }

    /** -1 for no corruption, else the byte offset in [0, length) to flip. */
    int udCorruptOffset(int length) {
        double p = engineRail.corruptRate();
        lastDatagramCorrupted = p > 0 && length > 0 && faults.nextDouble() < p;
        if (lastDatagramCorrupted) {
            framesCorrupted++;
            return faults.nextInt(length);
        }
        return -1;
    }

    @Override
    public String toString() {
        return "port " + address + " " + state + " " + rail;
    }
}
