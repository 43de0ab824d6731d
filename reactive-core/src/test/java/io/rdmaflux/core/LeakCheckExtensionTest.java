package io.rdmaflux.core;

import io.rdmaflux.core.testing.RdmaLeakCheckExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherFactory;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * {@link RdmaLeakCheckExtension} fails the tests that leak: each case is a small test class run here by
 * an in-process JUnit launcher, as surefire would run it, with no annotation (the extension comes from
 * this module's autodetection registration). The cases run only when launched from here.
 *
 * <p>The stray-thread cases launch with a {@value #SHORT_GRACE_MS} ms grace ({@link VerbsLeakCheck#GRACE_PROPERTY})
 * so a stray costs that, not 10 s; their threads wait on {@link #release}, which the outer test opens after
 * the launch and then joins them, so none outlives it.
 */
class LeakCheckExtensionTest {
    private static final long SHORT_GRACE_MS = 200;

    private static volatile boolean launchedHere;
    private static volatile SoftTwoNodes leftOpen;
    private static volatile CountDownLatch release;
    private static volatile Thread started;

    @Test
    void theExtensionIsRegisteredForAutodetection() {
        List<Class<?>> registered = new ArrayList<>();
        ServiceLoader.load(org.junit.jupiter.api.extension.Extension.class).stream().forEach(p -> registered.add(p.type()));
        assertTrue(registered.contains(RdmaLeakCheckExtension.class), registered.toString());
    }

    @Test
    void aTestWhoseSubscriberNeverReleasesItsMessagesFailsNamingTheLeak() {
        Map<String, TestExecutionResult> results = launch(NeverReleases.class);

        Throwable failure = failureOf(results, "subscriberKeepsEveryMessage()");
        String message = failure.getMessage();
        assertInstanceOf(AssertionError.class, failure);
        assertTrue(message.startsWith("1 message leak reported in this test:"), message);
        assertTrue(message.contains("LEAK: 2 received messages were not released") && message.contains("server/conn")
            && message.contains("RdmaMessage{psn="), message);
    }

    @Test
    void aTestThatReleasesEveryMessagePasses() {
        Map<String, TestExecutionResult> results = launch(ReleasesEverything.class);

        assertEquals(TestExecutionResult.Status.SUCCESSFUL, results.get("subscriberReleasesEveryMessage()").getStatus(), results.toString());
    }

    @Test
    void aTestThatLeavesASoftProviderOpenFails() {
        try {
            Map<String, TestExecutionResult> results = launch(LeavesProvidersOpen.class);

            String message = failureOf(results, "providersNeverClosed()").getMessage();
            assertTrue(message.startsWith("soft provider resources leaked: soft providers="), message);
        } finally {
            SoftTwoNodes open = leftOpen;
            assertNotNull(open, "the case ran");
            open.close();
        }
    }

    @Test
    void aClassThatLeaksOutsideItsTestsFailsAfterItsTests() {
        Map<String, TestExecutionResult> results = launch(LeaksInAfterAll.class);

        assertEquals(TestExecutionResult.Status.SUCCESSFUL, results.get("receivesAndKeepsOneMessage()").getStatus(), results.toString());
        String message = failureOf(results, "LeakCheckExtensionTest$LeaksInAfterAll").getMessage();
        assertTrue(message.startsWith("1 message leak reported in @BeforeAll/@AfterAll of LeakCheckExtensionTest$LeaksInAfterAll:"), message);
        assertTrue(message.contains("LEAK: 1 received message was not released"), message);
    }

    @Test
    void aTestThatLeavesAnRdmafluxThreadRunningFailsNamingIt() throws InterruptedException {
        Map<String, TestExecutionResult> results = launchWithThread(LeavesRdmafluxThreadRunning.class, SHORT_GRACE_MS);

        Throwable failure = failureOf(results, "startsAThreadThatOutlivesIt()");
        assertInstanceOf(AssertionError.class, failure);
        assertEquals("stray threads still running after 200 ms: [rdmaflux-stray-case (daemon)]", failure.getMessage());
        // still alive when its class ends, so the class's own check reports it too
        String classFailure = failureOf(results, "LeakCheckExtensionTest$LeavesRdmafluxThreadRunning").getMessage();
        assertEquals("stray threads still running after 200 ms: [rdmaflux-stray-case (daemon)]", classFailure);
    }

    @Test
    void aTestWhoseThreadEndsWithinTheGracePasses() throws InterruptedException {
        // the grace bounds the wait and a thread that ends costs only its ending, so the default grace
        // keeps this case from depending on how fast a loaded machine schedules the released thread
        Map<String, TestExecutionResult> results = launchWithThread(ThreadEndsAfterTheTest.class, VerbsLeakCheck.GRACE_MS);

        assertEquals(TestExecutionResult.Status.SUCCESSFUL, results.get("startsAThreadReleasedByAfterEach()").getStatus(),
            results.toString());
        assertEquals(TestExecutionResult.Status.SUCCESSFUL, results.get("LeakCheckExtensionTest$ThreadEndsAfterTheTest").getStatus(),
            results.toString());
    }

    @Test
    void aTestThatLeavesANonDaemonThreadRunningFailsNamingIt() throws InterruptedException {
        Map<String, TestExecutionResult> results = launchWithThread(LeavesNonDaemonThreadRunning.class, SHORT_GRACE_MS);

        Throwable failure = failureOf(results, "startsANonDaemonThreadThatOutlivesIt()");
        assertInstanceOf(AssertionError.class, failure);
        assertEquals("stray threads still running after 200 ms: [leak-check-case-non-daemon]", failure.getMessage());
    }

    /**
     * {@link #launch} with the checks' grace set to {@code graceMs} and restored after; then opens
     * {@link #release} and joins the thread the case started, whatever the launch did.
     */
    private static Map<String, TestExecutionResult> launchWithThread(Class<?> testClass, long graceMs) throws InterruptedException {
        release = new CountDownLatch(1);
        started = null;
        String graceBefore = System.getProperty(VerbsLeakCheck.GRACE_PROPERTY);
        System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, Long.toString(graceMs));
        try {
            return launch(testClass);
        } finally {
            if (graceBefore == null) {
                System.clearProperty(VerbsLeakCheck.GRACE_PROPERTY);
            } else {
                System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, graceBefore);
            }
            release.countDown();
            Thread t = started;
            assertNotNull(t, "the case ran");
            t.join();
        }
    }

    /** Starts a thread that runs until {@link #release} opens and records it in {@link #started}. */
    private static void startThread(String name, boolean daemon) {
        CountDownLatch latch = release;
        Thread t = new Thread(() -> {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
        t.setDaemon(daemon);
        started = t;
        t.start();
    }

    /** Runs {@code testClass} like surefire does; the results by display name. Checks the reporter is put back. */
    private static Map<String, TestExecutionResult> launch(Class<?> testClass) {
        RdmaLeakReporter before = RdmaLeakReporter.installed();
        Map<String, TestExecutionResult> results = new LinkedHashMap<>();
        Launcher launcher = LauncherFactory.create();
        launchedHere = true;
        try {
            launcher.execute(request().selectors(selectClass(testClass)).build(), new TestExecutionListener() {
                @Override
                public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                    results.put(id.getDisplayName(), result);
                }
            });
        } finally {
            launchedHere = false;
        }
        assertSame(before, RdmaLeakReporter.installed(), "the extension puts the reporter back after the class");
        return results;
    }

    private static Throwable failureOf(Map<String, TestExecutionResult> results, String displayName) {
        TestExecutionResult result = results.get(displayName);
        assertNotNull(result, displayName + " did not run: " + results);
        assertEquals(TestExecutionResult.Status.FAILED, result.getStatus(), displayName + ": " + result);
        return result.getThrowable().orElseThrow();
    }

    private static List<RdmaMessage> receive(InvokerPair p, int n, boolean release) {
        List<RdmaMessage> kept = new ArrayList<>();
        int[] received = {0};
        p.server.receive().subscribe(m -> {
            received[0]++;
            if (release) {
                m.release();
            } else {
                kept.add(m);
            }
        });
        SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of("m" + i))));
        p.runUntil(() -> sent.completed() && received[0] == n);
        return kept;
    }

    static class NeverReleases {
        @Test
        void subscriberKeepsEveryMessage() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            try (InvokerPair p = InvokerPair.open()) {
                receive(p, 2, false);
            }
        }
    }

    static class ReleasesEverything {
        @Test
        void subscriberReleasesEveryMessage() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            try (InvokerPair p = InvokerPair.open()) {
                receive(p, 2, true);
            }
        }
    }

    static class LeavesProvidersOpen {
        @Test
        void providersNeverClosed() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            leftOpen = SoftTwoNodes.create();
        }
    }

    static class LeaksInAfterAll {
        private static InvokerPair pair;

        @BeforeAll
        static void open() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            pair = InvokerPair.open();
        }

        @Test
        void receivesAndKeepsOneMessage() {
            receive(pair, 1, false);
        }

        @AfterAll
        static void close() {
            if (pair != null) {
                pair.close();
            }
        }
    }

    static class LeavesRdmafluxThreadRunning {
        @Test
        void startsAThreadThatOutlivesIt() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            // a daemon: the rdmaflux- name alone makes it a stray
            startThread("rdmaflux-stray-case", true);
        }
    }

    static class ThreadEndsAfterTheTest {
        @Test
        void startsAThreadReleasedByAfterEach() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            startThread("rdmaflux-ending-case", true);
        }

        @AfterEach
        void releaseIt() {
            // runs before the extension's check, which then finds the thread ending
            CountDownLatch latch = release;
            if (latch != null) {
                latch.countDown();
            }
        }
    }

    static class LeavesNonDaemonThreadRunning {
        @Test
        void startsANonDaemonThreadThatOutlivesIt() {
            Assumptions.assumeTrue(launchedHere, "a case of LeakCheckExtensionTest");
            startThread("leak-check-case-non-daemon", false);
        }
    }
}
