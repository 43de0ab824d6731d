package io.rdmaflux.core;

import io.rdmaflux.core.internal.buffer.MessageBufferPool;

/**
 * Which of the node's devices each rail of a connection is on, so that every key a rail uses is the
 * one of its device: memory is registered once per device, and an lkey or rkey of one device means
 * nothing to another's queue pairs. A connection whose rails are all on one device uses one key pair
 * for everything, as before; one that spans devices sends a CTS with one rkey per rail
 * ({@link io.rdmaflux.core.frame.CtsFrameCodec}) and posts each stripe with its rail's lkey.
 *
 * <p><b>Concurrency:</b> immutable.
 */
final class RailDevices {
    private final int[] deviceOfRail;
    private final boolean spans;

    RailDevices(int[] deviceOfRail) {
        this.deviceOfRail = deviceOfRail.clone();
        boolean s = false;
        for (int d : deviceOfRail) {
            s |= d != deviceOfRail[0];
        }
        this.spans = s;
    }

    /** {@code rails} rails, all on the node's first device. */
    static RailDevices single(int rails) {
        return new RailDevices(new int[rails]);
    }

    /** The node's device index of connection rail {@code rail}. */
    int deviceOf(int rail) {
        return deviceOfRail[rail];
    }

    /** Whether the connection's rails are on more than one device. */
    boolean spansDevices() {
        return spans;
    }

    /** The rkey of {@code pool} for each rail of the connection, in rail order (a new array). */
    int[] rkeys(MessageBufferPool pool) {
        int[] keys = new int[deviceOfRail.length];
        for (int r = 0; r < keys.length; r++) {
            keys[r] = pool.rkey(deviceOfRail[r]);
        }
        return keys;
    }

    /** The lkey of {@code pool} on rail {@code rail}'s device. */
    int lkey(MessageBufferPool pool, int rail) {
        return pool.lkey(deviceOfRail[rail]);
    }
}
