package io.rdmaflux.verbs;

/**
 * How {@link ProgressAgent}s get a thread.
 *
 * <ul>
 *   <li>{@link #DEDICATED}: one named thread per owner (provider or node), started on build and
 *       stopped on {@code close()}.</li>
 *   <li>{@link #SHARED}: one named thread runs the agents of several owners.</li>
 *   <li>{@link #INVOKER}: no thread at all; the caller drives {@code doWork}. Deterministic tests
 *       and virtual-time simulations use this mode.</li>
 * </ul>
 */
public enum ThreadingMode {
    DEDICATED,
    SHARED,
    INVOKER
}
