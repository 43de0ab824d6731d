package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * What one {@link SoftDevice} has open: its protection domains, completion queues, memory regions (in
 * the device's {@link SoftKeyTable}) and queue pairs, with the QPN each QP gets. QPs are published to
 * the engine's QP table ({@link DeviceEngine#qpTable}, {@link DeviceEngine#qpList}) by replacing the
 * arrays, so the engine reads them without a lock.
 *
 * <p><b>Concurrency:</b> thread-safe; changes are made under one setup lock, reads of the published
 * arrays take none.
 */
final class DeviceResources {
    private final SoftDevice device;
    private final DeviceEngine engine;
    private final SoftKeyTable keys;
    private final Object setupLock = new Object();
    private volatile SoftCompletionQueue[] cqList = new SoftCompletionQueue[0];
    private final Set<SoftProtectionDomain> pds = ConcurrentHashMap.newKeySet();

    DeviceResources(SoftDevice device, DeviceEngine engine, SoftKeyTable keys) {
        this.device = device;
        this.engine = engine;
        this.keys = keys;
    }

    SoftProtectionDomain allocateProtectionDomain() {
        SoftProtectionDomain pd = new SoftProtectionDomain(device);
        pds.add(pd);
        return pd;
    }

    void forget(SoftProtectionDomain pd) {
        pds.remove(pd);
    }

    SoftCompletionQueue createCompletionQueue(int capacity) {
        if (capacity < 1 || capacity > SoftDevice.CAPABILITIES.maxCqEntries()) {
            throw new VerbsException("CQ capacity must be in [1, " + SoftDevice.CAPABILITIES.maxCqEntries()
                + "] but it was " + capacity);
        }
        SoftCompletionQueue cq = new SoftCompletionQueue(device, capacity);
        synchronized (setupLock) {
            SoftCompletionQueue[] a = Arrays.copyOf(cqList, cqList.length + 1);
            a[a.length - 1] = cq;
            cqList = a;
        }
        SoftResources.LIVE_COMPLETION_QUEUES.incrementAndGet();
        return cq;
    }

    void removeCq(SoftCompletionQueue cq) {
        synchronized (setupLock) {
            cqList = Arrays.stream(cqList).filter(c -> c != cq).toArray(SoftCompletionQueue[]::new);
        }
    }

    SoftCompletionQueue[] completionQueues() {
        return cqList;
    }

    // ---------------------------------------------------------------- key table

    SoftMemoryRegion addRegion(SoftProtectionDomain pd, ByteBuffer base, int access, boolean allocated) {
        synchronized (setupLock) {
            return keys.add(pd, base, access, allocated);
        }
    }

    /** See {@link SoftDevice#removeRegion}. */
    CompletionStage<Void> removeRegion(SoftMemoryRegion mr, boolean async) {
        synchronized (setupLock) {
            keys.remove(mr);
        }
        FrameTransport.Attachment attachment = device.attachment();
        if (async) {
            return attachment.regionDeregisteredAsync(mr);
        }
        attachment.regionDeregistered(mr);
        return CompletableFuture.completedFuture(null);
    }

    // ---------------------------------------------------------------- QPs

    SoftQueuePair createQp(SoftProtectionDomain pd, QpInitAttributes a, @Nullable SoftSharedReceiveQueue srq) {
        synchronized (setupLock) {
            SoftQueuePair[] table = engine.qpTable;
            int qpn = -1;
            for (int i = 1; i < table.length; i++) {
                if (table[i] == null) {
                    qpn = i;
                    break;
                }
            }
            if (qpn < 0) {
                if (table.length > SoftDevice.CAPABILITIES.maxQueuePairs()) {
                    throw new VerbsException("device '" + device.name() + "' already has "
                        + SoftDevice.CAPABILITIES.maxQueuePairs() + " queue pairs; close some");
                }
                qpn = table.length;
                table = Arrays.copyOf(table, table.length * 2);
            }
            SoftQueuePair qp = new SoftQueuePair(device, pd, a, srq, qpn);
            table[qpn] = qp;
            engine.qpTable = table;
            SoftQueuePair[] list = Arrays.copyOf(engine.qpList, engine.qpList.length + 1);
            list[list.length - 1] = qp;
            engine.qpList = list;
            if (qp.type() == QpType.UD) {
                device.udQueuePairs++;
            }
            SoftResources.LIVE_QUEUE_PAIRS.incrementAndGet();
            return qp;
        }
    }

    void removeQp(SoftQueuePair qp) {
        if (qp.type() == QpType.RC && qp.route() != null) {
            engine.releaseRouteOf(qp);
        }
        synchronized (setupLock) {
            SoftQueuePair[] table = engine.qpTable;
            if (table[qp.qpn] == qp) {
                table[qp.qpn] = null;
                engine.qpTable = table;
            }
            int before = engine.qpList.length;
            engine.qpList = Arrays.stream(engine.qpList).filter(q -> q != qp).toArray(SoftQueuePair[]::new);
            if (engine.qpList.length < before && qp.type() == QpType.UD) {
                device.udQueuePairs--;
            }
        }
    }

    // ---------------------------------------------------------------- close

    /** Closes every protection domain (with its QPs and regions), then every completion queue. */
    void closeAll() {
        for (SoftProtectionDomain pd : new ArrayList<>(pds)) {
            pd.close();
        }
        for (SoftCompletionQueue cq : cqList) {
            cq.close();
        }
    }
}
