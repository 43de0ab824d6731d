package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.onesided.RemoteAccessException;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.jspecify.annotations.Nullable;

/**
 * The checks a put or get passes before anything is posted, each failing with a message that names the
 * value and the fix: the arguments, the local region (this node's, registered, the range inside it), and
 * the remote region (the peer's on this connection, valid, the range inside it, the right the operation
 * needs). The owner's NIC checks the remote range and rights again (the exposure's registration covers
 * exactly the exposed range with only the granted flags); these checks make a wrong operation an error
 * of that operation instead of a failed rail.
 *
 * <p><b>Concurrency:</b> static pure functions (they read the regions' volatile state).
 */
final class OneSidedChecks {
    private OneSidedChecks() {
    }

    /** @return the error that refuses the operation, or null if it may go */
    static @Nullable RuntimeException check(OneSidedEngine engine, ProtectionDomain pd, boolean put, MemoryRegion local,
                                            long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        String op = put ? "put" : "get";
        if (lengthBytes <= 0) {
            return new IllegalArgumentException(op + ": lengthBytes > 0 required but it was " + lengthBytes);
        }
        if (localOffset < 0 || remoteOffset < 0) {
            return new IllegalArgumentException(op + ": offsets >= 0 required but localOffset was " + localOffset + " and remoteOffset "
                + remoteOffset);
        }
        if (local.protectionDomain() != pd || !local.isValid()) {
            return new IllegalArgumentException(op + ": the local region " + (local.isValid() ? "is registered with another node"
                : "was deregistered") + "; register it with this connection's node (RdmaNode.registerMemory) and keep it registered");
        }
        if (localOffset + lengthBytes > local.length()) {
            return new RemoteAccessException(RemoteAccessException.Reason.BOUNDS, op + ": local range [" + localOffset + ", "
                + (localOffset + lengthBytes) + ") is past the end of the local region of " + local.length() + " bytes; keep localOffset + "
                + "lengthBytes <= " + local.length());
        }
        if (!(remote instanceof PeerRegion peer) || peer.engine() != engine) {
            return new RemoteAccessException(RemoteAccessException.Reason.NOT_REMOTE, op + ": " + remote + " is "
                + (remote.isOwner() ? "exposed by this side" : "not from this connection")
                + "; put and get take a region the peer exposed on this connection (remoteRegions())");
        }
        String invalid = peer.invalidReason();
        if (invalid != null) {
            return revoked(peer, invalid);
        }
        if (put ? !peer.access().allowsWrite() : !peer.access().allowsRead()) {
            return new RemoteAccessException(RemoteAccessException.Reason.RIGHTS, op + ": remote region " + peer.id() + " is exposed "
                + peer.access() + " only, and a " + op + " needs " + (put ? "WRITE" : "READ") + "; have the owner expose it with "
                + "RemoteAccess." + (put ? "WRITE" : "READ") + " or READ_WRITE");
        }
        if (remoteOffset + lengthBytes > peer.lengthBytes()) {
            return new RemoteAccessException(RemoteAccessException.Reason.BOUNDS, op + ": remote range [" + remoteOffset + ", "
                + (remoteOffset + lengthBytes) + ") is past the end of remote region " + peer.id() + " of " + peer.lengthBytes()
                + " bytes; keep remoteOffset + lengthBytes <= " + peer.lengthBytes());
        }
        return null;
    }

    static RemoteAccessException revoked(PeerRegion region, String reason) {
        return new RemoteAccessException(RemoteAccessException.Reason.REVOKED, "remote region " + region.id() + " may not be used: "
            + reason + "; nothing was posted");
    }
}
