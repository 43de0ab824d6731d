package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SoftProvider.Builder#threadPerDevice(boolean)} (seed 004's offload of chunk submission to idle cores): each
 * device's engine on a thread of its own, so a QP's requester and its peer's responder run on two threads. Real time
 * (the engine threads are real); the deadlines are generous and only bound a hang.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftThreadPerDeviceTest {
    private static final int MESSAGES = 4_000;
    private static final int WRITE_BYTES = 64 * 1024;

    private static Set<String> engineThreads(String provider) {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("rdmaflux-soft-" + provider))
            .collect(Collectors.toSet());
    }

    /** One direction: SEND_WITH_IMM of numbered messages and RDMA WRITEs of patterned blocks from {@code from} to {@code to}. */
    private static final class Flow {
        final QueuePair sq;
        final QueuePair rq;
        final CompletionQueue scq;
        final CompletionQueue rcq;
        final MemoryRegion src;
        final MemoryRegion dst;
        final MemoryRegion block;
        final MemoryRegion target;
        int sent;
        int sendsDone;
        int received;
        int writesDone;

        Flow(Device from, Device to) {
            ProtectionDomain pf = from.allocateProtectionDomain();
            ProtectionDomain pt = to.allocateProtectionDomain();
            scq = from.createCompletionQueue(2 * MESSAGES);
            rcq = to.createCompletionQueue(2 * MESSAGES);
            // real threads on a shared host: a transport timeout far above a descheduled engine thread's pause
            sq = pf.createQueuePair(QpInitAttributes.builder(QpType.RC, from.port(1)).cq(scq).maxSendWr(128)
                .retryTimeoutNs(500_000_000L).retryCount(7).build());
            rq = pt.createQueuePair(QpInitAttributes.builder(QpType.RC, to.port(1)).cq(rcq).maxReceiveWr(MESSAGES)
                .retryTimeoutNs(500_000_000L).retryCount(7).build());
            sq.connect(rq.localEndpoint());
            rq.connect(sq.localEndpoint());
            src = pf.allocateMemory(8, Access.LOCAL_WRITE);
            dst = pt.allocateMemory(8L * MESSAGES, Access.LOCAL_WRITE);
            block = pf.allocateMemory(WRITE_BYTES, Access.LOCAL_WRITE);
            target = pt.allocateMemory(WRITE_BYTES, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            for (int i = 0; i < WRITE_BYTES; i++) {
                block.buffer().put(i, (byte) (i * 31 + 7));
            }
            for (int i = 0; i < MESSAGES; i++) {
                assertTrue(rq.postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, 8L * i, 8)));
            }
        }

        /** Posts what the send queue takes; every 100th message is preceded by a 64 KiB WRITE. */
        void post(SendWorkRequest wr) {
            while (sent < MESSAGES) {
                if (sent % 100 == 0 && sent / 100 >= writesPosted()) {
                    wr.reset().wrId(1L << 40 | sent).opcode(WrOpcode.RDMA_WRITE).sge(block, 0, WRITE_BYTES).remoteAddress(target.address()).rkey(target.rkey());
                    if (!sq.postSend(wr)) {
                        return;
                    }
                    writes++;
                }
                wr.reset().wrId(sent).opcode(WrOpcode.SEND_WITH_IMM).sge(src, 0, 8).immediate(sent);
                if (!sq.postSend(wr)) {
                    return;
                }
                sent++;
            }
        }

        int writes;

        int writesPosted() {
            return writes;
        }

        void poll() {
            scq.poll(256, wc -> {
                assertTrue(wc.isSuccess(), wc::toString);
                if ((wc.wrId() & (1L << 40)) != 0) {
                    writesDone++;
                } else {
                    sendsDone++;
                }
            });
            rcq.poll(256, wc -> {
                assertTrue(wc.isSuccess(), wc::toString);
                assertEquals(received, wc.immediate(), "messages arrive in posting order");
                received++;
            });
        }

        boolean done() {
            return sendsDone == MESSAGES && received == MESSAGES && writesDone == writes;
        }
    }

    @Test
    void trafficBothWaysBetweenTwoDevicesOnTheirOwnThreadsLosesNothing() {
        try (SoftProvider p = SoftProvider.builder().name("perdev").fabric(SoftFabric.mem("perdev")).devices(2).threadPerDevice(true).build()) {
            assertEquals(2, engineThreads("perdev").size(), () -> "one engine thread per device: " + engineThreads("perdev"));
            Flow ab = new Flow(p.devices().get(0), p.devices().get(1));
            Flow ba = new Flow(p.devices().get(1), p.devices().get(0));
            SendWorkRequest wr = new SendWorkRequest();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!(ab.done() && ba.done()) && System.nanoTime() < deadline) {
                ab.post(wr);
                ba.post(wr);
                ab.poll();
                ba.poll();
                Thread.onSpinWait();
            }
            for (Flow f : new Flow[] {ab, ba}) {
                assertEquals(MESSAGES, f.received);
                assertEquals(MESSAGES, f.sendsDone);
                assertEquals(MESSAGES / 100, f.writesDone);
                for (int i = 0; i < WRITE_BYTES; i++) {
                    assertEquals((byte) (i * 31 + 7), f.target.buffer().get(i), "WRITE byte " + i);
                }
            }
        }
    }

    @Test
    void eachDeviceRunsOnAThreadOfItsOwnAndCloseStopsThemAll() throws InterruptedException {
        SoftProvider p = SoftProvider.builder().name("threads3").fabric(SoftFabric.mem("per-device-threads")).devices(3)
            .threadPerDevice(true).build();
        try {
            Set<String> names = engineThreads("threads3");
            assertEquals(3, names.size(), () -> "one engine thread per device: " + names);
            for (Device d : p.devices()) {
                assertTrue(names.contains("rdmaflux-soft-threads3-" + d.name()), () -> d.name() + " in " + names);
            }
        } finally {
            p.close();
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!engineThreads("threads3").isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5); // real threads stopping: no virtual clock reaches them
        }
        assertEquals(Set.of(), engineThreads("threads3"));
    }

    @Test
    void oneEngineThreadForEveryDeviceByDefault() {
        try (SoftProvider p = SoftProvider.builder().name("threads1").fabric(SoftFabric.mem("per-device-default")).devices(2).build()) {
            assertEquals(Set.of("rdmaflux-soft-threads1"), engineThreads("threads1"));
        }
    }

    @Test
    void oneIdleStrategyInstanceForSeveralEngineThreadsIsRefusedNamingTheFix() {
        VerbsException e = assertThrows(VerbsException.class, () -> SoftProvider.builder().name("bad").devices(2).threadPerDevice(true)
            .idleStrategy(new org.agrona.concurrent.BackoffIdleStrategy()).build());
        assertEquals("threadPerDevice(true) runs 2 engine threads, which cannot share the one idle strategy given to idleStrategy(..) "
            + "(it keeps per-thread state); give idleStrategies(() -> new ...) instead", e.getMessage());
        try (SoftProvider p = SoftProvider.builder().name("idles").fabric(SoftFabric.mem("per-device-idles")).devices(2).threadPerDevice(true)
            .idleStrategies(org.agrona.concurrent.BackoffIdleStrategy::new).build()) {
            assertEquals(2, engineThreads("idles").size());
        }
    }

    @Test
    void threadPerDeviceOnAnInvokerProviderIsRefusedNamingTheFix() {
        VerbsException e = assertThrows(VerbsException.class, () -> SoftProvider.builder().name("bad").devices(2)
            .threadingMode(ThreadingMode.INVOKER).threadPerDevice(true).build());
        assertEquals("threadPerDevice(true) needs DEDICATED threading but the provider is INVOKER: its caller's thread drives every "
            + "device; drop threadPerDevice or use threadingMode(DEDICATED)", e.getMessage());
    }
}
