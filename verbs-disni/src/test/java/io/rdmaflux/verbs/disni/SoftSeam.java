package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Device;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The test double of {@link RdmaSeam}: {@code rdma_cm} and verbs as the native layer behaves, on top of
 * soft-provider devices (one per IP address). The CM side is a small in-memory model of rdma_cm: ids
 * bind to the IP of a soft device, listen on ports, resolve addresses (ADDR_ERROR for an IP no device
 * has; UNREACHABLE for a host made {@link #silence silent}), connect (CONNECT_REQUEST on the listener's
 * channel, REJECTED with reason 8 where nothing listens), accept (both soft QPs connected, ESTABLISHED to
 * both sides), reject by destroying a request id (REJECTED, reason 28), disconnect (the soft QP to
 * ERROR, DISCONNECTED to both). The verbs side ({@link SoftSeamVerbs}) maps PDs, MRs, CQs and QPs onto
 * soft ones and executes DiSNI's stateful verb calls by translating their serialized work requests.
 *
 * <p>It is as strict as the native layer where the provider could go wrong: calls out of order
 * (connect before the route, accept on an id that brought no request, a QP on an unbound id, posting
 * sends before RTS, executing a freed call, destroying a channel with live ids) fail with the errno
 * librdmacm/libibverbs would give. It counts what it builds, so tests can check that work requests are
 * posted through re-executed calls and not through new ones.
 *
 * <p>Thread-safe: the CM calls hold this double's lock (a DEDICATED provider's thread reads events while
 * the test thread connects); the verbs calls go to the soft provider, which is thread-safe.
 */
final class SoftSeam implements RdmaSeam {
    /** What the double built and ran, for the tests. */
    static final class Counters {
        long idsCreated;
        long idsDestroyed;
        long channelsCreated;
        long channelsDestroyed;
        long qpsCreated;
        long qpsDestroyed;
        long sendCallsBuilt;
        long recvCallsBuilt;
        long pollCallsBuilt;
        long sendExecutes;
        long recvExecutes;
        long pollExecutes;
    }

    final Counters counters = new Counters();
    final Map<String, Device> devices;
    private final Map<InetSocketAddress, SoftCmId> bound = new HashMap<>();
    private final Set<String> silent = new HashSet<>();
    private final List<Channel> channels = new ArrayList<>();
    private int nextPort = 20_000;
    private final SoftSeamVerbs verbs = new SoftSeamVerbs(this);

    /** A double over {@code devices}: IP address → soft device. */
    SoftSeam(Map<String, Device> devices) {
        this.devices = Map.copyOf(devices);
    }

    /** Makes {@code ip} answer nothing: connects to it end with UNREACHABLE (ETIMEDOUT). */
    synchronized void silence(String ip) {
        silent.add(ip);
    }

    @Override
    public synchronized EventChannel createEventChannel() {
        Channel c = new Channel();
        channels.add(c);
        counters.channelsCreated++;
        return c;
    }

    /** Asserts every id, channel and QP the provider created was destroyed. */
    synchronized void assertAllReleased() {
        if (counters.idsCreated != counters.idsDestroyed || counters.channelsCreated != counters.channelsDestroyed
            || counters.qpsCreated != counters.qpsDestroyed) {
            throw new AssertionError("native resources leaked: ids " + counters.idsCreated + " created, " + counters.idsDestroyed
                + " destroyed; channels " + counters.channelsCreated + "/" + counters.channelsDestroyed + "; QPs "
                + counters.qpsCreated + "/" + counters.qpsDestroyed);
        }
    }

    /** One rdma_event_channel: a queue of events. */
    final class Channel implements EventChannel {
        final ArrayDeque<CmEvent> events = new ArrayDeque<>();
        int liveIds;
        boolean destroyed;

        @Override
        public CmId createId() throws IOException {
            synchronized (SoftSeam.this) {
                if (destroyed) {
                    throw new IOException("rdma_create_id: EINVAL (channel destroyed)");
                }
                return new SoftCmId(this);
            }
        }

