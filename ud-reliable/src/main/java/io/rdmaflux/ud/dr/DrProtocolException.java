package io.rdmaflux.ud.dr;

import io.rdmaflux.core.RdmaProtocolException;

/**
 * A peer sent DR datagrams that pass their CRC32C yet break the protocol (a VFRAG that continues no message,
 * a length that disagrees with its fragments). The endpoint fails: both directions error with it.
 */
public final class DrProtocolException extends RdmaProtocolException {
    private static final long serialVersionUID = 1L;

    public DrProtocolException(String message) {
        super(message);
    }
}
