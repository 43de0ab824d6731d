package io.rdmaflux.verbs.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The atomics cases of the {@link ProviderTck} (ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP), kept apart
 * so the suite's class stays one screenful per topic; each {@code ProviderTck} test of atomics runs one
 * of these on the test's fixture. The remote word is read and written in native byte order, as the
 * soft provider defines it.
 */
final class AtomicCases {
    private static final int ATOMIC_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_ATOMIC;

    private final ProviderTck t;

    AtomicCases(ProviderTck t) {
        this.t = t;
    }

    private static long word(MemoryRegion mr, long offset) {
        return mr.buffer().order(ByteOrder.nativeOrder()).getLong((int) offset);
    }

    private static void setWord(MemoryRegion mr, long offset, long value) {
        mr.buffer().order(ByteOrder.nativeOrder()).putLong((int) offset, value);
    }

    /** Two QPs of host A add to one word of host B at once: the word ends at the exact sum, every original value is distinct. */
    void fetchAndAddFromTwoQueuePairsGivesTheExactSum() {
        int n = 300;
        QueuePair[] one = t.rcPair();
        QueuePair[] two = t.rcPair();
        MemoryRegion results = t.a.pd.allocateMemory(2L * n * 8, Access.LOCAL_WRITE);
        MemoryRegion counter = t.b.pd.allocateMemory(64, ATOMIC_ACCESS);
        setWord(counter, 8, 0);
        long[] deltas = {1, 1_000_000};
        QueuePair[] requesters = {one[0], two[0]};
        int[] posted = new int[2];
        int[] completed = {0};
        Set<Long> originals = new HashSet<>();
        SendWorkRequest wr = new SendWorkRequest();
        t.runUntil(() -> {
            for (int q = 0; q < 2; q++) {
                while (posted[q] < n) {
                    int k = q * n + posted[q];
                    wr.reset().wrId(k).fetchAndAdd(counter.address() + 8, counter.rkey(), deltas[q], results, 8L * k);
                    if (!requesters[q].postSend(wr)) {
                        break;
                    }
                    posted[q]++;
                }
            }
            t.a.cq.poll(256, wc -> {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(WcOpcode.FETCH_ADD, wc.opcode());
                assertEquals(8, wc.byteLength());
                originals.add(word(results, 8L * wc.wrId()));
                completed[0]++;
            });
            return completed[0] == 2 * n;
        });
        assertEquals(n * deltas[0] + n * deltas[1], word(counter, 8));
        assertEquals(2 * n, originals.size(), "each fetch-and-add saw a different original value");
        assertEquals(0, word(counter, 0), "the neighbouring words are untouched");
        assertEquals(0, word(counter, 16));
    }

    /** CAS replaces the word when it matches and returns the old value either way. */
    void compareAndSwapReturnsTheOldValueOnSuccessAndFailure() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(16, Access.LOCAL_WRITE);
        MemoryRegion target = t.b.pd.allocateMemory(64, ATOMIC_ACCESS);
        setWord(target, 16, 5);
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(1).compareAndSwap(target.address() + 16, target.rkey(), 5, 9, result, 0)));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(2).compareAndSwap(target.address() + 16, target.rkey(), 5, 11, result, 8)));
        List<WorkCompletion> wcs = t.await(t.a.cq, 2);
        for (WorkCompletion wc : wcs) {
            assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            assertEquals(WcOpcode.COMP_SWAP, wc.opcode());
            assertEquals(8, wc.byteLength());
        }
        assertEquals(5, word(result, 0), "the swap that matched returns the old value");
        assertEquals(9, word(result, 8), "the swap that did not match returns the current value");
        assertEquals(9, word(target, 16), "only the matching swap stored");
    }

    void misalignedAtomicCompletesWithALocalErrorAndIsNotSent() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(8, Access.LOCAL_WRITE);
        MemoryRegion target = t.b.pd.allocateMemory(64, ATOMIC_ACCESS);
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(1).fetchAndAdd(target.address() + 4, target.rkey(), 1, result, 0)));
        WorkCompletion wc = t.await(t.a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_QP_OP_ERR, wc.status(), wc::toString);
        assertTrue(wc.detail().contains("8-byte aligned"), wc::detail);
        assertEquals(0, word(target, 0));
        assertEquals(0, word(target, 8));
    }

    void atomicWithAnSgeOtherThanEightBytesCompletesWithALengthError() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(16, Access.LOCAL_WRITE);
        MemoryRegion target = t.b.pd.allocateMemory(64, ATOMIC_ACCESS);
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).compareAdd(1)
            .sge(result, 0, 4).remoteAddress(target.address()).rkey(target.rkey())));
        WorkCompletion wc = t.await(t.a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_LEN_ERR, wc.status(), wc::toString);
        assertTrue(wc.detail().contains("one SGE of 8 bytes"), wc::detail);
        assertEquals(0, word(target, 0));
    }

    void atomicOutsideTheRegionFailsWithRemoteAccessError() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(8, Access.LOCAL_WRITE);
        MemoryRegion target = t.b.pd.allocateMemory(64, ATOMIC_ACCESS);
        remoteAccessError(qp[0], new SendWorkRequest().wrId(1).fetchAndAdd(target.address() + 64, target.rkey(), 1, result, 0));
    }

    void atomicWithoutRemoteAtomicAccessFailsWithRemoteAccessError() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(8, Access.LOCAL_WRITE);
        MemoryRegion target = t.b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
        setWord(target, 0, 42);
        remoteAccessError(qp[0], new SendWorkRequest().wrId(1).compareAndSwap(target.address(), target.rkey(), 42, 7, result, 0));
        assertEquals(42, word(target, 0), "the word is untouched");
    }

    void atomicOnADeregisteredRegionFailsWithRemoteAccessError() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(8, Access.LOCAL_WRITE);
        MemoryRegion target = t.b.pd.allocateMemory(64, ATOMIC_ACCESS);
        SendWorkRequest wr = new SendWorkRequest().wrId(1).fetchAndAdd(target.address(), target.rkey(), 1, result, 0);
        target.deregister();
        remoteAccessError(qp[0], wr);
    }

    void atomicsOnADeviceWithoutThemAreRefusedAtPost() {
        QueuePair[] qp = t.rcPair();
        MemoryRegion result = t.a.pd.allocateMemory(8, Access.LOCAL_WRITE);
        VerbsException e = assertThrows(VerbsException.class,
            () -> qp[0].postSend(new SendWorkRequest().wrId(1).fetchAndAdd(0, 1, 1, result, 0)));
        assertTrue(e.getMessage().contains("atomics"), e::getMessage);
    }

    private void remoteAccessError(QueuePair requester, SendWorkRequest wr) {
        assertTrue(requester.postSend(wr));
        WorkCompletion wc = t.await(t.a.cq, 1).get(0);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
        assertFalse(wc.detail().isEmpty(), "error completions say why");
        t.runUntil(() -> requester.state() == QpState.ERROR);
    }
}
