package io.rdmaflux.core;

/**
 * How a connection moves a large message (one above the node's rendezvous threshold), chosen with
 * {@link ConnectionSpec#rendezvous(RendezvousMode)} by the connecting side and carried in the handshake,
 * so both directions of the connection use it. Both protocols are seed 001 &sect;3 (Fig. 2); the
 * stripes of either go over the rails through the same stripe engine (seed 000 &sect;4.3, &sect;5.3).
 *
 * <ul>
 *   <li>{@link #WRITE} (the default): RTS &rarr; CTS (the receiver's buffer address and rkey) &rarr; the
 *       sender RDMA-WRITEs each stripe and sends one FIN per rail used. The receiver does no RDMA work;
 *       the message costs one extra control round trip (the CTS) before its data moves. The default
 *       because its wire protocol is the one every rdmaflux peer speaks, and because the CTS round is
 *       cheap next to a transfer of the sizes that go by rendezvous.</li>
 *   <li>{@link #READ}: the RTS_READ carries the address and rkey of the message's registered memory
 *       (the registration cache's entry, the application's region, or a staging slot: one registration
 *       serves every rail, as the node's rails are ports of one device); the receiver, once it has a
 *       buffer for it, RDMA-READs the stripes over its rails and answers READ_FIN, on which the sender
 *       completes the send and unpins the memory. No CTS round; the receiver drives the transfer, so a
 *       slow consumer pulls at its own pace.</li>
 *   <li>{@link #AUTO}: READ for messages of at least {@link #AUTO_READ_MIN_BYTES}, WRITE below.</li>
 * </ul>
 *
 * <p><b>Negotiation:</b> READ (and AUTO's READ) is used only when the peer's handshake says it speaks
 * the READ rendezvous and every rail's channel kind can post RDMA READs
 * ({@link io.rdmaflux.core.channel.ChannelCapabilities#rdmaRead()}); otherwise the connection falls back
 * to WRITE, silently: {@link RdmaConnection#rendezvousMode()} says which one it uses.
 */
public enum RendezvousMode {
    /** RTS, CTS, RDMA WRITE, FIN per rail (the default). */
    WRITE,
    /** RTS_READ with address and rkey, RDMA READ by the receiver, READ_FIN. */
    READ,
    /** READ from {@link #AUTO_READ_MIN_BYTES} on, WRITE below. */
    AUTO;

    /** AUTO's switch-over length: messages of at least this many bytes (256 KiB) go by READ. */
    public static final int AUTO_READ_MIN_BYTES = 256 * 1024;

    /** The handshake's code of this mode, 0..2. */
    int code() {
        return ordinal();
    }

    static RendezvousMode ofCode(int code) {
        return code >= 0 && code < values().length ? values()[code] : WRITE;
    }

    /** Whether a message of {@code lengthBytes} goes by READ under this (negotiated) mode. */
    boolean reads(int lengthBytes) {
        return this == READ || this == AUTO && lengthBytes >= AUTO_READ_MIN_BYTES;
    }
}
