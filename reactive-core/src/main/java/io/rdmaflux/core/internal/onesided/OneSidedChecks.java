package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.UnsupportedCapabilityException;
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

    /**
     * The checks of an atomic ({@code name}: fetchAndAdd or compareAndSwap) on the 8 bytes at
     * {@code offsetBytes} of {@code remote}: this node's provider has atomics, the region is the peer's on
     * this connection, valid, exposed with ATOMIC, and the word is 8-byte aligned and inside it.
     *
     * @return the error that refuses the atomic, or null if it may go
     */
    static @Nullable RuntimeException checkAtomic(OneSidedEngine engine, ProtectionDomain pd, String name, RemoteRegion remote,
                                                  long offsetBytes) {
        if (!pd.device().capabilities().atomics()) {
            return new UnsupportedCapabilityException("atomics", name + ": device '" + pd.device().name() + "' of this node has no "
                + "atomics (DeviceCapabilities.atomics false, as for the disni provider); run the node on a provider with "
                + "atomics such as 'soft' or 'ucx', or guard the word with a lock of your own and use get and put");
        }
        if (offsetBytes < 0) {
            return new IllegalArgumentException(name + ": offsetBytes >= 0 required but it was " + offsetBytes);
        }
        if (!(remote instanceof PeerRegion peer) || peer.engine() != engine) {
            return new RemoteAccessException(RemoteAccessException.Reason.NOT_REMOTE, name + ": " + remote + " is "
                + (remote.isOwner() ? "exposed by this side" : "not from this connection")
                + "; atomics take a region the peer exposed on this connection (remoteRegions())");
        }
        String invalid = peer.invalidReason();
        if (invalid != null) {
            return revoked(peer, invalid);
        }
        if (!peer.access().allowsAtomic()) {
            return new RemoteAccessException(RemoteAccessException.Reason.RIGHTS, name + ": remote region " + peer.id() + " is exposed "
                + peer.access() + " only, and an atomic needs ATOMIC; have the owner expose it with RemoteAccess."
                + peer.access().withAtomic() + " (or RemoteAccess.ATOMIC)");
        }
        if ((offsetBytes & (Long.BYTES - 1)) != 0 || ((peer.address() + offsetBytes) & (Long.BYTES - 1)) != 0) {
            long down = offsetBytes - ((peer.address() + offsetBytes) & (Long.BYTES - 1));
            return new RemoteAccessException(RemoteAccessException.Reason.ALIGNMENT, name + ": remote offset " + offsetBytes
                + " of region " + peer.id() + " is not an 8-byte aligned word (address 0x" + Long.toHexString(peer.address() + offsetBytes)
                + "); atomics act on aligned 64-bit words: use an offset whose address is a multiple of 8"
                + (down >= 0 ? ", e.g. " + down : "") + ", and expose regions starting at 8-byte aligned addresses");
        }
        if (offsetBytes + Long.BYTES > peer.lengthBytes()) {
            return new RemoteAccessException(RemoteAccessException.Reason.BOUNDS, name + ": the word [" + offsetBytes + ", "
                + (offsetBytes + Long.BYTES) + ") is past the end of remote region " + peer.id() + " of " + peer.lengthBytes()
                + " bytes; keep offsetBytes + 8 <= " + peer.lengthBytes());
        }
        return null;
    }

    static RemoteAccessException revoked(PeerRegion region, String reason) {
        return new RemoteAccessException(RemoteAccessException.Reason.REVOKED, "remote region " + region.id() + " may not be used: "
            + reason + "; nothing was posted");
    }
}
