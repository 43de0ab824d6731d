package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.PortAddress;

/**
 * A transport's resolved path to one remote port, obtained once per connection (RC, at RTR) or
 * per address handle (UD) with {@link FrameTransport.Attachment#resolve(PortAddress)}, so that
 * transmitting a frame needs no address lookup. Opaque to the NIC.
 */
public interface Route {
    /** The remote port this route reaches. */
    PortAddress destination();
}
