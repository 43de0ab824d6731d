package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DrConfig;

import java.util.Objects;

/**
 * The settings of {@link io.rdmaflux.core.channel.ChannelKind#RC_DR} rails: DR's end-to-end CRC32C and
 * acknowledgement over an RC queue pair per connection rail (seed 003 &sect;3.1).
 *
 * @param receiveSlots     receive buffers of each rail's RC queue pair, each one DR datagram, in [8, 65536]; the peer's
 *                         DR credit is seven eighths of them (the rest for ACKs and probes)
 * @param sendSlots        registered send buffers of each rail's RC queue pair, in [4, 65536]
 * @param maxDatagramBytes the largest DR datagram, bytes, in [256, 65535]; a rail's datagram is the node's
 *                         {@code bufferBytes} plus the 24-byte work-request and 28-byte DR headers (one frame, one
 *                         datagram), at most this
 * @param dr               the DR settings of every rail; its {@code datagramBytes} is lowered to the rail's datagram
 */
public record RcDrSpec(int receiveSlots, int sendSlots, int maxDatagramBytes, DrConfig dr) {
    /**
     * 32 receive and 32 send slots per rail (with the node's default 8 KiB buffers: 2 x 32 x 8,244 B = 515 KiB
     * registered per connection rail), DR timers as {@link UdSpec#DEFAULTS}' but a local-completion timeout that
     * covers the RC queue pair's own retransmissions (a SEND completes only once the peer's NIC acknowledged it),
     * ACKs every 8 VFRAGs (RC loses nothing by itself: DR's ACKs only confirm what arrived intact).
     */
    public static final RcDrSpec DEFAULTS = new RcDrSpec(32, 32, 65535, UdSpec.DEFAULTS.dr().toBuilder().windowVfrags(64)
        .receiveBufferVfrags(128).initialCreditVfrags(4).ackEveryVfrags(8).localCompletionTimeoutNs(1_000_000_000L).build());

    /** @throws IllegalArgumentException naming the value out of range */
    public RcDrSpec {
        range("receiveSlots", receiveSlots, 8, 65536);
        range("sendSlots", sendSlots, 4, 65536);
        range("maxDatagramBytes", maxDatagramBytes, 256, 65535);
        Objects.requireNonNull(dr, "dr");
    }

    /** The datagram of a rail whose RC channel sends frames of up to {@code bufferBytes}, bytes. */
    int datagramBytes(int bufferBytes) {
        return (int) Math.min(maxDatagramBytes, (long) bufferBytes + WorkRequestMessage.HEADER_BYTES + io.rdmaflux.ud.dr.DrDatagram.HEADER_BYTES);
    }

    private static void range(String name, int v, int lo, int hi) {
        if (v < lo || v > hi) {
            throw new IllegalArgumentException(name + " in [" + lo + ", " + hi + "] required but it was " + v);
        }
    }
}