        @Override
        public @Nullable CmEvent poll(int timeoutMs) throws IOException {
            synchronized (SoftSeam.this) {
                if (destroyed) {
                    throw new IOException("rdma_get_cm_event: EBADF (channel destroyed)");
                }
                if (events.isEmpty() && timeoutMs > 0) {
                    try {
                        SoftSeam.this.wait(timeoutMs); // as the native poll(2) on the channel's fd
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return events.poll();
            }
        }

        @Override
        public void destroy() throws IOException {
            synchronized (SoftSeam.this) {
                if (liveIds != 0) {
                    throw new IOException("rdma_destroy_event_channel: EBUSY (" + liveIds + " ids still use it)");
                }
                if (!destroyed) {
                    destroyed = true;
                    counters.channelsDestroyed++;
                }
            }
        }

        void queue(int type, int status, SoftCmId id, @Nullable SoftCmId listenId, byte[] privateData) {
            if (!destroyed && !id.destroyed) {
                events.add(new CmEvent(type, status, id, listenId, privateData));
                SoftSeam.this.notifyAll();
            }
        }
    }

    /** One rdma_cm_id. */
    final class SoftCmId implements CmId {
        final Channel channel;
        @Nullable InetSocketAddress local;
        @Nullable InetSocketAddress remote;
        @Nullable Device device;
        boolean listening;
        boolean routeResolved;
        @Nullable SoftSeamVerbs.Qp qp;
        @Nullable SoftCmId requester;
        @Nullable SoftCmId peer;
        boolean accepted;
        boolean connected;
        boolean destroyed;
        byte[] privateData = new byte[0];

        SoftCmId(Channel channel) {
            this.channel = channel;
            channel.liveIds++;
            counters.idsCreated++;
        }

        private void live(String call) throws IOException {
            if (destroyed) {
                throw new IOException(call + ": EBADF (id destroyed)");
            }
        }

        @Override
        public void bindAddr(InetSocketAddress address) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_bind_addr");
                String ip = address.getAddress().getHostAddress();
                Device d = devices.get(ip);
                if (d == null) {
                    throw new IOException("rdma_bind_addr: EADDRNOTAVAIL (no RDMA device has address " + ip + ")");
                }
                InetSocketAddress a = new InetSocketAddress(address.getAddress(), address.getPort() == 0 ? nextPort++ : address.getPort());
                if (bound.containsKey(a)) {
                    throw new IOException("rdma_bind_addr: EADDRINUSE (" + a + ")");
                }
                bound.put(a, this);
                local = a;
                device = d;
            }
        }

