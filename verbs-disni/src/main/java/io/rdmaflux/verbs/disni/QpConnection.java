package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Comparator;
import org.jspecify.annotations.Nullable;

/**
 * The {@code rdma_cm} side of one RC queue pair: DiSNI has no {@code ibv_modify_qp}, so a QP is
 * created on a CM id and reaches RTS only through {@code rdma_connect}/{@code rdma_accept}. Each QP
 * listens on its own CM id ({@code disni://<ip>:<port>}, its endpoint's address); when the SPI moves it
 * to RTR with the peer's endpoint, the side whose endpoint orders first (address, then port, then QP
 * number) connects and the other accepts:
 *
 * <pre>
 *  active:  createId → resolveAddr ─ADDR_RESOLVED→ resolveRoute ─ROUTE_RESOLVED→ createQp, post held
 *           receives, connect ─ESTABLISHED→ established
 *  passive: listener ─CONNECT_REQUEST(new id)→ [held until RTR] createQp on the new id, post held
 *           receives, accept ─ESTABLISHED→ established
 *  failure: ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, REJECTED (refused: nothing listens; or rejected),
 *           CONNECT_ERROR, DEVICE_REMOVAL → the QP fails (ERROR; held sends RETRY_EXC_ERR then WR_FLUSH_ERR)
 * </pre>
 *
 * Private data (8 bytes, big-endian): the sender's QP number, then the QP number it expects at the
 * other end; a passive side rejects a request whose numbers are not the ones its QP was given (a
 * request to a listener whose QP is gone is rejected by the dispatcher). A QP moved to ERROR before
 * establishment still completes the exchange and then disconnects, so its peer sees a connected QP that
 * no longer answers (RETRY_EXC_ERR on its next send), as after an {@code ibv_modify_qp} to ERROR.
 *
 * <p><b>Concurrency:</b> every method runs with {@link CmEvents#lock} held.
 */
final class QpConnection implements CmEvents.Handler {
    /** Where the exchange stands. */
    enum Phase { IDLE, RESOLVING_ADDRESS, RESOLVING_ROUTE, CONNECTING, ACCEPTING, ESTABLISHED, DISCONNECTED, FAILED, CLOSED }

    private static final Comparator<QpEndpoint> ORDER = Comparator
        .comparing((QpEndpoint e) -> e.address().host())
        .thenComparingInt(e -> e.address().port())
        .thenComparingInt(QpEndpoint::qpn);

    private final DisniQueuePair qp;
    private final CmEvents cm;
    private final int timeoutMs;
    private final RdmaSeam.CmId listener;
    private final PortAddress address;
    private RdmaSeam.@Nullable CmId conn;
    private boolean nativeQp;
    private RdmaSeam.@Nullable CmEvent pendingRequest;
    private @Nullable QpEndpoint remote;
    private Phase phase = Phase.IDLE;
    private boolean active;

    /** Creates the QP's listening id on its device's address (call with the CM lock held). */
    QpConnection(DisniQueuePair qp, CmEvents cm, String ip, int timeoutMs) {
        this.qp = qp;
        this.cm = cm;
        this.timeoutMs = timeoutMs;
        RdmaSeam.CmId id = cm.createId();
        try {
            id.bindAddr(new InetSocketAddress(InetAddress.getByName(ip), 0));
            id.listen(4);
            this.address = new PortAddress(DisniProvider.FABRIC, ip, id.source().getPort());
        } catch (IOException e) {
            CmEvents.destroyQuietly(id);
            throw new VerbsException("cannot listen for the QP's connection on " + ip + " (rdma_bind_addr/rdma_listen): " + e.getMessage(), e);
        }
        this.listener = id;
        cm.register(id, this);
    }

    /** The listening address, part of the QP's endpoint. */
    PortAddress address() {
        return address;
    }

    Phase phase() {
        return phase;
    }

    /** Whether this side connects (true) or accepts (false); meaningful once started. */
    boolean isActive() {
        return active;
    }

