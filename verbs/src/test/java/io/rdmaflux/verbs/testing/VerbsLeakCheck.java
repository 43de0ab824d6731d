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
 * or simply {@code @ExtendWith(NoLeaksExtension.class)} on the test class. {@link #assertNothingAdded()}
 * is the relative form, for a test that runs while resources opened before it (in {@code @BeforeAll})
 * stay open.
 *
 * <p>Threads: every thread rdmaflux starts is named {@code rdmaflux-*}; any such thread alive at the
 * end, or any other new non-daemon thread, is a stray. A thread that is still ending gets a grace
 * ({@link #graceMs()}): {@value #GRACE_MS} ms unless the system property {@value #GRACE_PROPERTY}
 * (milliseconds, 0 to {@value #MAX_GRACE_MS}) was set when the check began. The grace is fixed at
 * {@link #begin()}, so a test that must see a stray thread fail a check (the checks of a test class it
 * launches in-process) sets the property around that launch and restores it, and the checks already
 * running around it keep the default. A real leak costs the whole grace; a thread that ends costs only
 * its ending.
 *
 * <p>Thread-safety: a check is immutable once begun; the counts and threads it compares against are
 * global, so the checks of tests running in parallel would see each other's work.
 */
public final class VerbsLeakCheck {
    /** How long a stray-thread check waits for finishing threads unless {@value #GRACE_PROPERTY} says otherwise, in ms. */
    public static final long GRACE_MS = 10_000;

    /** System property (milliseconds) that replaces {@link #GRACE_MS} for the checks begun while it is set. */
    public static final String GRACE_PROPERTY = "rdmaflux.test.threadGraceMs";

    /** The largest grace {@value #GRACE_PROPERTY} accepts, in ms (a day): beyond it a leaking build just hangs. */
    public static final long MAX_GRACE_MS = 86_400_000;

    private final Set<Thread> threadsBefore;
    private final long[] softBefore;
    private final long graceMs;

    private VerbsLeakCheck(Set<Thread> threadsBefore, long[] softBefore, long graceMs) {
        this.threadsBefore = threadsBefore;
        this.softBefore = softBefore;
        this.graceMs = graceMs;
    }

    /**
     * Snapshots the live threads and the soft-provider resources, and reads the grace.
     *
     * @throws IllegalArgumentException if {@value #GRACE_PROPERTY} is set but is not a whole number of
     *     milliseconds from 0 to {@value #MAX_GRACE_MS}
     */
    public static VerbsLeakCheck begin() {
        long graceMs = graceMs(System.getProperty(GRACE_PROPERTY));
        return new VerbsLeakCheck(new HashSet<>(Thread.getAllStackTraces().keySet()), softCounts(), graceMs);
    }

    /** How long this check's stray-thread assertions wait for finishing threads, in ms. */
    public long graceMs() {
        return graceMs;
    }

    private static long graceMs(String property) {
        if (property == null) {
            return GRACE_MS;
        }
        long ms;
        try {
            ms = Long.parseLong(property.trim());
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms < 0 || ms > MAX_GRACE_MS) {
            throw new IllegalArgumentException(GRACE_PROPERTY + " must be a whole number of milliseconds from 0 to " + MAX_GRACE_MS
                + " but it was '" + property + "'; set it to e.g. 200, or clear it for the default " + GRACE_MS);
        }
        return ms;
    }

    /** Asserts nothing leaked: soft resources all released and no stray threads. */
    public void assertClean() {
        assertNoSoftLeaks();
        assertNoStrayThreads();
    }

    /**
     * Asserts nothing was added since {@link #begin()} and is still there: {@link #assertNoSoftResourcesAdded()}
     * and {@link #assertNoThreadsAdded()}.
     */
    public void assertNothingAdded() {
        assertNoSoftResourcesAdded();
        assertNoThreadsAdded();
    }

    /** Asserts no soft-provider resource count (providers, regions, bytes, QPs, CQs) is above its value at {@link #begin()}. */
    public void assertNoSoftResourcesAdded() {
        long[] now = softCounts();
        for (int i = 0; i < now.length; i++) {
            if (now[i] > softBefore[i]) {
                throw new AssertionError("soft provider resources leaked: " + SoftResources.describe() + " (before: "
                    + describe(softBefore) + ")");
            }
        }
    }

    /**
     * Asserts no thread started since {@link #begin()} is alive that is named {@code rdmaflux-*} or is
     * not a daemon, with the grace of {@link #assertNoStrayThreads()}.
     */
    public void assertNoThreadsAdded() {
        awaitNoStrays(true);
    }

    /** Whether the soft-provider resources are what they were at {@code other}'s {@link #begin()}. */
    public boolean softResourcesAsAt(VerbsLeakCheck other) {
        return java.util.Arrays.equals(softBefore, other.softBefore);
    }

    private static long[] softCounts() {
        return new long[] {SoftResources.liveProviders(), SoftResources.liveMemoryRegions(), SoftResources.allocatedBytes(),
            SoftResources.liveQueuePairs(), SoftResources.liveCompletionQueues()};
    }

    private static String describe(long[] c) {
        return "soft providers=" + c[0] + ", memory regions=" + c[1] + ", allocated bytes=" + c[2] + ", queue pairs=" + c[3]
            + ", completion queues=" + c[4];
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
     * {@link #graceMs()} ms to end; a real leak never ends and fails the check.
     */
    public void assertNoStrayThreads() {
        awaitNoStrays(false);
    }

    private void awaitNoStrays(boolean onlyNew) {
        long deadlineNs = System.nanoTime() + graceMs * 1_000_000L;
        List<Thread> stray = strays(onlyNew);
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
        stray = strays(onlyNew);
        if (!stray.isEmpty()) {
            List<String> names = new ArrayList<>();
            for (Thread t : stray) {
                names.add(t.getName() + (t.isDaemon() ? " (daemon)" : ""));
            }
            throw new AssertionError("stray threads still running after " + graceMs + " ms: " + names);
        }
    }

    /** {@code onlyNew}: threads alive at {@link #begin()} are not strays, rdmaflux's own included. */
    private List<Thread> strays(boolean onlyNew) {
        List<Thread> stray = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!t.isAlive() || t == Thread.currentThread()) {
                continue;
            }
            boolean isNew = !threadsBefore.contains(t);
            boolean ours = t.getName().startsWith("rdmaflux-") && (isNew || !onlyNew);
            boolean newNonDaemon = !t.isDaemon() && isNew;
            if (ours || newNonDaemon) {
                stray.add(t);
            }
        }
        return stray;
    }
}
