package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import reactor.core.publisher.Mono;

/**
 * Test support: a peer that skips the user-side checks. It forges a handle of a region with the address
 * and rkeys of a real one but any length and rights, valid, and puts through it, so a test can show that
 * the owner's NIC refuses what the checks would have refused (a dead rkey, a missing right, a range past
 * the end) and leaves the owner's memory untouched.
 */
public final class UncheckedOperations {
    private UncheckedOperations() {
    }

    /** A valid-looking copy of {@code real} (a region of the peer on {@code engine}'s connection) with {@code lengthBytes} and {@code access}. */
    public static RemoteRegion forge(OneSidedEngine engine, RemoteRegion real, long lengthBytes, RemoteAccess access) {
        PeerRegion r = (PeerRegion) real;
        int[] rkeys = new int[64];
        for (int i = 0; i < rkeys.length; i++) {
            try {
                rkeys[i] = r.rkey(i);
            } catch (ArrayIndexOutOfBoundsException e) {
                rkeys = java.util.Arrays.copyOf(rkeys, i);
                break;
            }
        }
        return new PeerRegion(engine, r.id(), r.address(), lengthBytes, access, rkeys);
    }

    /** A put that skips {@link OneSidedChecks}: posted as is, whatever the region says. */
    public static Mono<Void> put(OneSidedEngine engine, MemoryRegion local, long localOffset, RemoteRegion forged, long remoteOffset,
                                 int lengthBytes) {
        return Mono.create(sink -> {
            OneSidedOp op = new OneSidedOp(true, local, localOffset, (PeerRegion) forged, remoteOffset, lengthBytes, e -> {
                if (e == null) {
                    sink.success();
                } else {
                    sink.error(e);
                }
            });
            engine.submit(new Command() {
                @Override
                public void run() {
                    engine.start(op);
                }

                @Override
                public void fail(Throwable error) {
                    sink.error(error);
                }
            });
        });
    }
}