    /**
     * Starts the exchange toward {@code peer} (the QP just moved to RTR).
     *
     * @throws VerbsException when {@code peer} is not a disni endpoint, or is this QP itself
     */
    void start(QpEndpoint self, QpEndpoint peer) {
        if (!DisniProvider.FABRIC.equals(peer.address().fabric())) {
            throw new VerbsException("remote endpoint " + peer.address() + " is not on fabric '" + DisniProvider.FABRIC
                + "'; connect a disni QP to the localEndpoint() of another disni QP");
        }
        int order = ORDER.compare(self, peer);
        if (order == 0) {
            throw new VerbsException("remote endpoint " + peer + " is this QP's own endpoint; a QP cannot connect to itself");
        }
        remote = peer;
        active = order < 0;
        if (active) {
            RdmaSeam.CmId id = cm.createId();
            cm.register(id, this);
            conn = id;
            phase = Phase.RESOLVING_ADDRESS;
            try {
                InetSocketAddress dst = new InetSocketAddress(InetAddress.getByName(peer.address().host()), peer.address().port());
                id.resolveAddr(new InetSocketAddress(InetAddress.getByName(address.host()), 0), dst, timeoutMs);
            } catch (UnknownHostException e) {
                fail("remote host " + peer.address().host() + " cannot be resolved: " + e.getMessage());
            } catch (IOException e) {
                fail("rdma_resolve_addr to " + peer.address() + " failed: " + e.getMessage());
            }
        } else {
            RdmaSeam.CmEvent request = pendingRequest;
            pendingRequest = null;
            if (request != null) {
                onRequest(request);
            }
        }
    }

    @Override
    public void onCmEvent(RdmaSeam.CmEvent e) {
        if (phase == Phase.CLOSED) {
            if (e.type() == NativeCodes.CM_CONNECT_REQUEST) {
                CmEvents.destroyQuietly(e.id());
            }
            return;
        }
        switch (e.type()) {
            case NativeCodes.CM_CONNECT_REQUEST -> onRequest(e);
            case NativeCodes.CM_ADDR_RESOLVED -> step(Phase.RESOLVING_ADDRESS, e, () -> {
                phase = Phase.RESOLVING_ROUTE;
                conn().resolveRoute(timeoutMs);
            });
            case NativeCodes.CM_ROUTE_RESOLVED -> step(Phase.RESOLVING_ROUTE, e, () -> {
                createNativeQp();
                phase = Phase.CONNECTING;
                conn().connect(params());
            });
            case NativeCodes.CM_ESTABLISHED -> {
                if (phase == Phase.CONNECTING || phase == Phase.ACCEPTING) {
                    phase = Phase.ESTABLISHED;
                    qp.onEstablished();
                }
            }
            case NativeCodes.CM_DISCONNECTED -> {
                if (phase == Phase.ESTABLISHED) {
                    phase = Phase.DISCONNECTED;
                }
            }
            case NativeCodes.CM_ADDR_ERROR, NativeCodes.CM_ROUTE_ERROR, NativeCodes.CM_UNREACHABLE, NativeCodes.CM_REJECTED,
                NativeCodes.CM_CONNECT_ERROR, NativeCodes.CM_DEVICE_REMOVAL -> {
                if (e.id() == conn && phase != Phase.FAILED) {
                    fail(describe(e));
                }
            }
            default -> {
                // CONNECT_RESPONSE (only without a QP), TIMEWAIT_EXIT, ADDR_CHANGE: nothing to do
            }
        }
    }

    private interface CmStep {
        void run() throws IOException;
    }

    private void step(Phase expected, RdmaSeam.CmEvent e, CmStep next) {
        if (phase != expected || e.id() != conn) {
            return;
        }
        try {
            next.run();
        } catch (IOException | VerbsException ex) {
            fail(NativeCodes.cmEventName(e.type()) + " from " + remote + ", then " + ex.getMessage());
        }
    }

    private void onRequest(RdmaSeam.CmEvent e) {
        QpEndpoint peer = remote;
        if (peer == null) {
            // not yet in RTR: hold one request until the SPI gives the remote endpoint
            RdmaSeam.CmEvent older = pendingRequest;
            if (older != null) {
                CmEvents.destroyQuietly(older.id());
            }
            pendingRequest = e;
            return;
        }
        if (active || conn != null || phase == Phase.FAILED || !expected(e.privateData(), peer)) {
            CmEvents.destroyQuietly(e.id()); // DiSNI has no rdma_reject: the kernel rejects when the id goes
            return;
        }
        conn = e.id();
        cm.register(e.id(), this);
        try {
            createNativeQp();
            phase = Phase.ACCEPTING;
            e.id().accept(params());
        } catch (IOException | VerbsException ex) {
            fail("accepting the connection from " + peer.address() + " failed: " + ex.getMessage());
        }
    }

