package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DrConfig;

import java.util.Objects;

/**
 * The settings of a node's reliable UD rails (seed 003 &sect;4, &sect;4.1).
 *
 * @param sendQps          UD send queue pairs per rail, used in round robin (seed 003 &sect;4: four gave near-optimal
 *                         bandwidth), in [1, 64]
 * @param receivePoolSlots receive buffers of the rail's one UD receive queue pair, shared by every peer, allocated
 *                         once and never resized (&sect;4.1), in [8, 65536]
 * @param sendSlots        registered send buffers of the rail, shared by every peer, in [4, 65536]
 * @param dr               the DR settings of every peer; its {@code datagramBytes} is lowered to the port's UD MTU
 *                         minus the 4-byte tag
 */
public record UdSpec(int sendQps, int receivePoolSlots, int sendSlots, DrConfig dr) {
    /**
     * Four send QPs, 512 receive and 256 send buffers per rail, DR datagrams as large as the port's UD MTU allows
     * ({@code datagramBytes} 65535, lowered to the MTU minus the tag: 4092 B on a 4096 B MTU, so a 4 KiB message is 2
     * VFRAGs instead of 3 with DR's 2 KiB default; issue 14, 4 KiB rate), DR timers for a fabric with &mu;s round trips (RTO in
     * [0.2, 5] ms, a rail given up after 8 timeouts and 20 ms without an ACK); a channel lifts the give-up budget to
     * its node's RC timeouts ({@code (qpRetryCount + 1) x qpRetryTimeoutNs}, 1.6 s by default).
     */
    public static final UdSpec DEFAULTS = new UdSpec(4, 512, 256, DrConfig.builder().datagramBytes(65535).windowVfrags(64).receiveBufferVfrags(128).initialCreditVfrags(4)
        .ackEveryVfrags(4).ackDelayNs(20_000).initialRtoNs(1_000_000).minRtoNs(200_000).maxRtoNs(5_000_000)
        .maxRetriesPerRail(7).railTimeoutNs(20_000_000).keepaliveNs(1_000_000_000L).build());

    /** @throws IllegalArgumentException naming the value out of range */
    public UdSpec {
        range("sendQps", sendQps, 1, 64);
        range("receivePoolSlots", receivePoolSlots, 8, 65536);
        range("sendSlots", sendSlots, 4, 65536);
        Objects.requireNonNull(dr, "dr");
    }

    private static void range(String name, int v, int lo, int hi) {
        if (v < lo || v > hi) {
            throw new IllegalArgumentException(name + " in [" + lo + ", " + hi + "] required but it was " + v);
        }
    }
}
