package io.rdmaflux.core;

import java.lang.reflect.UndeclaredThrowableException;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The state behind {@link RdmaLeakReporter}'s static methods (an interface cannot hold a mutable field), and the
 * hand-off of a closing node's leaks to the installed reporter. Thread-safe.
 */
final class LeakReporters {
    private static final System.Logger LOG = System.getLogger(RdmaLeakReporter.class.getName());

    static final RdmaLeakReporter LOGGING = new RdmaLeakReporter() {
        @Override
        public void onLeak(Leak leak) {
            LOG.log(System.Logger.Level.WARNING, leak.toString());
        }

        @Override
        public String toString() {
            return "RdmaLeakReporter.logging()";
        }
    };

    static final AtomicReference<RdmaLeakReporter> INSTALLED = new AtomicReference<>(LOGGING);

    private LeakReporters() {
    }

    /**
     * Hands every leak to the installed reporter, even when a call throws: a reporter that fails on a
     * leak (a test harness's) must not hide the leaks of the connections after it. The first throwable
     * is rethrown once all were reported, with any later ones suppressed in it.
     */
    static void report(List<RdmaLeakReporter.Leak> leaks) {
        RdmaLeakReporter reporter = RdmaLeakReporter.installed();
        Throwable first = null;
        for (RdmaLeakReporter.Leak leak : leaks) {
            try {
                reporter.onLeak(leak);
            } catch (Throwable t) {
                if (first == null) {
                    first = t;
                } else if (first != t) {
                    first.addSuppressed(t);
                }
            }
        }
        if (first instanceof RuntimeException e) {
            throw e;
        }
        if (first instanceof Error e) {
            throw e;
        }
        if (first != null) {
            // a checked throwable thrown sneakily: onLeak declares none
            throw new UndeclaredThrowableException(first, "RdmaLeakReporter " + reporter + " threw " + first);
        }
    }
}
