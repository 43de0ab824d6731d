package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.CmException;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The IP fabric's {@link ConnectionManager}, like {@code rdma_cm} over TCP: a listener is a TCP
 * server socket at {@code net://<ip>:<tcp port>}; {@link #connect} opens a TCP connection to it,
 * sends a REQUEST carrying the requester's {@link CmParams} (QP endpoints: address, QPN, start PSN,
 * MTU; private data), and completes with the listener's ACCEPT, or fails with its REJECT. One TCP
 * connection per exchange, closed after it; the QPs' own traffic runs on the {@link NetTransport}.
 * Wire format: {@link CmCodec}.
 *
 * <h2>Errors</h2>
 * {@link #listen}: address in use, or an IP that is not local, throws a {@link VerbsException}
 * naming the address. {@link #connect} completes exceptionally with a {@link VerbsException} naming
 * the address when the host is unknown, the connection is refused (nothing listens) or the host is
 * unreachable, the listener rejects, the peer sends a malformed reply, or no reply arrives within
 * {@code timeoutNs} of the provider's clock. A malformed request at a listener is answered with a
 * REJECT (when it can be parsed that far) and the connection closed; the listener stays up.
 *
 * <h2>Threading</h2>
 * No threads of its own: all socket I/O is non-blocking and done in {@link #doWork(long)}, which the
 * provider's engine runs every pass (DEDICATED thread, or {@code progress} in INVOKER mode). Request
 * handlers run there too and must not block; a handler may complete its reply future later, from
 * any thread. {@code listen}, {@code connect} and {@code close} are thread-safe.
 */
public final class NetConnectionManager implements ConnectionManager, ProgressAgent {
    /** How long a listener waits for a request on an accepted connection, ns. */
    static final long REQUEST_TIMEOUT_NS = 10_000_000_000L;

    private final SoftProvider provider;
    private final Selector selector;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final List<Exchange> exchanges = new ArrayList<>();
    private final List<NetListener> listeners = new ArrayList<>();
    private final Consumer<SelectionKey> onReady = this::onReady;
    private long nowNs;
    /**
     * With no exchange under way (listeners only) the selector runs once per this many passes or
     * {@link #IDLE_SELECT_EVERY_NS}, whichever comes first: it runs in every engine pass of the NIC, so
     * a node that listens paid an {@code epoll_wait} per pass on its data path (some 8 per 64 B round trip
     * on the IP fabric, issue 19). An incoming connection waits at most that long to be accepted; once
     * an exchange is under way the selector runs every pass.
     */
    static final int IDLE_SELECT_EVERY_PASSES = 64;
    /** ... or this often, ns. */
    static final long IDLE_SELECT_EVERY_NS = 100_000;
    private int passesSinceSelect;
    private long lastSelectNs;
    private volatile boolean closed;
    private final NetPeerFilter filter;
    private final java.util.concurrent.atomic.AtomicLong requestsRefused = new java.util.concurrent.atomic.AtomicLong();

    /** A connection manager for {@code provider} (pass {@code NetConnectionManager::new} to the provider builder). */
    public NetConnectionManager(SoftProvider provider) {
        this.provider = provider;
        this.filter = provider.fabric().transport() instanceof NetTransport t ? t.config.peerFilter() : NetPeerFilter.any();
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new VerbsException("cannot open a selector for the net connection manager: " + e, e);
        }
    }

    /**
     * Connections to this manager's listeners refused because their source IP is not admitted by the
     * transport's {@link NetTransportConfig#peerFilter()} (closed before the request was read).
     */
    public long requestsRefused() {
        return requestsRefused.get();
    }

    @Override
    public String roleName() {
        return "net-cm-" + provider.instanceName();
    }

    @Override
    public Listener listen(PortAddress address, RequestHandler handler) {
        if (closed) {
            throw new VerbsException("connection manager of provider '" + provider.instanceName() + "' is closed");
        }
        InetSocketAddress at = NetTransport.socketAddress(address, true);
        ServerSocketChannel ch = null;
        try {
            ch = ServerSocketChannel.open();
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.bind(at, 64);
            ch.configureBlocking(false);
        } catch (IOException e) {
            NetAttachment.closeQuietly(ch);
            String why = e instanceof BindException ? "address in use or not an address of this host" : e.toString();
            throw new VerbsException("cannot listen at " + address + ": " + e.getMessage() + " (" + why
                + "); close the other listener, pick another port (0 for any free one) or a local IP", e);
        }
        int port = ((InetSocketAddress) socketLocal(ch)).getPort();
        NetListener l = new NetListener(this, ch, new PortAddress(NetTransport.FABRIC, address.host(), port), handler);
        ServerSocketChannel c = ch;
        commands.add(() -> {
            try {
                c.register(selector, SelectionKey.OP_ACCEPT, l);
                listeners.add(l);
            } catch (IOException e) {
                NetAttachment.closeQuietly(c);
            }
        });
        return l;
    }

    private static java.net.SocketAddress socketLocal(ServerSocketChannel ch) {
        try {
            return ch.getLocalAddress();
        } catch (IOException e) {
            throw new VerbsException("listener socket failed: " + e, e);
        }
    }

    @Override
    public CompletableFuture<CmParams> connect(PortAddress address, CmParams request, long timeoutNs) {
        if (timeoutNs <= 0) {
            throw new VerbsException("timeoutNs > 0 required but it was " + timeoutNs);
        }
        if (closed) {
            return CompletableFuture.failedFuture(new CmException(CmException.Reason.CLOSED, "connection manager of provider '"
                + provider.instanceName() + "' is closed"));
        }
        InetSocketAddress to;
        try {
            to = NetTransport.socketAddress(address);
        } catch (VerbsException e) {
            // an unknown host name may resolve later (a host restarting under its DNS name); anything else is a bad address
            CmException.Reason why = e.getCause() instanceof java.net.UnknownHostException
                ? CmException.Reason.UNREACHABLE : CmException.Reason.BAD_ADDRESS;
            return CompletableFuture.failedFuture(new CmException(why, "cannot connect to " + address + ": " + e.getMessage(), e));
        }
        CompletableFuture<CmParams> result = new CompletableFuture<>();
        ByteBuffer out = CmCodec.encodeParams(CmCodec.REQUEST, request);
        long deadline = provider.clock().nanoTime() + timeoutNs;
        commands.add(() -> startConnect(address, to, out, deadline, timeoutNs, result));
        return result;
    }

    private void startConnect(PortAddress address, InetSocketAddress to, ByteBuffer out, long deadline, long timeoutNs,
                              CompletableFuture<CmParams> result) {
        Exchange x = new Exchange(address, null, null);
        x.out = out;
        x.deadlineNs = deadline;
        x.timeoutNs = timeoutNs;
        x.result = result;
        try {
            SocketChannel ch = SocketChannel.open();
            x.channel = ch;
            java.net.InetAddress source = CmExchangeSupport.sourceFor(provider, to);
            if (source != null) {
                // the request leaves from this node's own rail address, as its QPs' traffic does, so a
                // listener's peer filter sees the node and not whatever address the kernel would pick
                ch.bind(new InetSocketAddress(source, 0));
            }
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            boolean done = ch.connect(to);
            x.key = ch.register(selector, done ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT, x);
            exchanges.add(x);
        } catch (IOException e) {
            x.fail(CmExchangeSupport.reason(e), CmExchangeSupport.describe(address, e));
        }
    }

    @Override
    public int doWork(long nowNs) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        int work = 0;
        Runnable c;
        while ((c = commands.poll()) != null) {
            c.run();
            work++;
        }
        if (exchanges.isEmpty() && listeners.isEmpty()) {
            return work;
        }
        if (exchanges.isEmpty() && ++passesSinceSelect < IDLE_SELECT_EVERY_PASSES && nowNs - lastSelectNs < IDLE_SELECT_EVERY_NS) {
            return work;
        }
        passesSinceSelect = 0;
        lastSelectNs = nowNs;
        try {
            work += selector.selectNow(onReady);
        } catch (IOException e) {
            throw new VerbsException("net connection manager selector failed: " + e, e);
        }
        for (Iterator<Exchange> it = exchanges.iterator(); it.hasNext(); ) {
            Exchange x = it.next();
            if (x.finished) {
                it.remove();
                work++;
            } else if (nowNs - x.deadlineNs >= 0) {
                x.fail(CmException.Reason.TIMED_OUT, x.result != null
                    ? "connect to " + x.address + " timed out after " + x.timeoutNs / 1_000_000 + " ms: no reply from the listener"
                    : "no complete request within " + REQUEST_TIMEOUT_NS / 1_000_000 + " ms");
                it.remove();
                work++;
            } else if (x.replyFuture != null && x.replyFuture.isDone() && x.out == null) {
                x.sendReply();
                work++;
            }
        }
        return work;
    }

    private void onReady(SelectionKey key) {
        Object a = key.attachment();
        if (!key.isValid()) {
            return;
        }
        if (a instanceof NetListener l) {
            l.accept();
        } else if (a instanceof Exchange x) {
            x.onReady(key);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Runnable c;
        while ((c = commands.poll()) != null) {
            c.run();
        }
        for (Exchange x : exchanges) {
            x.fail(CmException.Reason.CLOSED, "connect to " + x.address + " abandoned: the connection manager closed");
        }
        exchanges.clear();
        for (NetListener l : listeners) {
            l.close();
        }
        listeners.clear();
        NetAttachment.closeQuietly(selector);
    }

    /** A bound listener. */
    private static final class NetListener implements Listener {
        private final NetConnectionManager owner;
        private final ServerSocketChannel channel;
        private final PortAddress address;
        private final RequestHandler handler;

        NetListener(NetConnectionManager owner, ServerSocketChannel channel, PortAddress address, RequestHandler handler) {
            this.owner = owner;
            this.channel = channel;
            this.address = address;
            this.handler = handler;
        }

        @Override
        public PortAddress address() {
            return address;
        }

        void accept() {
            try {
                SocketChannel ch;
                while ((ch = channel.accept()) != null) {
                    InetSocketAddress from = (InetSocketAddress) ch.getRemoteAddress();
                    if (!owner.filter.admits(from.getAddress())) {
                        // refused before a byte of the request is read: nothing of it is parsed or allocated
                        owner.requestsRefused.incrementAndGet();
                        NetAttachment.closeQuietly(ch);
                        continue;
                    }
                    ch.configureBlocking(false);
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    InetSocketAddress peer = (InetSocketAddress) ch.getRemoteAddress();
                    Exchange x = new Exchange(new PortAddress(NetTransport.FABRIC, peer.getAddress().getHostAddress(), peer.getPort()), this, owner);
                    x.channel = ch;
                    x.deadlineNs = owner.nowNs + REQUEST_TIMEOUT_NS;
                    x.key = ch.register(owner.selector, SelectionKey.OP_READ, x);
                    owner.exchanges.add(x);
                }
            } catch (IOException e) {
                // a connection reset before it was accepted: nothing to answer
            }
        }

        @Override
        public void close() {
            NetAttachment.closeQuietly(channel);
        }

        @Override
        public String toString() {
            return "listener " + address;
        }
    }

    /**
     * One request/reply exchange: on the client side ({@code result} set) connect, write the
     * request, read the reply; on the listener side read the request, run the handler, write the
     * reply. Engine thread only.
     */
    private static final class Exchange {
        final PortAddress address;
        final @Nullable NetListener listener;
        final @Nullable NetConnectionManager cm;
        @Nullable SocketChannel channel;
        @Nullable SelectionKey key;
        @Nullable ByteBuffer out;
        final ByteBuffer header = ByteBuffer.allocate(CmCodec.HEADER_BYTES);
        @Nullable ByteBuffer body;
        long deadlineNs;
        long timeoutNs;
        @Nullable CompletableFuture<CmParams> result;
        @Nullable CompletableFuture<CmParams> replyFuture;
        boolean finished;

        Exchange(PortAddress address, @Nullable NetListener listener, @Nullable NetConnectionManager cm) {
            this.address = address;
            this.listener = listener;
            this.cm = cm;
        }

        void onReady(SelectionKey k) {
            try {
                if (k.isConnectable()) {
                    channel.finishConnect();
                    k.interestOps(SelectionKey.OP_WRITE);
                    return;
                }
                if (k.isWritable() && out != null) {
                    channel.write(out);
                    if (!out.hasRemaining()) {
                        out = null;
                        if (result != null) {
                            k.interestOps(SelectionKey.OP_READ);
                        } else {
                            finish();
                        }
                    }
                    return;
                }
                if (k.isReadable()) {
                    read();
                }
            } catch (IOException e) {
                fail(CmExchangeSupport.reason(e), CmExchangeSupport.describe(address, e));
            }
        }

        private void read() throws IOException {
            SocketChannel ch = channel;
            if (header.hasRemaining()) {
                if (ch.read(header) < 0) {
                    fail(CmException.Reason.RESET, result != null ? "the listener at " + address + " closed the connection without a reply" : "peer closed before its request");
                    return;
                }
                if (header.hasRemaining()) {
                    return;
                }
                try {
                    body = ByteBuffer.allocate(CmCodec.bodyLength(header));
                } catch (IllegalArgumentException e) {
                    malformed(e.getMessage());
                    return;
                }
            }
            ByteBuffer b = body;
            if (b.hasRemaining() && ch.read(b) < 0) {
                fail(CmException.Reason.RESET, "the peer at " + address + " closed the connection in the middle of a message");
                return;
            }
            if (b.hasRemaining()) {
                return;
            }
            b.flip();
            byte type = CmCodec.type(header);
            if (result != null) {
                onReply(type, b);
            } else {
                onRequest(type, b);
            }
        }

        private void onReply(byte type, ByteBuffer b) {
            if (type == CmCodec.REJECT) {
                fail(CmException.Reason.REJECTED, "connection to " + address + " rejected: " + CmCodec.decodeReject(b));
                return;
            }
            if (type != CmCodec.ACCEPT) {
                malformed("expected ACCEPT or REJECT but got message type " + type);
                return;
            }
            try {
                CmParams p = CmCodec.decodeParams(b);
                CompletableFuture<CmParams> r = result;
                finish();
                r.complete(p);
            } catch (IllegalArgumentException e) {
                malformed(e.getMessage());
            }
        }

        private void onRequest(byte type, ByteBuffer b) {
            if (type != CmCodec.REQUEST) {
                malformed("expected REQUEST but got message type " + type);
                return;
            }
            CmParams request;
            try {
                request = CmCodec.decodeParams(b);
            } catch (IllegalArgumentException e) {
                malformed(e.getMessage());
                return;
            }
            key.interestOps(0);
            CompletableFuture<CmParams> reply;
            try {
                reply = listener.handler.onRequest(address, request);
                if (reply == null) {
                    reply = CompletableFuture.failedFuture(new VerbsException("the listener returned no reply future"));
                }
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            replyFuture = reply;
            if (reply.isDone()) {
                sendReply();
            }
        }

        void sendReply() {
            CompletableFuture<CmParams> r = replyFuture;
            ByteBuffer msg;
            try {
                msg = CmCodec.encodeParams(CmCodec.ACCEPT, r.join());
            } catch (CompletionException | java.util.concurrent.CancellationException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                msg = CmCodec.encodeReject(String.valueOf(cause.getMessage()));
            }
            out = msg;
            key.interestOps(SelectionKey.OP_WRITE);
        }

        private void malformed(String what) {
            if (result == null && out == null) {
                out = CmCodec.encodeReject("malformed request: " + what);
                key.interestOps(SelectionKey.OP_WRITE);
                replyFuture = CompletableFuture.completedFuture(null);
                return;
            }
            fail(CmException.Reason.MALFORMED_REPLY, "malformed message from " + address + ": " + what);
        }

        void fail(CmException.Reason reason, String message) {
            CompletableFuture<CmParams> r = result;
            finish();
            if (r != null) {
                r.completeExceptionally(new CmException(reason, message));
            }
        }

        private void finish() {
            finished = true;
            NetAttachment.closeQuietly(channel);
        }
    }
}
