package io.rdmaflux.ud;

import java.util.ArrayDeque;

/**
 * The memory windows this node's connections offered their peers for an RDMA WRITE (every CTS sent on a
 * reliable UD channel of the node): a WRITE carried as datagrams is placed only inside one of them, with its
 * rkey, so a peer can write nowhere else. The soft fabric checks rkeys inside the provider; over datagrams this
 * module places the data itself, hence the check here. Keeps the newest {@link #CAPACITY} windows.
 *
 * <p><b>Concurrency:</b> thread-safe (the channels of several nodes' rails may share nothing but this).
 */
final class WriteGrants {
    static final int CAPACITY = 1024;

    private record Window(int rkey, long address, long lengthBytes) {
    }

    private final ArrayDeque<Window> windows = new ArrayDeque<>();

    synchronized void grant(int rkey, long address, long lengthBytes) {
        if (windows.size() == CAPACITY) {
            windows.pollFirst();
        }
        windows.addLast(new Window(rkey, address, lengthBytes));
    }

    /** Whether {@code [address, +lengthBytes)} with {@code rkey} lies inside a granted window. */
    synchronized boolean allows(int rkey, long address, long lengthBytes) {
        for (Window w : windows) {
            if (w.rkey == rkey && address >= w.address && lengthBytes >= 0 && address + lengthBytes <= w.address + w.lengthBytes) {
                return true;
            }
        }
        return false;
    }
}
