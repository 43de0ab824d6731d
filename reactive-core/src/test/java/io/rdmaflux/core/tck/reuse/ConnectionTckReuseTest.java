package io.rdmaflux.core.tck.reuse;

import org.junit.jupiter.api.Test;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * The Connection TCK works when subclassed from another package (as from another module, through the
 * module's test-jar): JUnit finds every test of {@code ConnectionTck} in the subclass, package-private
 * test methods and their {@code @MethodSource} factories included, and they run.
 */
class ConnectionTckReuseTest {
    private static final String IN_PACKAGE_SUITE = "io.rdmaflux.core.tck.ConnectionTckMemInvokerTest";

    @Test
    void aSubclassInAnotherPackageFindsAndRunsEveryTest() throws ClassNotFoundException {
        Launcher launcher = LauncherFactory.create();
        long outside = tests(launcher, request().selectors(selectClass(OutOfPackageSuite.class)).build());
        long inside = tests(launcher, request().selectors(selectClass(Class.forName(IN_PACKAGE_SUITE))).build());
        assertTrue(inside > 0, "the in-package suite has tests");
        assertEquals(inside, outside, "the same test methods from another package");

        // a @MethodSource test and a @ValueSource one, run for real
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request().selectors(
            selectMethod(OutOfPackageSuite.class, "aPublisherErrorFailsItsSendWithThatErrorAfterTheMessagesBeforeIt", "int, int"),
            selectMethod(OutOfPackageSuite.class, "subchannelsAreImmutableSnapshotsOnePerRail", "int")).build(), listener);
        TestExecutionSummary summary = listener.getSummary();
        assertEquals(0, summary.getTotalFailureCount(), () -> summary.getFailures().toString());
        assertEquals(5, summary.getTestsSucceededCount(), "3 + 2 invocations succeed");
    }

    private static long tests(Launcher launcher, LauncherDiscoveryRequest request) {
        TestPlan plan = launcher.discover(request);
        // a test method is a test, or a container of invocations when parameterized; either has a method source
        return plan.getRoots().stream().mapToLong(root -> plan.getDescendants(root).stream()
            .filter(id -> id.getSource().filter(MethodSource.class::isInstance).isPresent()).count()).sum();
    }
}
