package io.rdmaflux.core.tck;

/** How a {@link TckReceiver} asks for messages. */
public enum Demand {
    /** request(1), then request(1) after each message. */
    ONE_AT_A_TIME(1),
    /** request(7), and another 7 once the 7 arrived. */
    BURSTS(7),
    /** request(Long.MAX_VALUE) once. */
    UNBOUNDED(Long.MAX_VALUE),
    /** {@code receive().limitRate(8)} under an unbounded subscriber: 8, then 6 more each time 6 arrived. */
    LIMIT_RATE(8),
    /**
     * Unbounded, holding up to 3 messages and releasing the newest first: receive buffers freed out of
     * order (seed 001 &sect;4.4).
     */
    RELEASE_OUT_OF_ORDER(Long.MAX_VALUE);

    /** The most messages asked for and not yet received at any time. */
    public final long window;

    Demand(long window) {
        this.window = window;
    }
}