    private boolean expected(byte[] privateData, QpEndpoint peer) {
        if (privateData.length < 8) {
            return true; // the native layer did not hand the private data up: nothing to check against
        }
        ByteBuffer b = ByteBuffer.wrap(privateData);
        return b.getInt(0) == peer.qpn() && b.getInt(4) == qp.qpNumber();
    }

    private RdmaSeam.ConnParams params() {
        QpEndpoint peer = remote;
        byte[] data = ByteBuffer.allocate(8).putInt(qp.qpNumber()).putInt(peer == null ? 0 : peer.qpn()).array();
        return new RdmaSeam.ConnParams(data, qp.attributes().retryCount(), qp.attributes().rnrRetryCount());
    }

    private RdmaSeam.CmId conn() {
        RdmaSeam.CmId c = conn;
        if (c == null) {
            throw new IllegalStateException("no connection id");
        }
        return c;
    }

    private void createNativeQp() throws IOException {
        qp.createNativeQp(conn());
        nativeQp = true;
    }

    private String describe(RdmaSeam.CmEvent e) {
        String what = switch (e.type()) {
            case NativeCodes.CM_REJECTED -> e.status() == NativeCodes.REJ_INVALID_SERVICE_ID
                ? "refused: nothing listens there (the peer QP is closed, or the endpoint is wrong)"
                : "rejected by the peer (reason " + e.status() + ")";
            case NativeCodes.CM_ADDR_ERROR -> "unreachable: the address does not resolve to an RDMA device (status " + e.status() + ")";
            case NativeCodes.CM_ROUTE_ERROR -> "unreachable: no route (status " + e.status() + ")";
            case NativeCodes.CM_UNREACHABLE -> "unreachable: the peer did not answer (status " + e.status() + ")";
            case NativeCodes.CM_DEVICE_REMOVAL -> "the RDMA device was removed";
            default -> "connection error (status " + e.status() + ")";
        };
        return "connection to " + (remote == null ? "?" : remote.address()) + " " + what + " [" + NativeCodes.cmEventName(e.type()) + "]";
    }

    /** Where the peer listens, for messages. */
    String remoteAddress() {
        QpEndpoint peer = remote;
        return peer == null ? "the peer" : peer.address().toString();
    }

    /** Abandons the exchange (CM lock held): the QP fails with {@code reason}; a late request is rejected. */
    void giveUp(String reason) {
        if (phase == Phase.ESTABLISHED || phase == Phase.FAILED || phase == Phase.CLOSED) {
            return;
        }
        RdmaSeam.CmEvent request = pendingRequest;
        pendingRequest = null;
        if (request != null) {
            CmEvents.destroyQuietly(request.id());
        }
        fail(reason); // a request arriving from now on is rejected (phase FAILED)
    }

    private void fail(String reason) {
        phase = Phase.FAILED;
        qp.onConnectionFailed(reason);
    }

    /** Moves the native QP to ERROR ({@code rdma_disconnect}); the peer gets DISCONNECTED. */
    void disconnect() {
        RdmaSeam.CmId c = conn;
        if (c != null && nativeQp) {
            try {
                c.disconnect();
            } catch (IOException e) {
                // rdma_disconnect moves the QP to ERROR before it can fail on an unconnected id
            }
        }
    }

    /** Destroys the native QP and every id of this QP (a connected peer gets DISCONNECTED). */
    void close() {
        phase = Phase.CLOSED;
        RdmaSeam.CmEvent request = pendingRequest;
        pendingRequest = null;
        if (request != null) {
            CmEvents.destroyQuietly(request.id());
        }
        RdmaSeam.CmId c = conn;
        conn = null;
        if (c != null) {
            cm.unregister(c);
            if (nativeQp) {
                try {
                    c.destroyQp();
                } catch (IOException e) {
                    // closing
                }
            }
            CmEvents.destroyQuietly(c);
        }
        cm.unregister(listener);
        CmEvents.destroyQuietly(listener);
    }
}
