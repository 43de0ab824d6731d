package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/** Host A and host B of a {@link DisniSoftFixture}, each with a PD and one CQ, and waits in virtual time. */
final class DisniTestSupport implements AutoCloseable {
    final DisniSoftFixture fx = new DisniSoftFixture();
    final Device da = fx.deviceA();
    final Device db = fx.deviceB();
    final ProtectionDomain pa = da.allocateProtectionDomain();
    final ProtectionDomain pb = db.allocateProtectionDomain();
    final CompletionQueue ca = da.createCompletionQueue(4096);
    final CompletionQueue cb = db.createCompletionQueue(4096);

    QueuePair qpA(UnaryOperator<QpInitAttributes.Builder> tweak) {
        return pa.createQueuePair(tweak.apply(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca)).build());
    }

    QueuePair qpB(UnaryOperator<QpInitAttributes.Builder> tweak) {
        return pb.createQueuePair(tweak.apply(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb)).build());
    }

    /** A connected pair (A active, B passive), established. */
    QueuePair[] connected() {
        QueuePair qa = qpA(UnaryOperator.identity());
        QueuePair qb = qpB(UnaryOperator.identity());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        runUntil(() -> ((DisniQueuePair) qa).connection().phase() == QpConnection.Phase.ESTABLISHED
            && ((DisniQueuePair) qb).connection().phase() == QpConnection.Phase.ESTABLISHED);
        return new QueuePair[] {qa, qb};
    }

    void runUntil(BooleanSupplier done) {
        for (int i = 0; i < 200_000; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (fx.progress() == 0) {
                fx.advanceNs(1_000);
            }
        }
        assertTrue(done.getAsBoolean(), "condition not reached in 200000 progress passes");
    }

    /** Runs {@code passes} progress passes, 1 µs apart. */
    void run(int passes) {
        for (int i = 0; i < passes; i++) {
            fx.progress();
            fx.advanceNs(1_000);
        }
    }

    List<WorkCompletion> await(CompletionQueue cq, int n) {
        List<WorkCompletion> out = new ArrayList<>();
        runUntil(() -> {
            cq.poll(n - out.size(), wc -> out.add(wc.copy()));
            return out.size() >= n;
        });
        return out;
    }

    @Override
    public void close() {
        fx.close();
        fx.assertNoLeaks();
    }
}
