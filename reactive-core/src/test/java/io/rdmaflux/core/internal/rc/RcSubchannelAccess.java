package io.rdmaflux.core.internal.rc;

import io.rdmaflux.verbs.MemoryRegion;

/** What tests outside this package read of an {@link RcSubchannel} that is not its API. */
public final class RcSubchannelAccess {
    private RcSubchannelAccess() {
    }

    /** The registered memory of the rail's send buffers (where DATA frames are written). */
    public static MemoryRegion sendRegion(RcSubchannel subchannel) {
        return subchannel.sendRegion();
    }
}
