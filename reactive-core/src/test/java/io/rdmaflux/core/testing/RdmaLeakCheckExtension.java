package io.rdmaflux.core.testing;

import io.rdmaflux.core.RdmaLeakReporter;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

/**
 * JUnit 5 extension that fails a test which leaves anything behind: received messages the test never
 * released (reported by {@code RdmaNode.close()} to the {@link RdmaLeakReporter}), soft-provider
 * resources (providers, memory regions, off-heap bytes, QPs, CQs) or threads (named {@code rdmaflux-*},
 * or not daemons) that it started. Registered for every test class of a module by JUnit's extension
 * autodetection ({@code META-INF/services/org.junit.jupiter.api.extension.Extension} naming this class,
 * and {@code junit.jupiter.extensions.autodetection.enabled=true} in {@code junit-platform.properties}),
 * so no test needs an annotation and none can forget it.
 *
 * <p>For each class a {@link LeakRecorder} is installed as the reporter ({@code @BeforeAll} time) and
 * the previous one put back after the class. After each test, run after the test's own
 * {@code @AfterEach} methods: no leak reported during the test, and nothing added since the test
 * began ({@link VerbsLeakCheck#assertNothingAdded()}: a thread that is still ending gets a bounded
 * grace, {@link VerbsLeakCheck#graceMs()}). When the test began with soft-provider resources open that its class opened before it (nodes
 * shared by all its tests, which allocate and free some resources lazily and on their own threads),
 * only its threads are checked then. After the class: no leak reported outside its tests (in
 * {@code @BeforeAll} or {@code @AfterAll}) and nothing added since the class began, so resources a
 * class opens for all its tests are checked once it closed them. A test that leaks on purpose installs its own reporter
 * around the leak; the extension installs its recorder again after the test.
 *
 * <p>Tests of one JVM must not run in parallel: the reporter and the resource counts are global.
 */
public final class RdmaLeakCheckExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RdmaLeakCheckExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        LeakRecorder recorder = new LeakRecorder();
        ExtensionContext.Store store = context.getStore(NS);
        store.put("previous", RdmaLeakReporter.install(recorder));
        store.put("recorder", recorder);
        store.put("outsideTests", new ArrayList<RdmaLeakReporter.Leak>());
        store.put("classCheck", VerbsLeakCheck.begin());
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        // a test's store sees the values its class put in its own
        ExtensionContext.Store store = context.getStore(NS);
        LeakRecorder recorder = store.get("recorder", LeakRecorder.class);
        if (recorder != null) {
            outsideTests(store).addAll(recorder.drain());
            RdmaLeakReporter.install(recorder);
        }
        VerbsLeakCheck testCheck = VerbsLeakCheck.begin();
        store.put("testCheck", testCheck);
        VerbsLeakCheck classCheck = store.get("classCheck", VerbsLeakCheck.class);
        // resources the class keeps open for all its tests (nodes made in @BeforeAll) allocate and free
        // some of theirs lazily and on their own threads: the class check covers them once they are closed
        store.put("testChecksSoft", classCheck == null || testCheck.softResourcesAsAt(classCheck));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        ExtensionContext.Store store = context.getStore(NS);
        LeakRecorder recorder = store.get("recorder", LeakRecorder.class);
        List<RdmaLeakReporter.Leak> leaks = List.of();
        if (recorder != null) {
            leaks = recorder.drain();
            RdmaLeakReporter.install(recorder);
        }
        fail(leaks, "this test", store.get("testCheck", VerbsLeakCheck.class), Boolean.TRUE.equals(store.get("testChecksSoft")));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        ExtensionContext.Store store = context.getStore(NS);
        LeakRecorder recorder = store.get("recorder", LeakRecorder.class);
        List<RdmaLeakReporter.Leak> leaks = new ArrayList<>(outsideTests(store));
        if (recorder != null) {
            leaks.addAll(recorder.drain());
        }
        RdmaLeakReporter previous = store.get("previous", RdmaLeakReporter.class);
        if (previous != null) {
            RdmaLeakReporter.install(previous);
        }
        fail(leaks, "@BeforeAll/@AfterAll of " + context.getDisplayName(), store.get("classCheck", VerbsLeakCheck.class), true);
    }

    /** Throws one error for everything found: the leaks, with a failed resource or thread check suppressed in it. */
    private static void fail(List<RdmaLeakReporter.Leak> leaks, String where, VerbsLeakCheck check, boolean soft) {
        AssertionError leakError = null;
        if (!leaks.isEmpty()) {
            StringBuilder sb = new StringBuilder().append(leaks.size()).append(" message leak")
                .append(leaks.size() == 1 ? "" : "s").append(" reported in ").append(where).append(':');
            for (RdmaLeakReporter.Leak leak : leaks) {
                sb.append("\n  ").append(leak);
            }
            leakError = new AssertionError(sb.toString());
        }
        try {
            if (check != null) {
                if (soft) {
                    check.assertNoSoftResourcesAdded();
                }
                check.assertNoThreadsAdded();
            }
        } catch (AssertionError resources) {
            if (leakError == null) {
                throw resources;
            }
            leakError.addSuppressed(resources);
        }
        if (leakError != null) {
            throw leakError;
        }
    }

    @SuppressWarnings("unchecked")
    private static List<RdmaLeakReporter.Leak> outsideTests(ExtensionContext.Store store) {
        List<RdmaLeakReporter.Leak> list = store.get("outsideTests", List.class);
        return list != null ? list : new ArrayList<>();
    }
}
