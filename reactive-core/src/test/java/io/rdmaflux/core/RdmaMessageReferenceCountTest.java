package io.rdmaflux.core;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reference count: the final release is a release store, every other change a compare-and-set. */
class RdmaMessageReferenceCountTest {
    /** A message that counts its deallocations. */
    private static final class Counted extends RdmaMessage {
        final AtomicInteger deallocated = new AtomicInteger();

        @Override
        public int lengthBytes() {
            return 0;
        }

        @Override
        protected DirectBuffer view() {
            return new UnsafeBuffer(new byte[0]);
        }

        @Override
        protected void deallocate() {
            deallocated.incrementAndGet();
        }
    }

    @Test
    void theFinalReleaseDeallocatesOnceAndAnyLaterReleaseOrRetainThrowsNamingTheMessage() {
        Counted m = new Counted();
        m.retain();
        assertFalse(m.release());
        assertEquals(0, m.deallocated.get());
        assertTrue(m.release());
        assertEquals(1, m.deallocated.get());
        assertEquals(0, m.refCnt());
        IllegalReferenceCountException twice = assertThrows(IllegalReferenceCountException.class, m::release);
        assertTrue(twice.getMessage().contains("released twice"), twice.getMessage());
        assertThrows(IllegalReferenceCountException.class, m::retain);
        assertEquals(1, m.deallocated.get(), "a refused release deallocates nothing");
    }

    @Test
    void twoHoldersReleasingOnTwoThreadsAtOnceDeallocateExactlyOnce() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 2_000; round++) {
                Counted m = new Counted();
                m.retain();
                CountDownLatch start = new CountDownLatch(1);
                Future<Boolean> a = threads.submit(() -> {
                    start.await();
                    return m.release();
                });
                Future<Boolean> b = threads.submit(() -> {
                    start.await();
                    return m.release();
                });
                start.countDown();
                boolean lastA = a.get(30, TimeUnit.SECONDS);
                boolean lastB = b.get(30, TimeUnit.SECONDS);
                assertTrue(lastA ^ lastB, "exactly one release is the final one (round " + round + ")");
                assertEquals(1, m.deallocated.get(), "round " + round);
                assertEquals(0, m.refCnt());
            }
        } finally {
            threads.shutdown();
            assertTrue(threads.awaitTermination(30, TimeUnit.SECONDS), "no stray threads");
        }
    }
}
