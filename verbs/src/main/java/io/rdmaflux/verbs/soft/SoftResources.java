package io.rdmaflux.verbs.soft;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * JVM-wide accounting of what soft providers hold, so tests in every module can assert that nothing
 * leaked: after all providers are closed, every counter is 0.
 *
 * <p><b>Concurrency:</b> thread-safe (atomic counters).
 */
public final class SoftResources {
    static final AtomicInteger LIVE_PROVIDERS = new AtomicInteger();
    static final AtomicInteger LIVE_MEMORY_REGIONS = new AtomicInteger();
    static final AtomicLong ALLOCATED_BYTES = new AtomicLong();
    static final AtomicInteger LIVE_QUEUE_PAIRS = new AtomicInteger();
    static final AtomicInteger LIVE_COMPLETION_QUEUES = new AtomicInteger();

    private SoftResources() {
    }

    /** Soft providers opened and not yet closed. */
    public static int liveProviders() {
        return LIVE_PROVIDERS.get();
    }

    /** Memory regions registered (or allocated) and not yet deregistered, over all soft providers. */
    public static int liveMemoryRegions() {
        return LIVE_MEMORY_REGIONS.get();
    }

    /**
     * Off-heap bytes allocated by {@code ProtectionDomain.allocateMemory} and not yet deregistered,
     * over all soft providers. Caller-registered memory is not counted.
     */
    public static long allocatedBytes() {
        return ALLOCATED_BYTES.get();
    }

    /** Queue pairs created and not yet closed. */
    public static int liveQueuePairs() {
        return LIVE_QUEUE_PAIRS.get();
    }

    /** Completion queues created and not yet closed. */
    public static int liveCompletionQueues() {
        return LIVE_COMPLETION_QUEUES.get();
    }

    /** One line with every counter, for assertion messages. */
    public static String describe() {
        return "soft providers=" + liveProviders() + ", memory regions=" + liveMemoryRegions()
            + ", allocated bytes=" + allocatedBytes() + ", queue pairs=" + liveQueuePairs()
            + ", completion queues=" + liveCompletionQueues();
    }
}
