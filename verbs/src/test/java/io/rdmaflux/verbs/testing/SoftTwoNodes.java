package io.rdmaflux.verbs.testing;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VirtualClock;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * Two soft providers ("hosts" {@code a} and {@code b}) on one private in-JVM fabric, sharing one
 * {@link VirtualClock}, in INVOKER mode: deterministic, no threads. Each host has
 * {@code portsPerDevice} ports (rails) with the given rail model.
 *
 * <pre>{@code
 * try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
 *     // nodes.a(), nodes.b() are SoftProviders; drive both with nodes.progress() or nodes.runUntil(..)
 * }
 * }</pre>
 */
public final class SoftTwoNodes implements AutoCloseable {
    private static int counter;

    private final VirtualClock clock = new VirtualClock();
    private final SoftFabric fabric;
    private final SoftProvider a;
    private final SoftProvider b;

    private SoftTwoNodes(int portsPerDevice, RailConfig rail, UnaryOperator<SoftProvider.Builder> customizer) {
        int n;
        synchronized (SoftTwoNodes.class) {
            n = counter++;
        }
        fabric = SoftFabric.mem("two-nodes-" + n);
        a = customizer.apply(SoftProvider.builder().name("a" + n).fabric(fabric).clock(clock).threadingMode(ThreadingMode.INVOKER)
            .portsPerDevice(portsPerDevice).rail(rail)).build();
        b = customizer.apply(SoftProvider.builder().name("b" + n).fabric(fabric).clock(clock).threadingMode(ThreadingMode.INVOKER)
            .portsPerDevice(portsPerDevice).rail(rail)).build();
    }

    /** One unshaped port per host. */
    public static SoftTwoNodes create() {
        return new SoftTwoNodes(1, RailConfig.UNSHAPED, UnaryOperator.identity());
    }

    /** {@code portsPerDevice} ports per host, all with {@code rail}. */
    public static SoftTwoNodes create(int portsPerDevice, RailConfig rail) {
        return new SoftTwoNodes(portsPerDevice, rail, UnaryOperator.identity());
    }

    /** As {@link #create(int, RailConfig)}, with further builder settings applied to both providers. */
    public static SoftTwoNodes create(int portsPerDevice, RailConfig rail, UnaryOperator<SoftProvider.Builder> customizer) {
        return new SoftTwoNodes(portsPerDevice, rail, customizer);
    }

    public VirtualClock clock() {
        return clock;
    }

    public SoftFabric fabric() {
        return fabric;
    }

    public SoftProvider a() {
        return a;
    }

    public SoftProvider b() {
        return b;
    }

    /** One progress pass of both hosts at the clock's current time; returns the work done. */
    public int progress() {
        long now = clock.nanoTime();
        return a.progress(now) + b.progress(now);
    }

    /**
     * Runs progress passes until {@code done} holds, advancing the clock by {@code stepNs} after each
     * idle pass.
     *
     * @throws AssertionError when {@code done} still fails after {@code maxPasses}
     */
    public void runUntil(BooleanSupplier done, long stepNs, int maxPasses) {
        for (int i = 0; i < maxPasses; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (progress() == 0 && stepNs > 0) {
                clock.advance(stepNs);
            }
        }
        if (!done.getAsBoolean()) {
            throw new AssertionError("condition not reached after " + maxPasses + " progress passes (virtual time "
                + clock.nanoTime() + " ns)");
        }
    }

    /** Polls {@code cq} (driving progress, 1 µs virtual steps) until {@code count} completions arrived; returns copies. */
    public List<WorkCompletion> awaitCompletions(CompletionQueue cq, int count) {
        List<WorkCompletion> out = new ArrayList<>();
        runUntil(() -> {
            cq.poll(count - out.size(), wc -> out.add(wc.copy()));
            return out.size() >= count;
        }, 1_000, 1_000_000);
        return out;
    }

    /** Creates RC QPs on both hosts' first port (one CQ per side for send and receive) and connects them. */
    public static QueuePair[] connectRc(QueuePair qa, QueuePair qb) {
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        return new QueuePair[] {qa, qb};
    }

    /** Attributes for an RC QP on {@code provider}'s first device, port 1, using {@code cq} for both queues. */
    public static QpInitAttributes.Builder rc(SoftProvider provider, CompletionQueue cq) {
        return QpInitAttributes.builder(QpType.RC, provider.devices().get(0).port(1)).cq(cq);
    }

    /** Closes both providers (everything they allocated goes with them). */
    @Override
    public void close() {
        a.close();
        b.close();
    }
}
