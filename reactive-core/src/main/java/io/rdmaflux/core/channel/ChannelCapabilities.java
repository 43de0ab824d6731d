package io.rdmaflux.core.channel;

/**
 * What a {@link Channel} can do, so the connection asks the channel instead of testing its class.
 *
 * @param maxInlineBytes      payload bytes a send may carry inline in its work request (0: none)
 * @param rdmaWrite           whether the channel posts RDMA WRITEs (the rendezvous of large messages, seed 001 &sect;3, Fig. 2)
 * @param rdmaRead            whether the channel posts RDMA READs and carries the READ rendezvous ({@link Channel#readStripe},
 *                            RTS_READ/READ_FIN); a connection uses {@code RendezvousMode.READ} only when every rail's kind has it
 * @param orderedDelivery     whether frames of one channel arrive in the order they were posted (RC: yes;
 *                            UD: no, the connection's PSN/ESN window restores order either way)
 * @param reliable            whether a posted frame either arrives or its channel fails (RC: the NIC retransmits;
 *                            a datagram channel must add its own acknowledgement, seed 003 &sect;4.2)
 */
public record ChannelCapabilities(int maxInlineBytes, boolean rdmaWrite, boolean rdmaRead, boolean orderedDelivery,
                                  boolean reliable) {
    /** @throws IllegalArgumentException if {@code maxInlineBytes} is negative */
    public ChannelCapabilities {
        if (maxInlineBytes < 0) {
            throw new IllegalArgumentException("maxInlineBytes >= 0 required but it was " + maxInlineBytes);
        }
    }
}
