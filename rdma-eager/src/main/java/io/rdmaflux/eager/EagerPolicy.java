package io.rdmaflux.eager;

/**
 * How a receiver manages its node's polling set (seed 001 &sect;4.6; see {@link PollingSet}). Times in ns
 * of the node's clock (virtual time in tests).
 *
 * @param checkIntervalNs      how often a rail outside the set checks whether it is busy, &gt; 0
 * @param promoteAfterMessages send/receive messages within one check interval that make a rail busy, &ge; 1
 * @param idleNs               how long a member must have had no ring arrival before a busy rail may displace it, &ge; 0
 */
public record EagerPolicy(long checkIntervalNs, int promoteAfterMessages, long idleNs) {
    /** Check every 1 ms; 8 fallback messages in it make a rail busy; a member idle for 10 ms may be displaced. */
    public static final EagerPolicy DEFAULTS = new EagerPolicy(1_000_000, 8, 10_000_000);

    /** @throws IllegalArgumentException naming the value out of range */
    public EagerPolicy {
        if (checkIntervalNs <= 0) {
            throw new IllegalArgumentException("checkIntervalNs > 0 required but it was " + checkIntervalNs);
        }
        if (promoteAfterMessages < 1) {
            throw new IllegalArgumentException("promoteAfterMessages >= 1 required but it was " + promoteAfterMessages);
        }
        if (idleNs < 0) {
            throw new IllegalArgumentException("idleNs >= 0 required but it was " + idleNs);
        }
    }
}