        @Override
        public void listen(int backlog) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_listen");
                if (local == null) {
                    throw new IOException("rdma_listen: EINVAL (id not bound)");
                }
                listening = true;
            }
        }

        @Override
        public InetSocketAddress source() throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_get_local_addr");
                if (local == null) {
                    throw new IOException("rdma_get_local_addr: EINVAL (id not bound)");
                }
                return local;
            }
        }

        @Override
        public void resolveAddr(InetSocketAddress source, InetSocketAddress destination, int timeoutMs) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_resolve_addr");
                if (local == null) {
                    bindAddr(source);
                }
                remote = destination;
                String host = destination.getAddress().getHostAddress();
                if (!devices.containsKey(host)) {
                    channel.queue(NativeCodes.CM_ADDR_ERROR, -113, this, null, new byte[0]); // EHOSTUNREACH
                } else {
                    channel.queue(NativeCodes.CM_ADDR_RESOLVED, 0, this, null, new byte[0]);
                }
            }
        }

        @Override
        public void resolveRoute(int timeoutMs) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_resolve_route");
                if (remote == null) {
                    throw new IOException("rdma_resolve_route: EINVAL (address not resolved)");
                }
                routeResolved = true;
                channel.queue(NativeCodes.CM_ROUTE_RESOLVED, 0, this, null, new byte[0]);
            }
        }

        @Override
        public Context context() throws IOException {
            synchronized (SoftSeam.this) {
                live("id->verbs");
                Device d = device;
                if (d == null) {
                    throw new IOException("id->verbs is NULL: the id is not bound to a device");
                }
                return verbs.context(d);
            }
        }

        @Override
        public Qp createQp(Pd pd, Cq cq, com.ibm.disni.verbs.IbvQPInitAttr attributes, QpTimers timers) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_create_qp");
                Device d = device;
                if (d == null) {
                    throw new IOException("rdma_create_qp: EINVAL (id not bound to a device)");
                }
                if (qp != null) {
                    throw new IOException("rdma_create_qp: EINVAL (the id already has a QP)");
                }
                SoftSeamVerbs.Qp q = verbs.createQp(d, pd, cq, attributes, timers);
                qp = q;
                return q;
            }
        }

        @Override
        public void connect(ConnParams params) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_connect");
                if (!routeResolved || qp == null) {
                    throw new IOException("rdma_connect: EINVAL (" + (routeResolved ? "no QP on the id" : "route not resolved") + ")");
                }
                InetSocketAddress to = remote;
                SoftCmId listener = bound.get(to);
                if (silent.contains(to.getAddress().getHostAddress())) {
                    channel.queue(NativeCodes.CM_UNREACHABLE, -110, this, null, new byte[0]); // ETIMEDOUT
                } else if (listener == null || !listener.listening) {
                    channel.queue(NativeCodes.CM_REJECTED, NativeCodes.REJ_INVALID_SERVICE_ID, this, null, new byte[0]);
                } else {
                    SoftCmId request = new SoftCmId(listener.channel);
                    request.device = listener.device;
                    request.local = listener.local;
                    request.remote = local;
                    request.requester = this;
                    privateData = params.privateData().clone();
                    listener.channel.queue(NativeCodes.CM_CONNECT_REQUEST, 0, request, listener, privateData);
                }
            }
        }

        @Override
        public void accept(ConnParams params) throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_accept");
                SoftCmId from = requester;
                if (from == null || accepted) {
                    throw new IOException("rdma_accept: EINVAL (" + (from == null ? "the id brought no connect request" : "already accepted") + ")");
                }
                if (qp == null || from.qp == null) {
                    throw new IOException("rdma_accept: EINVAL (no QP on the id)");
                }
                accepted = true;
                if (from.destroyed) {
                    return; // the requester gave up: no one to establish with
                }
                from.qp.soft.connect(qp.soft.localEndpoint());
                qp.soft.connect(from.qp.soft.localEndpoint());
                peer = from;
                from.peer = this;
                connected = true;
                from.connected = true;
                from.channel.queue(NativeCodes.CM_ESTABLISHED, 0, from, null, params.privateData().clone());
                channel.queue(NativeCodes.CM_ESTABLISHED, 0, this, null, from.privateData);
            }
        }

        @Override
        public void disconnect() throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_disconnect");
                if (qp != null) {
                    qp.soft.toError();
                }
                if (!connected) {
                    throw new IOException("rdma_disconnect: EINVAL (not connected)");
                }
                hangUp();
            }
        }

        private void hangUp() {
            connected = false;
            channel.queue(NativeCodes.CM_DISCONNECTED, 0, this, null, new byte[0]);
            SoftCmId p = peer;
            if (p != null && p.connected) {
                p.connected = false;
                p.channel.queue(NativeCodes.CM_DISCONNECTED, 0, p, null, new byte[0]);
            }
        }

        @Override
        public void destroyQp() throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_destroy_qp");
                SoftSeamVerbs.Qp q = qp;
                if (q == null) {
                    throw new IOException("rdma_destroy_qp: EINVAL (no QP)");
                }
                q.destroy();
                qp = null;
            }
        }

        @Override
        public void destroy() throws IOException {
            synchronized (SoftSeam.this) {
                live("rdma_destroy_id");
                if (qp != null) {
                    throw new IOException("rdma_destroy_id: EBUSY (destroy the QP first)");
                }
                SoftCmId from = requester;
                if (from != null && !accepted && !from.destroyed) {
                    from.channel.queue(NativeCodes.CM_REJECTED, NativeCodes.REJ_CONSUMER_DEFINED, from, null, new byte[0]);
                }
                if (connected) {
                    SoftCmId p = peer;
                    connected = false;
                    if (p != null && p.connected) {
                        p.connected = false;
                        p.channel.queue(NativeCodes.CM_DISCONNECTED, 0, p, null, new byte[0]);
                    }
                }
                if (local != null && bound.get(local) == this) {
                    bound.remove(local);
                }
                destroyed = true;
                channel.liveIds--;
                counters.idsDestroyed++;
            }
        }

        @Override
        public String toString() {
            synchronized (SoftSeam.this) {
                return "cm_id{" + local + (remote != null ? " -> " + remote : "") + (listening ? ", listening" : "") + "}";
            }
        }
    }
}
