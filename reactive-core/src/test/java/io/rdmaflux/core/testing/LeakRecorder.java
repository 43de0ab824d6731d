package io.rdmaflux.core.testing;

import io.rdmaflux.core.RdmaLeakReporter;

import java.util.ArrayList;
import java.util.List;

/**
 * An {@link RdmaLeakReporter} that keeps every {@link RdmaLeakReporter.Leak} reported to it, for a
 * test to assert on. Thread-safe: nodes report on whichever thread closes them.
 *
 * <pre>{@code
 * LeakRecorder recorder = new LeakRecorder();
 * RdmaLeakReporter previous = RdmaLeakReporter.install(recorder);
 * try { ... node.close(); } finally { RdmaLeakReporter.install(previous); }
 * assertEquals(1, recorder.leaks().size());
 * }</pre>
 */
public final class LeakRecorder implements RdmaLeakReporter {
    private final List<Leak> leaks = new ArrayList<>();

    @Override
    public synchronized void onLeak(Leak leak) {
        leaks.add(leak);
    }

    /** A copy of the leaks reported so far. */
    public synchronized List<Leak> leaks() {
        return List.copyOf(leaks);
    }

    /** The leaks reported so far, which are forgotten. */
    public synchronized List<Leak> drain() {
        List<Leak> out = List.copyOf(leaks);
        leaks.clear();
        return out;
    }

    @Override
    public String toString() {
        return "LeakRecorder" + leaks();
    }
}
