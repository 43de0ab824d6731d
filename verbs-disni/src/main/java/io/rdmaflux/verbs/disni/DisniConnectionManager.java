package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The {@code disni} provider's {@link ConnectionManager}: the SPI's exchange of {@link CmParams} (QP
 * endpoints and up to 4096 bytes of private data) over one TCP connection per exchange, because
 * {@code rdma_cm}'s own private data holds 56 bytes on InfiniBand. A listener is a TCP server socket at
 * {@code disni://<ip>:<tcp port>} (the IPoIB/RoCE address serves); {@link #connect} sends a REQUEST and
 * completes with the ACCEPT or fails with the REJECT ({@link CmFrames}). The QPs named in the exchange
 * then connect each other with {@code QueuePair.connect} (an {@code rdma_cm} exchange of their own).
 *
 * <p><b>Errors:</b> {@link #listen} throws a {@link VerbsException} naming the address when it is not a
 * disni address, not a local IP, or in use. {@link #connect} completes exceptionally with a
 * {@link VerbsException} naming the address when nothing listens (refused), the host cannot be reached,
 * the listener rejects (its reason), the reply is malformed, or none arrives within the timeout.
 *
 * <p><b>Threading:</b> no thread of its own: non-blocking sockets, polled by {@link #doWork(long)},
 * which the provider runs on every progress pass (its thread, or {@code progress} in INVOKER mode).
 * Handlers run there and must not block; they may complete their reply later from any thread.
 * Thread-safe.
 */
final class DisniConnectionManager implements ConnectionManager {
    private final Selector selector;
    private final List<Exchange> exchanges = new ArrayList<>();
    private final List<TcpListener> listeners = new ArrayList<>();
    private long nowNs = Long.MIN_VALUE;
    private boolean closed;

    DisniConnectionManager() {
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new VerbsException("cannot open a selector for the disni connection manager: " + e.getMessage(), e);
        }
    }

    private static InetSocketAddress socketAddress(PortAddress address) throws UnknownHostException {
        if (!DisniProvider.FABRIC.equals(address.fabric())) {
            throw new IllegalArgumentException("address " + address + " is not on fabric '" + DisniProvider.FABRIC
                + "'; use disni://<ip>:<tcp port>");
        }
        String host = address.host();
        if (host.isEmpty() || !(Character.isDigit(host.charAt(0)) || host.indexOf(':') >= 0)) {
            throw new IllegalArgumentException("address " + address + " does not name an IP address literal; use the NIC's IP");
        }
        return new InetSocketAddress(InetAddress.getByName(host), address.port());
    }

    @Override
    public synchronized Listener listen(PortAddress address, RequestHandler handler) {
        if (closed) {
            throw new VerbsException("the disni connection manager is closed");
        }
        ServerSocketChannel server = null;
        try {
            InetSocketAddress at = socketAddress(address);
            server = ServerSocketChannel.open();
            server.configureBlocking(false);
            server.bind(at);
            TcpListener l = new TcpListener(server, handler,
                new PortAddress(DisniProvider.FABRIC, address.host(), ((InetSocketAddress) server.getLocalAddress()).getPort()));
            server.register(selector, SelectionKey.OP_ACCEPT, l);
            listeners.add(l);
            return l;
        } catch (IllegalArgumentException | IOException e) {
            closeQuietly(server);
            throw new VerbsException("cannot listen at " + address + ": " + e.getMessage()
                + " (is the address in use, or not an address of this host?)", e);
        }
    }

    @Override
    public synchronized CompletableFuture<CmParams> connect(PortAddress address, CmParams request, long timeoutNs) {
        CompletableFuture<CmParams> reply = new CompletableFuture<>();
        if (closed) {
            reply.completeExceptionally(new VerbsException("the disni connection manager is closed"));
            return reply;
        }
        SocketChannel ch = null;
        try {
            InetSocketAddress to = socketAddress(address);
            ch = SocketChannel.open();
            ch.configureBlocking(false);
            boolean connected = ch.connect(to);
            Exchange ex = new Exchange(ch, address, reply, null, null);
            ex.out = CmFrames.params(CmFrames.REQUEST, request);
            ex.timeoutNs = timeoutNs;
            ex.key = ch.register(selector, connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT, ex);
            exchanges.add(ex);
        } catch (IllegalArgumentException | IOException e) {
            closeQuietly(ch);
            reply.completeExceptionally(new VerbsException("connection request to " + address + " failed: " + e.getMessage(), e));
        }
        return reply;
    }

    /**
     * Moves every exchange along: accepts, connects, reads, writes, handler replies, timeouts.
     *
     * @param now the provider's clock, ns (timeouts run on it)
     * @return the work done (0 when idle)
     */
    synchronized int doWork(long now) {
        if (closed) {
            return 0;
        }
        nowNs = now;
        int work = 0;
        try {
            if (selector.selectNow() > 0) {
                for (SelectionKey key : selector.selectedKeys()) {
                    work++;
                    if (key.attachment() instanceof TcpListener l) {
                        accept(l);
                    } else if (key.attachment() instanceof Exchange ex && key.isValid()) {
                        ex.onReady(key);
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException e) {
            throw new VerbsException("the disni connection manager's selector failed: " + e.getMessage(), e);
        }
        for (int i = exchanges.size() - 1; i >= 0; i--) {
            Exchange ex = exchanges.get(i);
            if (ex.reply != null && ex.deadlineNs == Long.MIN_VALUE) {
                ex.deadlineNs = now + ex.timeoutNs;
            } else if (ex.reply != null && now - ex.deadlineNs >= 0) {
                ex.fail("no reply from " + ex.peer + " within " + ex.timeoutNs / 1_000_000 + " ms");
                work++;
            }
        }
        return work;
    }

    private void accept(TcpListener l) throws IOException {
        SocketChannel ch = l.server.accept();
        if (ch == null) {
            return;
        }
        ch.configureBlocking(false);
        InetSocketAddress from = (InetSocketAddress) ch.getRemoteAddress();
        Exchange ex = new Exchange(ch, new PortAddress(DisniProvider.FABRIC, from.getAddress().getHostAddress(), from.getPort()), null, l, null);
        ex.key = ch.register(selector, SelectionKey.OP_READ, ex);
        exchanges.add(ex);
    }

    /** One TCP exchange: the requester's side ({@code reply} set) or the listener's ({@code listener} set). */
    private final class Exchange {
        final SocketChannel ch;
        final PortAddress peer;
        final @Nullable CompletableFuture<CmParams> reply;
        final @Nullable TcpListener listener;
        @Nullable SelectionKey key;
        @Nullable ByteBuffer out;
        final ByteBuffer header = ByteBuffer.allocate(CmFrames.HEADER_BYTES);
        @Nullable ByteBuffer body;
        long timeoutNs;
        long deadlineNs = Long.MIN_VALUE;

        Exchange(SocketChannel ch, PortAddress peer, @Nullable CompletableFuture<CmParams> reply, @Nullable TcpListener listener,
                 @Nullable ByteBuffer out) {
            this.ch = ch;
            this.peer = peer;
            this.reply = reply;
            this.listener = listener;
            this.out = out;
        }

        void onReady(SelectionKey k) {
            try {
                if (k.isConnectable()) {
                    ch.finishConnect();
                    k.interestOps(SelectionKey.OP_WRITE);
                    return;
                }
                if (k.isWritable() && out != null) {
                    ch.write(out);
                    if (!out.hasRemaining()) {
                        if (reply != null) {
                            k.interestOps(SelectionKey.OP_READ);
                        } else {
                            end(); // the listener's reply is out
                        }
                    }
                    return;
                }
                if (k.isReadable()) {
                    read();
                }
            } catch (java.net.ConnectException e) {
                fail("connection to " + peer + " refused: nothing listens there (" + e.getMessage() + ")");
            } catch (IOException | IllegalArgumentException e) {
                fail("exchange with " + peer + " failed: " + e.getMessage());
            }
        }

        private void read() throws IOException {
            ByteBuffer b = body;
            if (b == null) {
                if (ch.read(header) < 0) {
                    fail("the connection to " + peer + " closed before a reply");
                    return;
                }
                if (header.hasRemaining()) {
                    return;
                }
                b = ByteBuffer.allocate(CmFrames.bodyLength(header));
                body = b;
            }
            if (b.hasRemaining() && ch.read(b) < 0) {
                fail("the connection to " + peer + " closed in the middle of a frame");
                return;
            }
            if (b.hasRemaining()) {
                return;
            }
            b.flip();
            byte type = CmFrames.type(header);
            if (reply != null) {
                if (type == CmFrames.ACCEPT) {
                    CmParams p = CmFrames.decodeParams(b);
                    end();
                    reply.complete(p);
                } else if (type == CmFrames.REJECT) {
                    fail("connection request to " + peer + " rejected: " + CmFrames.decodeReject(b));
                } else {
                    fail("reply of type " + type + " from " + peer + " is neither ACCEPT nor REJECT");
                }
                return;
            }
            if (type != CmFrames.REQUEST) {
                throw new IllegalArgumentException("frame of type " + type + " where a REQUEST was expected");
            }
            CmParams request = CmFrames.decodeParams(b);
            SelectionKey k = key;
            if (k != null) {
                k.interestOps(0);
            }
            CompletableFuture<CmParams> answer;
            try {
                answer = listener.handler.onRequest(peer, request);
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            answer.whenComplete((accepted, error) -> answered(accepted, error));
        }

        private void answered(@Nullable CmParams accepted, @Nullable Throwable error) {
            synchronized (DisniConnectionManager.this) {
                SelectionKey k = key;
                if (closed || k == null || !k.isValid()) {
                    return;
                }
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
                out = accepted != null && cause == null ? CmFrames.params(CmFrames.ACCEPT, accepted)
                    : CmFrames.reject(cause == null ? "rejected" : String.valueOf(cause.getMessage()));
                k.interestOps(SelectionKey.OP_WRITE);
            }
        }

        void fail(String reason) {
            end();
            if (reply != null) {
                reply.completeExceptionally(new VerbsException(reason));
            }
        }

        void end() {
            exchanges.remove(this);
            SelectionKey k = key;
            if (k != null) {
                k.cancel();
            }
            closeQuietly(ch);
        }
    }

    private final class TcpListener implements Listener {
        final ServerSocketChannel server;
        final RequestHandler handler;
        final PortAddress address;

        TcpListener(ServerSocketChannel server, RequestHandler handler, PortAddress address) {
            this.server = server;
            this.handler = handler;
            this.address = address;
        }

        @Override
        public PortAddress address() {
            return address;
        }

        @Override
        public void close() {
            synchronized (DisniConnectionManager.this) {
                listeners.remove(this);
                SelectionKey k = server.keyFor(selector);
                if (k != null) {
                    k.cancel();
                }
                closeQuietly(server);
            }
        }
    }

    private static void closeQuietly(java.nio.channels.@Nullable Channel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing
            }
        }
    }

    @Override
    public void close() {
        List<Exchange> pending;
        synchronized (this) {
            if (closed) {
                return;
            }
            for (TcpListener l : List.copyOf(listeners)) {
                l.close();
            }
            pending = List.copyOf(exchanges);
            for (Exchange ex : pending) {
                ex.end();
            }
            closed = true;
            try {
                selector.close();
            } catch (IOException e) {
                // closing
            }
        }
        for (Exchange ex : pending) {
            if (ex.reply != null) {
                ex.reply.completeExceptionally(new VerbsException("the disni connection manager closed during the exchange with " + ex.peer));
            }
        }
    }
}
