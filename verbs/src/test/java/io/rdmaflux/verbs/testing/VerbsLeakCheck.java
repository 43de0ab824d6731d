package io.rdmaflux.verbs.testing;

import io.rdmaflux.verbs.soft.SoftResources;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Leak and stray-thread assertions for tests of any module that runs on the soft provider.
 *
 * <pre>{@code
 * VerbsLeakCheck check = VerbsLeakCheck.begin();   // before the test
 * ... open providers, register memory, close everything ...
 * check.assertClean();                             // after: no regions, bytes, QPs, CQs, providers, threads
 * }</pre>
 * or simply {@code @ExtendWith(NoLeaksExtension.class)} on the test class.
 *
 * <p>Threads: every thread rdmaflux starts is named {@code rdmaflux-*}; any such thread alive at the
 * end, or any other new non-daemon thread, is a stray.
 */
public final class VerbsLeakCheck {
    private final Set<Thread> threadsBefore;

    private VerbsLeakCheck(Set<Thread> threadsBefore) {
        this.threadsBefore = threadsBefore;
    }

    /** Snapshots the live threads. */
    public static VerbsLeakCheck begin() {
        return new VerbsLeakCheck(new HashSet<>(Thread.getAllStackTraces().keySet()));
    }

    /** Asserts nothing leaked: soft resources all released and no stray threads. */
    public void assertClean() {
        assertNoSoftLeaks();
        assertNoStrayThreads();
    }

    /** Asserts every soft provider, memory region, allocated byte, QP and CQ is released. */
    public static void assertNoSoftLeaks() {
        if (SoftResources.liveProviders() != 0 || SoftResources.liveMemoryRegions() != 0 || SoftResources.allocatedBytes() != 0
            || SoftResources.liveQueuePairs() != 0 || SoftResources.liveCompletionQueues() != 0) {
            throw new AssertionError("soft provider resources leaked: " + SoftResources.describe());
        }
    }

    /** Asserts no thread named {@code rdmaflux-*} and no new non-daemon thread is alive. */
    public void assertNoStrayThreads() {
        List<String> stray = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!t.isAlive() || t == Thread.currentThread()) {
                continue;
            }
            boolean ours = t.getName().startsWith("rdmaflux-");
            boolean newNonDaemon = !t.isDaemon() && !threadsBefore.contains(t);
            if (ours || newNonDaemon) {
                stray.add(t.getName() + (t.isDaemon() ? " (daemon)" : ""));
            }
        }
        if (!stray.isEmpty()) {
            throw new AssertionError("stray threads still running: " + stray);
        }
    }
}
