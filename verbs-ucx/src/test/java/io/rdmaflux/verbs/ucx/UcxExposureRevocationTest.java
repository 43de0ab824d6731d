package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the owner of an exposed region sees when the connection ends while the peer's put into the
 * region is under way, over the {@code ucx} provider's put path ({@code tls=tcp}, {@code put=on}: a put
 * lands only when the owner's UCP worker runs). Both nodes are INVOKER and the test thread is their
 * thread and their providers' engine thread, as a node driving an INVOKER provider is: so the owner's
 * deregistration of the exposure cannot wait for the peer's REVOKE_ACK. The owner takes its memory back
 * when its {@link RemoteRegion#revoke()} Mono completes; nothing may land there after that.
 *
 * <p>Before {@code MemoryRegion.deregisterAsync}, the Mono completed when the deregistration returned,
 * with the put still under way: the put then landed in memory the owner had reused.
 */
@ExtendWith(UcxTestSupport.Checks.class)
class UcxExposureRevocationTest {
    private static final int SIZE = 64 * 1024;
    private static final byte REUSED = 0x5A;

    @Test
    void anExposedRegionIsTheOwnersAgainOnlyOnceAPutUnderWayAtTheConnectionsEndLanded() {
        UcxProvider pu = UcxProvider.builder().tls("tcp").threadingMode(ThreadingMode.INVOKER).put(UcxProvider.Put.ON).build();
        UcxProvider po = UcxProvider.builder().tls("tcp").threadingMode(ThreadingMode.INVOKER).put(UcxProvider.Put.ON).build();
        // the owner's node does not drive its provider: the test runs the node's duty cycle (where the
        // connection's end deregisters the exposure) before the provider's pass that would land the put
        try (RdmaNode user = RdmaNode.builder().provider(pu.nics()).name("user").threadingMode(ThreadingMode.INVOKER).build();
             RdmaNode owner = RdmaNode.builder().provider(po.nics()).name("owner").threadingMode(ThreadingMode.INVOKER)
                 .driveProvider(false).build()) {
            Runnable pass = () -> {
                user.invoke();
                po.progress(System.nanoTime());
                owner.invoke();
            };
            RdmaServer listener = owner.bind(new PortAddress(UcxFrameTransport.FABRIC, po.devices().get(0).name(), 0));
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            AtomicReference<RdmaConnection> connected = new AtomicReference<>();
            listener.accept().subscribe(accepted::set);
            user.connect(listener.address(), ConnectionSpec.defaults()).subscribe(connected::set);
            until(pass, () -> accepted.get() != null && connected.get() != null, "the connection");
            listener.close();
            RdmaConnection ownerSide = accepted.get();
            RdmaConnection userSide = connected.get();

            ByteBuffer target = ByteBuffer.allocateDirect(SIZE);
            MemoryRegion exposedMemory = owner.registerMemory(target);
            ByteBuffer source = ByteBuffer.allocateDirect(SIZE);
            MemoryRegion src = user.registerMemory(source);
            AtomicReference<RemoteRegion> exposure = new AtomicReference<>();
            AtomicReference<RemoteRegion> remote = new AtomicReference<>();
            userSide.remoteRegions().subscribe(remote::set);
            ownerSide.expose(exposedMemory, RemoteAccess.READ_WRITE).subscribe(exposure::set);
            until(pass, () -> exposure.get() != null && remote.get() != null, "the exposure");

            // the first put goes as frames and fetches the UCX rkey; the second goes as ucp_put
            put(pass, userSide, src, source, remote.get(), 1);
            until(pass, () -> pu.putCounts(0)[3] == 1, "the rkey reply");
            put(pass, userSide, src, source, remote.get(), 2);
            assertEquals(1, pu.putCounts(0)[0], "the second put went as ucp_put");
            assertArrayEquals(pattern(2), bytes(target));

            // a third put under way: issued by the user, not landed (the owner's worker has not run)
            fill(source, 9);
            userSide.put(src, 0, remote.get(), 0, SIZE).subscribe(v -> { }, e -> { });
            for (int i = 0; i < 100_000 && pu.putCounts(0)[0] < 2; i++) {
                user.invoke();
            }
            assertEquals(2, pu.putCounts(0)[0], "the user issued the put");
            assertArrayEquals(pattern(2), bytes(target), "the put has not landed yet");

            // the owner's connection ends: its node thread deregisters the exposure
            ownerSide.abort();
            for (int i = 0; i < 1_000 && exposure.get().isValid(); i++) {
                owner.invoke();
            }
            assertFalse(exposure.get().isValid(), "the connection's end deregistered the exposure");
            AtomicBoolean taken = new AtomicBoolean();
            exposure.get().revoke().subscribe(null, null, () -> {
                // the owner takes its memory back, as the revoke Mono allows
                for (int i = 0; i < SIZE; i++) {
                    target.put(i, REUSED);
                }
                taken.set(true);
            });
            assertFalse(taken.get(), "the exposure's revoke completed while a put with its rkey was under way");
            assertEquals(1, po.revocationCounts(0)[4], "deregistered asynchronously");
            until(pass, taken::get, "the revocation");
            for (int i = 0; i < 20_000; i++) {
                pass.run();
            }
            byte[] reused = new byte[SIZE];
            java.util.Arrays.fill(reused, REUSED);
            assertArrayEquals(reused, bytes(target), "nothing landed in the memory after the owner took it back");
            userSide.abort();
            for (int i = 0; i < 1_000; i++) {
                pass.run();
            }
        } finally {
            pu.close();
            po.close();
        }
    }

    private static void put(Runnable pass, RdmaConnection c, MemoryRegion src, ByteBuffer source, RemoteRegion to, int seed) {
        fill(source, seed);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        c.put(src, 0, to, 0, SIZE).subscribe(v -> { }, error::set, () -> done.set(true));
        until(pass, () -> done.get() || error.get() != null, "put " + seed);
        assertTrue(done.get(), () -> "put " + seed + " failed: " + error.get());
    }

    private static void until(Runnable pass, BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("gave up waiting for " + what);
            }
            pass.run();
        }
    }

    private static void fill(ByteBuffer b, int seed) {
        for (int i = 0; i < SIZE; i++) {
            b.put(i, (byte) (i * 31 + seed));
        }
    }

    private static byte[] pattern(int seed) {
        byte[] want = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            want[i] = (byte) (i * 31 + seed);
        }
        return want;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] got = new byte[SIZE];
        b.get(0, got);
        return got;
    }
}
