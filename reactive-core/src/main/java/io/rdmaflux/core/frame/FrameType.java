package io.rdmaflux.core.frame;

/**
 * The frame types of the rdmaflux wire protocol. The numeric {@link #code()} is what travels in the
 * {@link FrameHeader#TYPE_OFFSET type} byte of every frame.
 *
 * <ul>
 *   <li>{@link #DATA}: one fragment of an application message; consumes one credit.</li>
 *   <li>{@link #CREDIT}: an explicit credit update when credit accumulated and no reverse traffic
 *       carried it piggybacked (seed 001 &sect;3.1); consumes no credit. With
 *       {@link FrameHeader#FLAG_INBOUND_CLOSED}: no more credit will come.</li>
 *   <li>{@link #CLOSE}: the sender will send no more messages (graceful) or is aborting; consumes no
 *       credit. One per subchannel, like the FIN of seed 000 &sect;5.3, and a second one with
 *       {@link FrameHeader#FLAG_FINAL} (its last frame on the rail) when the peer's CLOSE came after it.</li>
 *   <li>{@link #RTS}: request to send one large message by rendezvous (seed 001 &sect;3, Fig. 2:
 *       "start rendezvous"); consumes one credit, like the first fragment of a message.</li>
 *   <li>{@link #CTS}: clear to send, the receiver's reply with the address and rkey of a
 *       registered message buffer ("reply rendezvous"); consumes no credit.</li>
 *   <li>{@link #FIN}: the RDMA WRITE of one stripe on this subchannel is complete ("finish
 *       rendezvous"); one per subchannel used (seed 000 &sect;5.3); consumes no credit.</li>
 *   <li>{@link #RAIL_DOWN}: the sender found the rail named in the PSN field failed and re-sends what
 *       was in flight on it over the other rails; the receiver stops using that rail too and frees the
 *       receive buffers its out-of-order messages hold so the re-sent ones find credit; no credit.</li>
 *   <li>{@link #RTS_READ}: request to send one large message by the READ rendezvous, with the address
 *       and rkey the receiver RDMA-READs it from (seed 001 &sect;3); consumes one credit, like an RTS.
 *       Sent only to a peer whose handshake says it speaks the READ rendezvous.</li>
 *   <li>{@link #READ_FIN}: the receiver's READs of the message completed ("finish rendezvous"): the
 *       sender completes the send and unpins the memory; no credit.</li>
 *   <li>{@link #CHANNEL_CONTROL}: a control message of the channel kind itself, opaque to the connection
 *       ({@link ChannelControlFrameCodec}): a kind built over the RC send/receive channel (the eager RDMA
 *       ring of seed 001 &sect;4.1&ndash;4.6 offers, revokes and credits its ring with it) gets the payload
 *       through {@code ChannelEvents.onChannelControl}; no credit, a control receive buffer.</li>
 *   <li>{@link #REGION_EXPOSE}, {@link #REGION_REVOKE}, {@link #EPOCH_SYNC}, {@link #EPOCH_ACK}: one-sided
 *       communication (seed 002 &sect;3.2): a region exposed to the peer with its rkey on every rail, its
 *       revocation (by the owner) or release (by the user), the synchronization message that ends an
 *       access epoch on every subchannel it used, and the target's acknowledgement of a whole epoch. No
 *       credit; control receive buffers. Codes 11..14 are reserved for the reliable-UD frames.</li>
 * </ul>
 */
public enum FrameType {
    DATA(1),
    CREDIT(2),
    CLOSE(3),
    RTS(4),
    CTS(5),
    FIN(6),
    RAIL_DOWN(7),
    RTS_READ(8),
    READ_FIN(9),
    CHANNEL_CONTROL(10),
    REGION_EXPOSE(15),
    REGION_REVOKE(16),
    EPOCH_SYNC(17),
    EPOCH_ACK(18);

    /** The highest wire code of any type: arrays indexed by {@link #code()} have this length plus one. */
    public static final int MAX_CODE = 18;

    private static final FrameType[] BY_CODE = new FrameType[MAX_CODE + 1];

    static {
        for (FrameType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    FrameType(int code) {
        this.code = code;
    }

    /** The code carried on the wire, in [1, 255]. */
    public int code() {
        return code;
    }

    /** Whether a frame of this type consumes one of the peer's receive credits. */
    public boolean consumesCredit() {
        return this == DATA || this == RTS || this == RTS_READ;
    }

    /**
     * The type with the given wire code.
     *
     * @throws FrameFormatException if no type has that code
     */
    public static FrameType fromCode(int code) {
        if (code <= 0 || code >= BY_CODE.length) {
            throw new FrameFormatException("unknown frame type code " + code + "; known codes are 1 (DATA), 2 (CREDIT), 3 (CLOSE), 4 (RTS), 5 (CTS), 6 (FIN), 7 (RAIL_DOWN), 8 (RTS_READ), 9 (READ_FIN), 10 (CHANNEL_CONTROL), 15 (REGION_EXPOSE), 16 (REGION_REVOKE), 17 (EPOCH_SYNC), 18 (EPOCH_ACK)");
        }
        FrameType t = BY_CODE[code];
        if (t == null) {
            throw new FrameFormatException("unknown frame type code " + code);
        }
        return t;
    }
}
