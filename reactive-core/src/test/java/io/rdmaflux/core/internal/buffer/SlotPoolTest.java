package io.rdmaflux.core.internal.buffer;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SlotPoolTest {
    @Test
    void aSlotIsAcquiredFromItsAcquireUntilItsReleaseAndSlotsOutsideThePoolNeverAre() {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        try (RdmaProvider provider = SoftProvider.builder().threadingMode(ThreadingMode.INVOKER).build();
             ProtectionDomain pd = provider.devices().get(0).allocateProtectionDomain()) {
            SlotPool pool = new SlotPool("test", pd, 256, 4, Access.LOCAL_WRITE);
            int a = pool.acquire();
            int b = pool.acquire();
            assertTrue(pool.isAcquired(a) && pool.isAcquired(b));
            pool.release(a);
            assertFalse(pool.isAcquired(a));
            assertTrue(pool.isAcquired(b));
            assertFalse(pool.isAcquired(-1));
            assertFalse(pool.isAcquired(4));
            assertEquals(1, pool.inUse());
            pool.release(b);
            pool.close();
        }
        leaks.assertClean();
    }
}
