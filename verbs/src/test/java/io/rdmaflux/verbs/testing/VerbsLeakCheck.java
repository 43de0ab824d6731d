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

    /**
     * Asserts no thread named {@code rdmaflux-*} and no new non-daemon thread is alive. A thread that
     * is still finishing (its owner was closed, or it completed a future as its last act) gets up to
     * {@value #GRACE_MS} ms to end; a real leak never ends and fails the check.
     */
    public void assertNoStrayThreads() {
        long deadlineNs = System.nanoTime() + GRACE_MS * 1_000_000L;
        List<Thread> stray = strays();
        for (Thread t : stray) {
            long leftMs = (deadlineNs - System.nanoTime()) / 1_000_000L;
            if (leftMs <= 0) {
                break;
            }
            try {
                t.join(leftMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stray = strays();
        if (!stray.isEmpty()) {
            List<String> names = new ArrayList<>();
            for (Thread t : stray) {
                names.add(t.getName() + (t.isDaemon() ? " (daemon)" : ""));
            }
            throw new AssertionError("stray threads still running after " + GRACE_MS + " ms: " + names);
        }
    }

    /** How long {@link #assertNoStrayThreads()} waits for finishing threads, in ms. */
    public static final long GRACE_MS = 10_000;

    private List<Thread> strays() {
        List<Thread> stray = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!t.isAlive() || t == Thread.currentThread()) {
                continue;
            }
            boolean ours = t.getName().startsWith("rdmaflux-");
            boolean newNonDaemon = !t.isDaemon() && !threadsBefore.contains(t);
            if (ours || newNonDaemon) {
                stray.add(t);
            }
        }
        return stray;
    }
}
