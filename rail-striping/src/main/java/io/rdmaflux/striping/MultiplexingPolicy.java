package io.rdmaflux.striping;

/**
 * Chooses the one subchannel a whole message travels on (seed 000 §4.4, "multiplexing schemes":
 * used for send/receive and small RDMA messages, which are never striped).
 *
 * <p><b>Concurrency:</b> an instance belongs to one virtual channel and is called from the
 * thread that runs that channel's {@link CommunicationScheduler}; it is not thread-safe.
 */
public interface MultiplexingPolicy {

    /**
     * Returns the rail for the next message.
     *
     * @param lengthBytes message length in bytes (seed 000 §4.4 deliberately ignores it for small
     *                    messages; policies may use it)
     * @param usableRails bit mask of rails that may be chosen, never 0
     * @return a rail whose bit is set in {@code usableRails}
     */
    int selectRail(long lengthBytes, long usableRails);

    /** Number of rails this policy was created for. */
    int railCount();

    /** Short name for metrics and logs, e.g. {@code "window-rr(8)"}. */
    String name();

    /**
     * Creates one policy instance per virtual channel, since policies keep state (the round robin
     * cursor, window position).
     */
    @FunctionalInterface
    interface Factory {
        /**
         * @param railCount rails of the virtual channel, 1..64
         * @throws IllegalArgumentException if the policy's parameters do not fit {@code railCount}
         */
        MultiplexingPolicy create(int railCount);
    }
}
