package io.rdmaflux.core;

import io.rdmaflux.core.internal.onesided.OneSidedEngine;
import io.rdmaflux.core.internal.onesided.UncheckedOperations;
import io.rdmaflux.core.onesided.Epoch;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteAccessException;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.core.onesided.Transfer;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.soft.SoftPort;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One-sided RDMA on the connection (seed 002), in virtual time on INVOKER nodes: exposing and revoking
 * regions, put and get striped over rails, the bounds, rights and lifetime checks (each a clear error and
 * the owner's memory untouched, also when a peer skips the checks and the owner's NIC must refuse),
 * epochs with a synchronization message per subchannel, and a rail failing mid-epoch.
 */
class OneSidedTest {
    static final int REGION = 256 * 1024;

    static MemoryRegion region(RdmaNode node, int bytes) {
        return node.registerMemory(ByteBuffer.allocateDirect(bytes));
    }

    static void fill(MemoryRegion r, int offset, byte[] bytes) {
        ByteBuffer b = r.buffer();
        b.position(offset);
        b.put(bytes);
    }

    static byte[] read(MemoryRegion r, int offset, int length) {
        byte[] out = new byte[length];
        ByteBuffer b = r.buffer();
        b.position(offset);
        b.get(out);
        return out;
    }

    /** Subscribes and drives the pair until {@code mono} ended. @return its value (null for empty) */
    static <T> @Nullable T await(InvokerPair p, Mono<T> mono) {
        AtomicReference<T> value = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        mono.subscribe(value::set, e -> {
            error.set(e);
            done.set(true);
        }, () -> done.set(true));
        p.runUntil(done::get);
        if (error.get() != null) {
            throw new AssertionError("expected success but got " + error.get(), error.get());
        }
        return value.get();
    }

    static Throwable awaitError(InvokerPair p, Mono<?> mono) {
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        mono.subscribe(v -> { }, e -> {
            error.set(e);
            done.set(true);
        }, () -> done.set(true));
        p.runUntil(done::get);
        if (error.get() == null) {
            throw new AssertionError("expected an error but " + mono + " succeeded");
        }
        return error.get();
    }

    /** The server exposes a region with {@code access}; the client gets its handle. */
    static RemoteRegion[] exposeToClient(InvokerPair p, MemoryRegion serverRegion, RemoteAccess access) {
        List<RemoteRegion> seen = new ArrayList<>();
        p.client.remoteRegions().subscribe(seen::add);
        RemoteRegion owner = await(p, p.server.expose(serverRegion, access));
        p.runUntil(() -> !seen.isEmpty());
        RemoteRegion user = seen.get(0);
        assertEquals(owner.id(), user.id());
        assertEquals(serverRegion.length(), user.lengthBytes());
        assertEquals(access, user.access());
        assertTrue(owner.isOwner());
        assertFalse(user.isOwner());
        return new RemoteRegion[] {owner, user};
    }

    static OneSidedEngine engine(RdmaConnection c) {
        return ((DefaultRdmaConnection) c).oneSidedEngine();
    }

