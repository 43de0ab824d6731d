package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import org.jspecify.annotations.Nullable;

/**
 * The protection checks a queue pair makes before it touches registered memory: the key names a
 * valid region, the region is in the QP's protection domain, the range lies inside it, and it grants
 * the access right, as verbs define memory protection (IBA Vol. 1, chapter 10). Local access goes through an lkey (the
 * requester's SGEs, the responder's receive SGEs), remote access through an rkey (the responder's
 * RDMA WRITE, READ and atomic targets).
 *
 * <p>Each check returns null when access is allowed, else the reason, naming the key, range or right
 * at fault; strings are built only on failure. Stateless: any thread.
 */
final class RegionCheck {
    private RegionCheck() {
    }

    /**
     * Null when {@code [addr, addr+len)} is usable locally through {@code lkey} by a QP of {@code pd}
     * (with LOCAL_WRITE when {@code write}), else the reason.
     */
    static @Nullable String local(SoftProtectionDomain pd, @Nullable SoftMemoryRegion mr, int lkey, long addr, int len,
                                  boolean write) {
        return check(pd, mr, false, lkey, addr, len, write ? Access.LOCAL_WRITE : 0);
    }

    /**
     * Null when a peer may use {@code [addr, addr+len)} of the memory of a QP of {@code pd} through
     * {@code rkey} with {@code right}, else the reason.
     */
    static @Nullable String remote(SoftProtectionDomain pd, @Nullable SoftMemoryRegion mr, int rkey, long addr, int len,
                                   int right) {
        return check(pd, mr, true, rkey, addr, len, right);
    }

    /** The checks shared by local and remote access; {@code right} 0 checks no access right. */
    private static @Nullable String check(SoftProtectionDomain pd, @Nullable SoftMemoryRegion mr, boolean remote, int key,
                                          long addr, int len, int right) {
        if (mr == null || (remote ? mr.rkey() : mr.lkey()) != key || !mr.isValid()) {
            return keyName(remote, key) + " names no registered memory region (wrong key or deregistered)";
        }
        if (mr.pd() != pd) {
            return keyName(remote, key) + " belongs to another protection domain" + (remote ? " than the responder QP's" : "");
        }
        if (!mr.contains(addr, len)) {
            return (remote ? "remote [0x" : "[0x") + Long.toHexString(addr) + ", +" + len + ") lies outside "
                + (remote ? "the" : "its") + " region [0x" + Long.toHexString(mr.address()) + ", +" + mr.length() + ")";
        }
        if (right != 0 && (mr.access() & right) == 0) {
            return "region " + keyName(remote, key) + " lacks " + Access.toString(right)
                + " (registered " + Access.toString(mr.access()) + ")";
        }
        return null;
    }

    private static String keyName(boolean remote, int key) {
        return (remote ? "rkey 0x" : "lkey 0x") + Integer.toHexString(key);
    }
}
