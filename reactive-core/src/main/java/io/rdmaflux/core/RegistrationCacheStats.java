package io.rdmaflux.core;

/**
 * Counters of a node's registration cache ({@link RdmaNode#registrationCacheStats()}), the pin-down
 * cache that registers application memory sent by reference (seed 001 &sect;3.1, seed 000 &sect;5.1).
 * Counts run from the node's start; a snapshot, consistent in itself.
 *
 * @param budgetBytes     most bytes the cache keeps registered ({@link RdmaNode.Builder#registrationCacheBytes}); 0: off
 * @param registeredBytes bytes the cache has registered now (budgeted entries, pinned retired ones included)
 * @param userBytes       bytes of regions the application registered ({@link RdmaNode#registerMemory}), outside the budget
 * @param entries         registrations in the lookup (cached and the application's)
 * @param pinnedEntries   registrations pinned by sends in flight now
 * @param hits            sends whose memory was registered already (a cached or application region)
 * @param misses          sends that registered their buffer
 * @param evictions       least recently used registrations dropped to make room
 * @param waits           times a send waited because pinned entries left no room in the budget
 * @param bypasses        sends staged by a copy instead: the cache is off, or the message exceeds the budget
 * @param invalidations   registrations dropped by {@link RdmaNode#invalidateRegistrations} or by a region's deregistration
 */
public record RegistrationCacheStats(long budgetBytes, long registeredBytes, long userBytes, int entries, int pinnedEntries,
                                     long hits, long misses, long evictions, long waits, long bypasses, long invalidations) {
    static RegistrationCacheStats of(long[] c) {
        return new RegistrationCacheStats(c[0], c[1], c[2], (int) c[3], (int) c[4], c[5], c[6], c[7], c[8], c[9], c[10]);
    }
}
