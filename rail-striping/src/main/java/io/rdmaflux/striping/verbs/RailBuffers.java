package io.rdmaflux.striping.verbs;

import io.rdmaflux.verbs.MemoryRegion;
import java.util.Arrays;
import java.util.List;

/**
 * One buffer pair as every rail sees it: the local buffer registered with each rail's device and
 * the peer's buffer with the rkey each rail's device accepts. Seed 000 §5.1 and seed 002 §3.2
 * register the whole buffer with every HCA, because a stripe may go through any of them; when the
 * rails are ports of one HCA (seed 000 §3.2) all entries are the same registration.
 *
 * <p>Immutable; thread-safe.
 */
public final class RailBuffers {
    private final MemoryRegion[] localByRail;
    private final long remoteAddress;
    private final int[] remoteRkeyByRail;

    private RailBuffers(MemoryRegion[] localByRail, long remoteAddress, int[] remoteRkeyByRail) {
        this.localByRail = localByRail;
        this.remoteAddress = remoteAddress;
        this.remoteRkeyByRail = remoteRkeyByRail;
    }

    /**
     * @param localByRail      the local buffer's registration on each rail's device, in rail order;
     *                         all of the same address and length
     * @param remoteAddress    the peer buffer's address
     * @param remoteRkeyByRail the peer buffer's rkey on each rail's device
     * @throws IllegalArgumentException if the lists differ in length, are empty, or the local
     *                                  registrations are not of the same memory
     */
    public static RailBuffers of(List<MemoryRegion> localByRail, long remoteAddress, int... remoteRkeyByRail) {
        if (localByRail.isEmpty() || localByRail.size() != remoteRkeyByRail.length) {
            throw new IllegalArgumentException("one local registration and one remote rkey per rail required but there were "
                + localByRail.size() + " registrations and " + remoteRkeyByRail.length + " rkeys");
        }
        MemoryRegion first = localByRail.get(0);
        for (MemoryRegion mr : localByRail) {
            if (mr.address() != first.address() || mr.length() != first.length()) {
                throw new IllegalArgumentException("the local registrations must cover the same memory: " + mr.length()
                    + " bytes at 0x" + Long.toHexString(mr.address()) + " vs " + first.length() + " bytes at 0x"
                    + Long.toHexString(first.address()));
            }
        }
        return new RailBuffers(localByRail.toArray(new MemoryRegion[0]), remoteAddress, remoteRkeyByRail.clone());
    }

    /** All {@code rails} are ports of one device: one registration, one rkey. */
    public static RailBuffers oneDevice(MemoryRegion local, long remoteAddress, int remoteRkey, int rails) {
        MemoryRegion[] l = new MemoryRegion[rails];
        int[] r = new int[rails];
        Arrays.fill(l, local);
        Arrays.fill(r, remoteRkey);
        return of(Arrays.asList(l), remoteAddress, r);
    }

    public int railCount() {
        return localByRail.length;
    }

    /** The local registration for {@code rail}. */
    public MemoryRegion local(int rail) {
        return localByRail[rail];
    }

    /** Length of the local buffer in bytes. */
    public long lengthBytes() {
        return localByRail[0].length();
    }

    public long remoteAddress() {
        return remoteAddress;
    }

    /** The peer buffer's rkey on {@code rail}'s device. */
    public int remoteRkey(int rail) {
        return remoteRkeyByRail[rail];
    }
}
