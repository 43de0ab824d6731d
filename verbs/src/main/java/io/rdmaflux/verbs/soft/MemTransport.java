package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The in-JVM {@link FrameTransport} ({@code mem://<device>:<port>}): a frame is handed to the
 * destination NIC by reference, pushed onto its lock-free {@link FrameInbox}; the destination
 * NIC's engine drains the inbox in {@link Attachment#poll}. RC payloads stay in the sender's
 * registered memory until the responder copies them into the target region, so an RDMA WRITE or
 * SEND costs exactly one memory copy, as a NIC's DMA does.
 *
 * <p>Frames for a NIC that has closed are released on the spot (dropped). An idle engine thread waits
 * for frames in {@link Attachment#awaitWork}: the thread that pushes frames to its inbox unparks it.
 */
public final class MemTransport implements FrameTransport {
    /** The fabric name in addresses. */
    public static final String FABRIC = "mem";

    private final String fabricName;
    private final ConcurrentHashMap<String, MemAttachment> nics = new ConcurrentHashMap<>();

    /** @param fabricName the owning {@link SoftFabric}'s name, for messages */
    MemTransport(String fabricName) {
        this.fabricName = fabricName;
    }

    @Override
    public String fabric() {
        return FABRIC;
    }

    @Override
    public Attachment attach(SoftDevice nic) {
        MemAttachment a = new MemAttachment(nic);
        if (nics.putIfAbsent(nic.name(), a) != null) {
            throw new VerbsException("a device named '" + nic.name() + "' is already attached to mem fabric '"
                + fabricName + "'; device names must be unique on a fabric");
        }
        return a;
    }

    /** Names of the attached devices. */
    List<String> deviceNames() {
        return List.copyOf(nics.keySet());
    }

    private final class MemAttachment implements Attachment {
        private final SoftDevice nic;
        private final FrameInbox inbox = new FrameInbox();
        private volatile boolean closed;
        /** The engine thread while it waits in {@link #awaitWork}, else null. */
        private volatile @Nullable Thread waiter;
        /** A {@link #wakeup()} came while no wait was in progress: the next one returns at once. */
        private volatile boolean wakeupPending;
        private @Nullable SoftFrame backlog;
        private @Nullable MemAttachment pendingTarget;
        private @Nullable SoftFrame pendingNewest;
        private @Nullable SoftFrame pendingOldest;

        MemAttachment(SoftDevice nic) {
            this.nic = nic;
        }

        @Override
        public PortAddress bind(SoftPort port) {
            return new PortAddress(FABRIC, nic.name(), port.number());
        }

        @Override
        public Route resolve(PortAddress address) {
            if (!FABRIC.equals(address.fabric())) {
                throw new VerbsException("address " + address + " is not on the mem fabric; use mem://<device>:<port>");
            }
            MemAttachment target = nics.get(address.host());
            if (target == null) {
                throw new VerbsException("no device '" + address.host() + "' on mem fabric '" + fabricName
                    + "' (address " + address + "); devices are " + deviceNames());
            }
            int ports = target.nic.ports().size();
            if (address.port() < 1 || address.port() > ports) {
                throw new VerbsException("address " + address + " names port " + address.port() + " but device '"
                    + address.host() + "' has ports 1.." + ports);
            }
            return new MemRoute(address, target);
        }

        @Override
        public void transmit(SoftFrame frame) {
            MemRoute r = (MemRoute) frame.route;
            if (r == null || r.target.closed) {
                frame.release();
                return;
            }
            // the receiving NIC checks it against the QP's peer: a frame cannot claim another sender
            frame.sourceHost = nic.name();
            MemAttachment target = r.target;
            if (target != pendingTarget) {
                flush();
                pendingTarget = target;
                pendingOldest = frame;
                frame.next = null;
            } else {
                frame.next = pendingNewest;
            }
            pendingNewest = frame;
        }

        @Override
        public void flush() {
            MemAttachment target = pendingTarget;
            if (target != null) {
                target.inbox.pushChain(pendingNewest, pendingOldest);
                // the push is a CAS (a full fence) before this read, the waiter's store a volatile one before
                // its emptiness check: either it sees the frames or this sees it waiting
                Thread w = target.waiter;
                if (w != null) {
                    LockSupport.unpark(w);
                }
                pendingTarget = null;
                pendingNewest = null;
                pendingOldest = null;
            }
        }

        @Override
        public int poll(long nowNs, int limit) {
            SoftFrame f = backlog;
            if (f == null) {
                f = inbox.drain();
                if (f == null) {
                    return 0;
                }
            }
            int n = 0;
            FramePool chainPool = null;
            SoftFrame chainFirst = null;
            SoftFrame chainLast = null;
            while (f != null && n < limit) {
                SoftFrame next = f.next;
                f.next = null;
                if (nic.onFrameArrived(f, nowNs)) {
                    f.clearReferences();
                    if (f.pool != chainPool) {
                        if (chainPool != null) {
                            chainPool.giveBackChain(chainFirst, chainLast);
                        }
                        chainPool = f.pool;
                        chainFirst = f;
                        chainLast = f;
                    } else {
                        f.next = chainFirst;
                        chainFirst = f;
                    }
                }
                n++;
                f = next;
            }
            if (chainPool != null) {
                chainPool.giveBackChain(chainFirst, chainLast);
            }
            backlog = f;
            return n;
        }

        /**
         * Parks the NIC's engine thread until frames are pushed to this NIC's inbox (the pushing
         * thread unparks it), {@link #wakeup()}, or {@code timeoutNs}: an idle node driving an
         * INVOKER provider on the mem fabric then takes a frame at once instead of after its park
         * period. A {@code wakeup()} with no wait in progress makes the next one return at once (as
         * {@code Selector.wakeup()} does). Returns false at once while frames are held back or when closed.
         */
        @Override
        public boolean awaitWork(long timeoutNs) {
            if (closed || backlog != null || timeoutNs <= 0) {
                return false;
            }
            waiter = Thread.currentThread();
            try {
                if (wakeupPending) {
                    wakeupPending = false;
                } else if (inbox.isEmpty()) {
                    LockSupport.parkNanos(this, timeoutNs);
                }
            } finally {
                // cleared while still published as the waiter: a wakeup racing this unparks, leaving a permit
                wakeupPending = false;
                waiter = null;
            }
            return true;
        }

        @Override
        public void wakeup() {
            wakeupPending = true;
            Thread w = waiter;
            if (w != null) {
                LockSupport.unpark(w);
            }
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            wakeup();
            nics.remove(nic.name(), this);
            flush();
            SoftFrame f = backlog;
            backlog = null;
            releaseChain(f);
            releaseChain(inbox.drain());
        }

        private void releaseChain(@Nullable SoftFrame f) {
            while (f != null) {
                SoftFrame next = f.next;
                f.next = null;
                f.release();
                f = next;
            }
        }
    }

    private record MemRoute(PortAddress destination, MemAttachment target) implements Route {
    }
}
