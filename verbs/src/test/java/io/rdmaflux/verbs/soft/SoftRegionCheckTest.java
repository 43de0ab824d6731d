package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The reasons a QP gives for refusing local (lkey) and remote (rkey) access: each names the key, range or right at fault. */
@ExtendWith(NoLeaksExtension.class)
class SoftRegionCheckTest {
    @Test
    void localAndRemoteChecksNameWhatIsWrong() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftDevice d = nodes.a().softDevice(0);
            ProtectionDomain pd = d.allocateProtectionDomain();
            ProtectionDomain other = d.allocateProtectionDomain();
            CompletionQueue cq = d.createCompletionQueue(4);
            SoftQueuePair qp = (SoftQueuePair) pd.createQueuePair(SoftTwoNodes.rc(nodes.a(), cq).build());
            SoftProtectionDomain spd = qp.softPd();
            SoftMemoryRegion readOnly = (SoftMemoryRegion) pd.allocateMemory(256, 0);
            SoftMemoryRegion writable = (SoftMemoryRegion) pd.allocateMemory(256, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            SoftMemoryRegion foreign = (SoftMemoryRegion) other.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_READ);
            long a = readOnly.address();
            int lkey = readOnly.lkey();
            int rkey = writable.rkey();
            String l = Integer.toHexString(lkey);
            String r = Integer.toHexString(rkey);
            String wa = Long.toHexString(writable.address());

            assertNull(RegionCheck.local(spd, readOnly, lkey, a, 256, false));
            assertNull(RegionCheck.local(spd, writable, writable.lkey(), writable.address() + 16, 32, true));
            assertNull(RegionCheck.remote(spd, writable, rkey, writable.address(), 256, Access.REMOTE_WRITE));

            assertEquals("lkey 0x" + l + " names no registered memory region (wrong key or deregistered)",
                RegionCheck.local(spd, null, lkey, a, 8, false));
            assertEquals("lkey 0x" + l + " names no registered memory region (wrong key or deregistered)",
                RegionCheck.local(spd, writable, lkey, a, 8, false));
            assertEquals("lkey 0x" + Integer.toHexString(foreign.lkey()) + " belongs to another protection domain",
                RegionCheck.local(spd, foreign, foreign.lkey(), foreign.address(), 8, false));
            assertEquals("[0x" + Long.toHexString(a + 200) + ", +100) lies outside its region [0x" + Long.toHexString(a) + ", +256)",
                RegionCheck.local(spd, readOnly, lkey, a + 200, 100, false));
            assertEquals("region lkey 0x" + l + " lacks LOCAL_WRITE (registered LOCAL_READ)",
                RegionCheck.local(spd, readOnly, lkey, a, 8, true));

            assertEquals("rkey 0x" + r + " names no registered memory region (wrong key or deregistered)",
                RegionCheck.remote(spd, readOnly, rkey, a, 8, Access.REMOTE_WRITE));
            assertEquals("rkey 0x" + Integer.toHexString(foreign.rkey()) + " belongs to another protection domain than the responder QP's",
                RegionCheck.remote(spd, foreign, foreign.rkey(), foreign.address(), 8, Access.REMOTE_READ));
            assertEquals("remote [0x" + wa + ", +257) lies outside the region [0x" + wa + ", +256)",
                RegionCheck.remote(spd, writable, rkey, writable.address(), 257, Access.REMOTE_WRITE));
            assertEquals("region rkey 0x" + r + " lacks REMOTE_READ (registered LOCAL_WRITE|REMOTE_WRITE)",
                RegionCheck.remote(spd, writable, rkey, writable.address(), 8, Access.REMOTE_READ));

            writable.close();
            assertEquals("rkey 0x" + r + " names no registered memory region (wrong key or deregistered)",
                RegionCheck.remote(spd, writable, rkey, writable.address(), 8, Access.REMOTE_WRITE));
        }
    }
}
