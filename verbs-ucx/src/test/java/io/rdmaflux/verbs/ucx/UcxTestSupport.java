package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the UCX tests share: skipping where UCX cannot run ({@link #assumeUcx}, saying once per JVM
 * why and how to install it), the per-test checks ({@link Checks}), and two hosts with a connected
 * RC queue pair each ({@link UcxPair}).
 */
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

    /**
     * {@code @ExtendWith(UcxTestSupport.Checks.class)}: each test is skipped without UCX
     * ({@link #assumeUcx}) and fails if it leaves soft-provider resources or rdmaflux threads behind
     * ({@link VerbsLeakCheck}, begun after the assumption, asserted after the test's own {@code @AfterEach}).
     */
    static final class Checks implements BeforeEachCallback, AfterEachCallback {
        private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(Checks.class);

        @Override
        public void beforeEach(ExtensionContext context) {
            assumeUcx();
            context.getStore(NS).put("leaks", VerbsLeakCheck.begin());
        }

        @Override
        public void afterEach(ExtensionContext context) {
            VerbsLeakCheck leaks = context.getStore(NS).get("leaks", VerbsLeakCheck.class);
            if (leaks != null) {
                leaks.assertClean();
            }
        }
    }

    /**
     * Host A and host B, two INVOKER ucx providers on the real clock ({@link UcxFixture}), each with a
     * protection domain, a completion queue of {@value #CQ_DEPTH} entries and an RC queue pair on port 1,
     * the two connected to each other. The test thread is their engine: {@link #drive} runs passes of
     * both until a condition holds. Tests register their regions on {@link #pa}/{@link #pb}; everything
     * is released when the providers close. {@link #close} closes both hosts and asserts that nothing
     * opened since the pair was leaked. Extend it to add a test's regions and helpers.
     */
    static class UcxPair implements AutoCloseable {
        /** Completion queue entries on each host. */
        static final int CQ_DEPTH = 64;
        /** Engine passes (of both hosts) {@link #drive} runs at most before it gives up. */
        static final int PASSES = 2_000_000;

        final UcxFixture fx;
        final Device da;
        final Device db;
        final ProtectionDomain pa;
        final ProtectionDomain pb;
        final CompletionQueue ca;
        final CompletionQueue cb;
        final QueuePair qa;
        final QueuePair qb;

        /** Over the UCX transports {@code tls}, with {@code settings} applied to both providers' builders. */
        UcxPair(String tls, UnaryOperator<UcxProvider.Builder> settings) {
            fx = new UcxFixture(tls, settings);
            try {
                da = fx.deviceA();
                db = fx.deviceB();
                pa = da.allocateProtectionDomain();
                pb = db.allocateProtectionDomain();
                ca = da.createCompletionQueue(CQ_DEPTH);
                cb = db.createCompletionQueue(CQ_DEPTH);
                qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
                qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
                qa.connect(qb.localEndpoint());
                qb.connect(qa.localEndpoint());
            } catch (RuntimeException | Error e) {
                fx.close();
                throw e;
            }
        }

        /** Over {@code tls} with the providers' defaults. */
        static UcxPair open(String tls) {
            return new UcxPair(tls, b -> b);
        }

        /** Over {@code tls} with {@code settings} applied to both providers' builders. */
        static UcxPair open(String tls, UnaryOperator<UcxProvider.Builder> settings) {
            return new UcxPair(tls, settings);
        }

        UcxProvider hostA() {
            return fx.hostA();
        }

        UcxProvider hostB() {
            return fx.hostB();
        }

        /** One engine pass of both hosts. */
        void progress() {
            fx.progress();
        }

        /** {@code passes} engine passes of both hosts, whatever happens. */
        void drive(int passes) {
            for (int i = 0; i < passes; i++) {
                fx.progress();
            }
        }

        /** Engine passes of both hosts until {@code until} holds (checked before each); fails naming {@code what} after {@value #PASSES}. */
        void drive(BooleanSupplier until, String what) {
            for (int i = 0; i < PASSES; i++) {
                if (until.getAsBoolean()) {
                    return;
                }
                fx.progress();
            }
            throw new AssertionError("gave up waiting for " + what);
        }

        /** The next completion from {@code cq}, driving both hosts until it comes. */
        WorkCompletion next(CompletionQueue cq) {
            List<WorkCompletion> got = new ArrayList<>();
            drive(() -> {
                cq.poll(1, wc -> got.add(wc.copy()));
                return !got.isEmpty();
            }, "a completion on " + cq);
            return got.get(0);
        }

        /** Closes both hosts, then asserts nothing opened since this pair began is left ({@link UcxFixture#assertNoLeaks}). */
        @Override
        public void close() {
            fx.close();
            fx.assertNoLeaks();
        }
    }
}
