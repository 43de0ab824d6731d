package io.rdmaflux.core;

import java.util.concurrent.atomic.AtomicReference;

/** The state behind {@link RdmaLeakReporter}'s static methods (an interface cannot hold a mutable field). */
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
}
