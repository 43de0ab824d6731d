package io.rdmaflux.core;

/**
 * The eager RDMA ring of a connection (seed 001 &sect;4.1&ndash;4.6; the channel kind
 * {@link io.rdmaflux.core.channel.ChannelKind#EAGER_RDMA}, implemented by the {@code rdma-eager} module): per
 * rail and direction the receiver registers a ring of {@code slots} slots once and the sender RDMA
 * WRITEs a small frame into the next slot, which the receiver polls, instead of a SEND the receiver
 * takes from its completion queue.
 *
 * <p>Where it applies: {@link ConnectionSpec#eager(EagerSpec)} for the connecting side,
 * {@code RdmaNode.Builder.eager(EagerSpec)} for every connection of a node (the accepting side's ring,
 * and the default of its connects). When the node offers the eager kind (the {@code rdma-eager} module
 * on the class path) and the spec is {@link #enabled() enabled}, rails ask for it by default and fall
 * back to RC send/receive with a peer that does not offer it.
 *
 * @param enabled   whether rails use the eager ring (false: RC send/receive)
 * @param slotBytes bytes of frame (header included) one slot carries, 0 for the node's buffer size; a
 *                  frame larger than the peer's slots goes over send/receive. In [0, 1 MiB]
 * @param slots     slots of the receive ring per rail, in [1, 4096]: the most frames in flight through
 *                  the ring; they share the connection's message credits with the send/receive buffers
 */
public record EagerSpec(boolean enabled, int slotBytes, int slots) {
    /** The default: on, slots as large as the node's buffers, 16 slots. */
    public static final EagerSpec DEFAULTS = new EagerSpec(true, 0, 16);
    /** Off: RC send/receive only. */
    public static final EagerSpec OFF = new EagerSpec(false, 0, 16);

    /** @throws IllegalArgumentException naming the value out of range */
    public EagerSpec {
        if (slotBytes < 0 || slotBytes > (1 << 20)) {
            throw new IllegalArgumentException("slotBytes in [0, 1048576] required but it was " + slotBytes
                + "; 0 sizes the slots like the node's buffers (RdmaNode.Builder.bufferBytes)");
        }
        if (slots < 1 || slots > 4096) {
            throw new IllegalArgumentException("slots in [1, 4096] required but it was " + slots);
        }
    }

    /** On with {@code slots} slots sized like the node's buffers. */
    public static EagerSpec slots(int slots) {
        return new EagerSpec(true, 0, slots);
    }

    /** This spec with {@code slotBytes} bytes per slot. */
    public EagerSpec withSlotBytes(int slotBytes) {
        return new EagerSpec(enabled, slotBytes, slots);
    }
}