    static InvokerPair pair(int rails) {
        return InvokerPair.open(rails, ConnectionSpec.rails(rails), b -> { });
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {1, 2, 3})
    void putAndGetMoveTheBytesAndLargeOnesAreSplitOverEveryRail(int rails) {
        try (InvokerPair p = pair(rails)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            MemoryRegion back = region(p.clientNode, REGION);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE)[1];
            byte[] data = RendezvousTest.pattern(200_000, 3);
            fill(source, 0, data);

            await(p, p.client.put(source, 0, user, 1000, data.length));
            assertArrayEquals(data, read(target, 1000, data.length));
            await(p, p.client.get(back, 5, user, 1000, data.length));
            assertArrayEquals(data, read(back, 5, data.length));

            OneSidedEngine e = engine(p.client);
            for (int r = 0; r < rails; r++) {
                // equal split on idle rails (seed 002 §3.2), to a 64-byte granule
                assertEquals(data.length / (double) rails, e.bytesPostedOn(true, r), 64.0 * rails, "put bytes on rail " + r);
                assertEquals(data.length / (double) rails, e.bytesPostedOn(false, r), 64.0 * rails, "get bytes on rail " + r);
            }
            assertEquals(0, e.fragmentsPosted());
        }
    }

    @Test
    void aRemoteRegionsSubscriberThatCancelsFromOnNextLeavesTheOthersAndTheConnectionIntact() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion first = region(p.serverNode, 4096);
            MemoryRegion second = region(p.serverNode, 4096);
            List<RemoteRegion> firstOnly = new ArrayList<>();
            List<RemoteRegion> all = new ArrayList<>();
            p.client.remoteRegions().take(1).subscribe(firstOnly::add);
            p.client.remoteRegions().subscribe(all::add);
            p.client.remoteRegions().next().subscribe(firstOnly::add);
            await(p, p.server.expose(first, RemoteAccess.READ));
            await(p, p.server.expose(second, RemoteAccess.READ));
            p.runUntil(() -> all.size() == 2);
            assertEquals(2, firstOnly.size());
            assertEquals(firstOnly.get(0).id(), firstOnly.get(1).id());
            assertFalse(p.client.isDisposed(), "the connection survived the cancelling subscribers");
        }
    }

    @Test
    void smallTransfersGoWholeOnOneRailInTurn() {
        try (InvokerPair p = pair(2)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            for (int i = 0; i < 4; i++) {
                fill(source, i * 100, RendezvousTest.pattern(100, i));
                await(p, p.client.put(source, i * 100, user, i * 100, 100));
            }
            OneSidedEngine e = engine(p.client);
            assertEquals(200, e.bytesPostedOn(true, 0));
            assertEquals(200, e.bytesPostedOn(true, 1));
            for (int i = 0; i < 4; i++) {
                assertArrayEquals(RendezvousTest.pattern(100, i), read(target, i * 100, 100));
            }
        }
    }

    @Test
    void aPutToAReadOnlyExposureIsRefusedAndTheMemoryIsUntouched() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion source = region(p.clientNode, 4096);
            fill(source, 0, RendezvousTest.pattern(4096, 1));
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ)[1];
            Throwable e = awaitError(p, p.client.put(source, 0, user, 0, 4096));
            RemoteAccessException rae = assertInstanceOf(RemoteAccessException.class, e);
            assertEquals(RemoteAccessException.Reason.RIGHTS, rae.reason());
            assertTrue(e.getMessage().contains("READ only") && e.getMessage().contains("WRITE or READ_WRITE"), e.getMessage());
            assertArrayEquals(new byte[4096], read(target, 0, 4096));
            // the connection stays usable: a get is allowed
            await(p, p.client.get(source, 0, user, 0, 4096));
            assertArrayEquals(new byte[4096], read(source, 0, 4096));
        }
    }

    @Test
    void aGetFromAWriteOnlyExposureIsRefused() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion local = region(p.clientNode, 4096);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            Throwable e = awaitError(p, p.client.get(local, 0, user, 0, 16));
            assertEquals(RemoteAccessException.Reason.RIGHTS, ((RemoteAccessException) e).reason());
        }
    }

    @Test
    void rangesPastTheEndAreRefusedNamingTheLimit() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion source = region(p.clientNode, 8192);
            fill(source, 0, RendezvousTest.pattern(8192, 2));
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE)[1];
            Throwable remote = awaitError(p, p.client.put(source, 0, user, 4000, 97));
            assertEquals(RemoteAccessException.Reason.BOUNDS, ((RemoteAccessException) remote).reason());
            assertTrue(remote.getMessage().contains("[4000, 4097)") && remote.getMessage().contains("<= 4096"), remote.getMessage());
            Throwable local = awaitError(p, p.client.put(source, 8100, user, 0, 100));
            assertTrue(local.getMessage().contains("local range [8100, 8200)"), local.getMessage());
            Throwable zero = awaitError(p, p.client.put(source, 0, user, 0, 0));
            assertInstanceOf(IllegalArgumentException.class, zero);
            assertTrue(zero.getMessage().contains("lengthBytes > 0 required but it was 0"), zero.getMessage());
            assertArrayEquals(new byte[4096], read(target, 0, 4096));
        }
    }

    @Test
    void theOwnersOwnHandleIsNotAPutTarget() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            RemoteRegion owner = exposeToClient(p, target, RemoteAccess.READ_WRITE)[0];
            Throwable e = awaitError(p, p.server.put(target, 0, owner, 0, 16));
            assertEquals(RemoteAccessException.Reason.NOT_REMOTE, ((RemoteAccessException) e).reason());
            assertTrue(e.getMessage().contains("exposed by this side"), e.getMessage());
        }
    }

    @Test
    void afterTheOwnerRevokesPutsAreRefusedAndTheRegistrationIsGone() {
        try (InvokerPair p = pair(2)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion source = region(p.clientNode, 4096);
            fill(source, 0, RendezvousTest.pattern(4096, 5));
            RemoteRegion[] r = exposeToClient(p, target, RemoteAccess.READ_WRITE);
            assertEquals(1, engine(p.server).exposureRegistrations());
            await(p, r[0].revoke());
            assertFalse(r[0].isValid());
            assertFalse(r[1].isValid());
            assertEquals(0, engine(p.server).exposureRegistrations(), "the exposure's registration (its rkeys) is deregistered");
            Throwable e = awaitError(p, p.client.put(source, 0, r[1], 0, 4096));
            assertEquals(RemoteAccessException.Reason.REVOKED, ((RemoteAccessException) e).reason());
            assertTrue(e.getMessage().contains("revoked by its owner"), e.getMessage());
            assertArrayEquals(new byte[4096], read(target, 0, 4096));
            assertEquals(0, engine(p.client).peerRegionsHeld());
        }
    }

    @Test
    void theUsersRevokeReleasesTheRegionAtTheOwner() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            RemoteRegion[] r = exposeToClient(p, target, RemoteAccess.READ_WRITE);
            await(p, r[1].revoke());
            p.drive();
            assertFalse(r[0].isValid());
            assertEquals(0, engine(p.server).exposureRegistrations());
            await(p, r[0].revoke());
        }
    }

    @Test
    void aRevokeWaitsForThePutsUnderWayThenTheyAllLanded() {
        try (InvokerPair p = pair(2)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            byte[] data = RendezvousTest.pattern(REGION, 9);
            fill(source, 0, data);
            RemoteRegion[] r = exposeToClient(p, target, RemoteAccess.WRITE);
            AtomicBoolean putDone = new AtomicBoolean();
            AtomicBoolean revoked = new AtomicBoolean();
            p.client.put(source, 0, r[1], 0, REGION).subscribe(v -> { }, e -> { }, () -> putDone.set(true));
            p.clientNode.invoke();
            r[0].revoke().subscribe(v -> { }, e -> { }, () -> revoked.set(true));
            p.runUntil(revoked::get);
            assertTrue(putDone.get(), "the release waited for the put under way");
            assertArrayEquals(data, read(target, 0, REGION));
            assertEquals(0, engine(p.server).exposureRegistrations());
        }
    }

    @Test
    void afterThePeerClosedOperationsAndExposuresFailAndRegistrationsAreGone() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion source = region(p.clientNode, 4096);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE)[1];
            AtomicBoolean regionsCompleted = new AtomicBoolean();
            p.client.remoteRegions().subscribe(x -> { }, e -> { }, () -> regionsCompleted.set(true));
            p.server.close();
            p.client.close();
            p.drive();
            assertTrue(p.client.isDisposed());
            assertTrue(regionsCompleted.get());
            assertFalse(user.isValid());
            assertEquals(0, engine(p.server).exposureRegistrations());
            Throwable e = awaitError(p, p.client.put(source, 0, user, 0, 16));
            assertTrue(e instanceof RemoteAccessException || e instanceof ConnectionClosedException, e.toString());
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            Throwable ex = awaitError(p, p.server.expose(target, RemoteAccess.READ));
            assertInstanceOf(ConnectionClosedException.class, ex);
            assertEquals(0, engine(p.server).exposureRegistrations(), "the refused exposure's registration was undone");
            assertArrayEquals(new byte[4096], read(target, 0, 4096));
        }
    }

    @Test
    void aPeerSkippingTheChecksMeetsTheOwnersNicAndTheMemoryIsUntouched() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 8192);
            MemoryRegion source = region(p.clientNode, 8192);
            fill(source, 0, RendezvousTest.pattern(8192, 4));
            // exposes [0, 4096) read-only: the registration has no REMOTE_WRITE and ends at 4096
            List<RemoteRegion> seen = new ArrayList<>();
            p.client.remoteRegions().subscribe(seen::add);
            await(p, p.server.expose(target, 0, 4096, RemoteAccess.READ));
            p.runUntil(() -> !seen.isEmpty());
            RemoteRegion user = seen.get(0);
            assertEquals(4096, user.lengthBytes());
            RemoteRegion forged = UncheckedOperations.forge(engine(p.client), user, 8192, RemoteAccess.READ_WRITE);
            Throwable e = awaitError(p, UncheckedOperations.put(engine(p.client), source, 0, forged, 0, 4096));
            assertTrue(e instanceof RdmaTransportException || e instanceof ConnectionClosedException, e.toString());
            p.drive();
            assertArrayEquals(new byte[8192], read(target, 0, 8192), "the owner's NIC refused the WRITE: nothing landed");
            assertTrue(p.client.isDisposed(), "a REM_ACCESS_ERR fails the rail (the only one)");
        }
    }

    @Test
    void aStaleRkeyAfterRevokeIsRefusedByTheOwnersNic() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion source = region(p.clientNode, 4096);
            fill(source, 0, RendezvousTest.pattern(4096, 6));
            RemoteRegion[] r = exposeToClient(p, target, RemoteAccess.READ_WRITE);
            await(p, r[0].revoke());
            RemoteRegion forged = UncheckedOperations.forge(engine(p.client), r[1], 4096, RemoteAccess.READ_WRITE);
            awaitError(p, UncheckedOperations.put(engine(p.client), source, 0, forged, 0, 4096));
            p.drive();
            assertArrayEquals(new byte[4096], read(target, 0, 4096));
        }
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {1, 2})
    void aFenceSendsOneSyncPerSubchannelUsedAndTheTargetSeesTheEpochAfterItsPuts(int rails) {
        try (InvokerPair p = pair(rails)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            byte[] data = RendezvousTest.pattern(REGION, 7);
            fill(source, 0, data);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            List<Epoch> seen = new ArrayList<>();
            List<Boolean> landedWhenSeen = new ArrayList<>();
            p.server.epochs().subscribe(ep -> {
                seen.add(ep);
                landedWhenSeen.add(java.util.Arrays.equals(data, read(target, 0, REGION)));
            });
            for (int i = 0; i < 4; i++) {
                p.client.put(source, i * (REGION / 4), user, i * (REGION / 4), REGION / 4).subscribe();
            }
            Epoch e = await(p, p.client.fence());
            assertEquals(0, e.number());
            assertEquals(4, e.puts());
            assertEquals(REGION, e.bytesPut());
            assertEquals((1L << rails) - 1, e.railMask(), "every rail carried puts, so each got a sync");
            assertEquals(rails, engine(p.client).syncsSent());
            assertEquals(List.of(e), seen);
            assertEquals(List.of(true), landedWhenSeen);
            Epoch empty = await(p, p.client.fence());
            assertEquals(1, empty.number());
            assertEquals(0, empty.puts());
            assertEquals(1, Long.bitCount(empty.railMask()), "an epoch that used no rail syncs on one");
        }
    }

    @Test
    void aFenceOfAnEpochWithAFailedOperationFailsNamingIt() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 4096);
            MemoryRegion source = region(p.clientNode, 4096);
            RemoteRegion[] r = exposeToClient(p, target, RemoteAccess.WRITE);
            // the owner's REGION_REVOKE reaches the client before the client's next duty cycle plans the put
            r[0].revoke().subscribe();
            for (int i = 0; i < 20; i++) {
                p.soft.progress();
                p.serverNode.invoke();
            }
            assertTrue(r[1].isValid(), "the client has not read the revoke yet");
            AtomicReference<Throwable> putError = new AtomicReference<>();
            p.client.put(source, 0, r[1], 0, 4096).subscribe(v -> { }, putError::set);
            Throwable fenceError = awaitError(p, p.client.fence());
            assertEquals(RemoteAccessException.Reason.REVOKED, ((RemoteAccessException) putError.get()).reason());
            assertTrue(fenceError.getMessage().contains("epoch 0: 1 of its operations failed, first: remote region 0 may not be used"),
                fenceError.getMessage());
            assertArrayEquals(new byte[4096], read(target, 0, 4096));
            // the next epoch is unaffected
            assertEquals(1, await(p, p.client.fence()).number());
        }
    }

    @ParameterizedTest(name = "rail {0} of 2 killed")
    @ValueSource(ints = {0, 1})
    void aRailFailingMidEpochCompletesTheEpochOnTheSurvivor(int killed) {
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2), b -> b.qpRetryTimeoutNs(1_000_000))) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            byte[] data = RendezvousTest.pattern(REGION, 8);
            fill(source, 0, data);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            List<Epoch> seen = new ArrayList<>();
            p.server.epochs().subscribe(seen::add);
            AtomicBoolean allPut = new AtomicBoolean();
            Flux.range(0, 8).flatMap(i -> p.client.put(source, i * (REGION / 8), user, i * (REGION / 8), REGION / 8))
                .subscribe(v -> { }, e -> { }, () -> allPut.set(true));
            AtomicReference<Epoch> fenced = new AtomicReference<>();
            AtomicReference<Throwable> fenceError = new AtomicReference<>();
            p.client.fence().subscribe(fenced::set, fenceError::set);
            p.pass();
            p.pass();
            assertTrue(engine(p.client).fragmentsPosted() > 0, "puts are in flight when the rail dies");
            assertEquals(null, fenced.get());
            ((SoftPort) p.soft.b().devices().get(0).port(killed + 1)).setState(PortState.DOWN);
            p.runUntil(() -> fenced.get() != null || fenceError.get() != null);
            assertEquals(null, fenceError.get());
            assertTrue(allPut.get());
            assertArrayEquals(data, read(target, 0, REGION), "every put landed, on the surviving rail");
            assertEquals(1, seen.size());
            assertEquals(1L << (1 - killed), fenced.get().railMask(), "the epoch synchronized on the survivor only");
            assertTrue(engine(p.client).fragmentsReposted() > 0, "the dead rail's fragments went again on the survivor");
            assertFalse(p.client.isDisposed());
        }
    }

    @Test
    void aGetIsNotStuckBehindAQueueOfPuts() {
        // seed 002 §4.3: put and get queues take turns, so a get uses the inbound direction while puts fill the outbound one
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            MemoryRegion back = region(p.clientNode, 4096);
            fill(target, 0, RendezvousTest.pattern(4096, 11));
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE)[1];
            int puts = 32;
            int[] putsDone = {0};
            for (int i = 0; i < puts; i++) {
                p.client.put(source, 4096 + i * 4096, user, 4096 + i * 4096, 4096).subscribe(v -> { }, e -> { }, () -> putsDone[0]++);
            }
            AtomicBoolean got = new AtomicBoolean();
            int[] putsDoneWhenGot = {-1};
            p.client.get(back, 0, user, 0, 4096).subscribe(v -> { }, e -> { }, () -> {
                got.set(true);
                putsDoneWhenGot[0] = putsDone[0];
            });
            p.runUntil(() -> got.get() && putsDone[0] == puts);
            assertTrue(putsDoneWhenGot[0] < puts / 2, "the get completed after " + putsDoneWhenGot[0] + " of " + puts + " puts");
            assertArrayEquals(RendezvousTest.pattern(4096, 11), read(back, 0, 4096));
        }
    }

    @Test
    void putsAndGetsQueuedAtOnceShareTheRailsRdmaSlots() {
        // seed 002 §4.3: neither direction takes every RDMA slot a rail frees, so gets do not wait behind all the puts
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            MemoryRegion back = region(p.clientNode, REGION);
            byte[] data = RendezvousTest.pattern(REGION / 2, 12);
            fill(target, REGION / 2, data);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE)[1];
            int n = 64;
            int chunk = REGION / 2 / n;
            OneSidedEngine e = engine(p.client);
            int[] done = {0, 0};
            long[] maxLead = {0};
            Runnable sample = () -> {
                if (done[0] < n && done[1] < n) {
                    maxLead[0] = Math.max(maxLead[0], Math.abs(e.bytesPostedOn(true, 0) - e.bytesPostedOn(false, 0)) / chunk);
                }
            };
            for (int i = 0; i < n; i++) {
                long at = (long) i * chunk;
                p.client.put(source, at, user, at, chunk).subscribe(v -> { }, err -> { }, () -> {
                    done[0]++;
                    sample.run();
                });
                p.client.get(back, REGION / 2 + at, user, REGION / 2 + at, chunk).subscribe(v -> { }, err -> { }, () -> {
                    done[1]++;
                    sample.run();
                });
            }
            p.runUntil(() -> done[0] == n && done[1] == n);
            assertTrue(maxLead[0] <= 2, "one direction had " + maxLead[0] + " more operations posted than the other");
            assertArrayEquals(data, read(back, REGION / 2, REGION / 2));
        }
    }

    @Test
    void theStreamingFormBoundsTheBytesInFlightAndEmitsEveryTransfer() {
        try (InvokerPair p = pair(2)) {
            MemoryRegion target = region(p.serverNode, REGION);
            MemoryRegion source = region(p.clientNode, REGION);
            byte[] data = RendezvousTest.pattern(REGION, 10);
            fill(source, 0, data);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            int chunk = 8192;
            AtomicReference<Integer> maxInFlight = new AtomicReference<>(0);
            List<Transfer> done = new ArrayList<>();
            AtomicBoolean complete = new AtomicBoolean();
            int[] issued = {0};
            Flux<Transfer> source$ = Flux.range(0, REGION / chunk)
                .map(i -> Transfer.put(source, (long) i * chunk, user, (long) i * chunk, chunk))
                .doOnNext(t -> {
                    issued[0]++;
                    maxInFlight.set(Math.max(maxInFlight.get(), issued[0] - done.size()));
                });
            p.client.transfers(source$, 4 * chunk).subscribe(done::add, e -> { }, () -> complete.set(true));
            p.runUntil(complete::get);
            assertEquals(REGION / chunk, done.size());
            assertTrue(maxInFlight.get() <= 4, "at most 4 transfers of 8 KiB in flight, saw " + maxInFlight.get());
            assertArrayEquals(data, read(target, 0, REGION));
        }
    }

    @Test
    void theStreamingFormErrorsOnTheFirstRefusedTransferAndCancelsItsSource() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64 * 1024);
            MemoryRegion source = region(p.clientNode, 64 * 1024);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            AtomicBoolean cancelled = new AtomicBoolean();
            List<Transfer> done = new ArrayList<>();
            AtomicReference<Throwable> error = new AtomicReference<>();
            Flux<Transfer> transfers = Flux.range(0, 100)
                .map(i -> Transfer.put(source, 0, user, i == 3 ? 64 * 1024 : 0, 1024))
                .doOnCancel(() -> cancelled.set(true));
            p.client.transfers(transfers, 8 * 1024).subscribe(done::add, error::set);
            p.runUntil(() -> error.get() != null);
            assertEquals(RemoteAccessException.Reason.BOUNDS, ((RemoteAccessException) error.get()).reason());
            assertTrue(cancelled.get(), "the source was cancelled");
            assertTrue(done.size() <= 3, "only transfers before the refused one completed: " + done.size());
            p.drive();
            assertEquals(0, engine(p.client).fragmentsPosted());
        }
    }

    @Test
    void theStreamingFormHonoursDemand() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64 * 1024);
            MemoryRegion source = region(p.clientNode, 64 * 1024);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.WRITE)[1];
            int[] pulled = {0};
            Flux<Transfer> transfers = Flux.range(0, 10).map(i -> Transfer.put(source, 0, user, i * 1024L, 1024))
                .doOnNext(t -> pulled[0]++);
            reactor.test.StepVerifier.create(p.client.transfers(transfers, 1 << 20), 0)
                .then(p::drive)
                .then(() -> assertEquals(0, pulled[0], "no demand, no transfer taken"))
                .thenRequest(2)
                .then(p::drive)
                .expectNextCount(2)
                .then(() -> assertEquals(2, pulled[0], "two requested, two taken"))
                .thenRequest(Long.MAX_VALUE)
                .then(p::drive)
                .expectNextCount(8)
                .verifyComplete();
        }
    }

    @Test
    void closingWithExposuresAndPeerRegionsLeavesNoRegistration() {
        OneSidedEngine server;
        OneSidedEngine client;
        try (InvokerPair p = pair(2)) {
            MemoryRegion target = region(p.serverNode, 4096);
            exposeToClient(p, target, RemoteAccess.READ_WRITE);
            await(p, p.server.expose(target, 0, 100, RemoteAccess.READ));
            assertEquals(2, engine(p.server).exposureRegistrations());
            server = engine(p.server);
            client = engine(p.client);
        }
        assertEquals(0, server.exposureRegistrations());
        assertEquals(0, client.exposureRegistrations());
    }
}
