package io.rdmaflux.ud.dr;

/**
 * Where a {@link DrEndpoint} puts its datagrams: one unreliable path per rail (a UD queue pair and an
 * address handle, a UDP socket, a test's lossy wire). The sink may lose, duplicate, reorder or corrupt what
 * it is given; the endpoint copes.
 *
 * <p><b>Concurrency:</b> called on the thread that drives the endpoint only.
 */
@FunctionalInterface
public interface DatagramSink {
    /** The datagram left and its buffer may be reused (local send completion now). */
    int SENT = 0;
    /** The datagram was posted; its local completion comes later through {@link DrEndpoint#onLocalCompletion}. */
    int POSTED = 1;
    /** Nothing was sent (no send slot); the endpoint tries again on a later {@code doWork}. */
    int BACK_PRESSURED = 2;

    /**
     * Sends {@code length} bytes of {@code datagram} on {@code rail}; the array is the endpoint's and must not
     * be kept past the call (copy it into the send slot).
     *
     * @param psn the VFRAG's PSN for a DATA datagram (named in {@link DrEndpoint#onLocalCompletion}), else 0
     * @return {@link #SENT}, {@link #POSTED} or {@link #BACK_PRESSURED}
     */
    int send(int rail, byte[] datagram, int length, int psn);
}
