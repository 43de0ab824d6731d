package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.atomic.AtomicBoolean;

/** Skips UCX tests where UCX cannot run, saying once per JVM why and how to install it. */
final class UcxTestSupport {
    private static final AtomicBoolean SAID = new AtomicBoolean();

    private UcxTestSupport() {
    }

    /** A JUnit assumption: the calling test (or class, from {@code @BeforeAll}) is skipped without UCX. */
    static void assumeUcx() {
        var reason = UcxLibrary.unavailableReason();
        if (reason.isPresent() && SAID.compareAndSet(false, true)) {
            System.err.println("[verbs-ucx] UCX tests SKIPPED: " + reason.get());
        }
        assumeTrue(reason.isEmpty(), () -> "UCX unavailable: " + reason.get());
    }
}
