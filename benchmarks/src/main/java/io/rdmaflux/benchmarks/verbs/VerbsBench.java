package io.rdmaflux.benchmarks.verbs;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.lang.reflect.Field;
import sun.misc.Unsafe;

/**
 * Shared setup of the verbs benchmarks: one soft provider in INVOKER mode with two devices (two
 * NICs on a private in-JVM fabric), an RC QP pair between them, one CQ per side. The benchmark
 * thread drives {@link #progress()} itself, so a figure measures the provider's work, not thread
 * hand-off.
 */
final class VerbsBench implements AutoCloseable {
    static final Unsafe UNSAFE;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SoftProvider provider;
    final Device da;
    final Device db;
    final ProtectionDomain pa;
    final ProtectionDomain pb;
    final CompletionQueue ca;
    final CompletionQueue cb;
    final QueuePair qa;
    final QueuePair qb;

    VerbsBench(int queueDepth) {
        this(queueDepth, ThreadingMode.INVOKER);
    }

    /**
     * @param mode INVOKER: the benchmark thread runs the NICs' engines in {@link #progress()};
     *     DEDICATED: the provider's own thread runs them, in parallel with the benchmark thread
     *     (as a NIC works beside the CPU), and {@link #progress()} does nothing
     */
    VerbsBench(int queueDepth, ThreadingMode mode) {
        this(queueDepth, mode, false);
    }

    /** @param threadDomain post without the QP post lock (one posting thread per QP, as here) */
    VerbsBench(int queueDepth, ThreadingMode mode, boolean threadDomain) {
        provider = SoftProvider.builder().name("bench").fabric(SoftFabric.mem("bench")).devices(2)
            .threadingMode(mode).threadDomain(threadDomain).idleStrategy(new org.agrona.concurrent.BusySpinIdleStrategy()).build();
        da = provider.devices().get(0);
        db = provider.devices().get(1);
        pa = da.allocateProtectionDomain();
        pb = db.allocateProtectionDomain();
        ca = da.createCompletionQueue(queueDepth * 2);
        cb = db.createCompletionQueue(queueDepth * 2);
        qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca)
            .maxSendWr(queueDepth).maxReceiveWr(queueDepth).build());
        qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb)
            .maxSendWr(queueDepth).maxReceiveWr(queueDepth).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
    }

    int progress() {
        return provider.threadingMode() == ThreadingMode.INVOKER ? provider.progress(0) : 0;
    }

    @Override
    public void close() {
        provider.close();
    }
}
