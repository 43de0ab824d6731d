package io.rdmaflux.verbs;

import java.util.concurrent.CompletableFuture;

/**
 * A connection manager in the manner of {@code rdma_cm}: a server listens at a service address, a
 * client sends a connect request carrying its QP endpoints and private data, the server's handler
 * creates its QPs and accepts with its own endpoints and private data (or rejects). Both sides
 * then move their QPs to RTS themselves with {@link QueuePair#connect(QpEndpoint)}.
 *
 * <p><b>Addresses:</b> a service address is a {@link PortAddress} {@code fabric://host:service}:
 * on the in-JVM fabric {@code host} is a device name and {@code service} any number the listener
 * picked; on the IP fabric {@code host} is an IP address or host name and {@code service} a TCP port.
 *
 * <p><b>Errors:</b> {@link #connect} completes exceptionally with a {@link VerbsException} when
 * nothing listens at the address (refused), the host cannot be reached or resolved, the handler
 * rejects, or no reply arrives within the timeout; the message names the address and the cause.
 *
 * <p><b>Concurrency:</b> thread-safe. Handlers run on a provider thread (or, on the in-JVM fabric,
 * in the connecting thread) and must not block.
 */
public interface ConnectionManager extends AutoCloseable {
    /** Most private data bytes one request or reply carries (rdma_cm allows 56 on IB; we allow more). */
    int MAX_PRIVATE_DATA_BYTES = 4096;

    /** Handles connection requests at a listener. */
    @FunctionalInterface
    interface RequestHandler {
        /**
         * Called once per connect request.
         *
         * @param from    the requester's service-independent address (for logs and identity)
         * @param request the requester's endpoints and private data
         * @return the accept reply, or a future completed exceptionally to reject (its message is
         *     passed to the requester)
         */
        CompletableFuture<CmParams> onRequest(PortAddress from, CmParams request);
    }

    /** A listening endpoint; {@link #close()} stops accepting (established connections stay). */
    interface Listener extends AutoCloseable {
        /** The address bound (with the real port when 0 was asked). */
        PortAddress address();

        @Override
        void close();
    }

    /**
     * Listens at {@code address}.
     *
     * @param address the service address; service 0 asks for any free one
     * @throws VerbsException if the address is in use or not local; the message names it
     */
    Listener listen(PortAddress address, RequestHandler handler);

    /**
     * Sends a connect request to the listener at {@code address}.
     *
     * @param timeoutNs how long to wait for the reply, in ns
     * @return the listener's accept reply
     */
    CompletableFuture<CmParams> connect(PortAddress address, CmParams request, long timeoutNs);

    /** Closes every listener; idempotent. */
    @Override
    void close();
}
