package io.rdmaflux.core.internal.buffer;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MessageBufferPoolTest {
    @Test
    void slotsAreHandedOutOnceUntilReleasedAndDoubleFreesThrow() {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        try (RdmaProvider provider = SoftProvider.builder().threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER).build();
             ProtectionDomain pd = provider.devices().get(0).allocateProtectionDomain()) {
            MessageBufferPool pool = new MessageBufferPool("test", pd, 4096, 64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            Set<Integer> slots = new HashSet<>();
            for (int i = 0; i < 64; i++) {
                int s = pool.acquire();
                assertTrue(slots.add(s), "slot " + s + " handed out twice");
                assertEquals(pool.address(0) + (long) s * 4096, pool.address(s));
            }
            assertEquals(-1, pool.acquire());
            assertEquals(64, pool.inUse());
            pool.release(17);
            assertEquals(17, pool.acquire());
            pool.release(17);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.release(17));
            assertTrue(e.getMessage().contains("double free") && e.getMessage().contains("17"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> pool.release(64));
            pool.close();
        }
        leaks.assertClean();
    }

    @Test
    void sizesOutOfRangeAreRejectedNamingTheValue() {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        try (RdmaProvider provider = SoftProvider.builder().threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER).build();
             ProtectionDomain pd = provider.devices().get(0).allocateProtectionDomain()) {
            IllegalArgumentException slots = assertThrows(IllegalArgumentException.class,
                () -> new MessageBufferPool("p", pd, 4096, 65, Access.LOCAL_WRITE));
            assertTrue(slots.getMessage().contains("65"), slots.getMessage());
            IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> new MessageBufferPool("p", pd, 1 << 30, 4, Access.LOCAL_WRITE));
            assertTrue(big.getMessage().contains("exceeds 2 GiB"), big.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new MessageBufferPool("p", pd, 0, 4, Access.LOCAL_WRITE));
        }
        leaks.assertClean();
    }
}
