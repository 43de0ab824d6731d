package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Both ends of a connection in this JVM over the IP fabric: a listening {@link NetRails} on a free
 * port of the first address and a connecting one, each with its own soft provider (so its own
 * sockets), for {@code bench --fabric net} on loopback or on local addresses.
 */
final class NetPair implements BenchLink {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final NetRails listener;
    private final NetRails connector;

    private NetPair(NetRails listener, NetRails connector) {
        this.listener = listener;
        this.connector = connector;
    }

    /**
     * @throws UserError if the addresses cannot be bound or the two ends do not connect within 30 s
     */
    static NetPair open(NetRails.Settings s) {
        CompletableFuture<String> bound = new CompletableFuture<>();
        CompletableFuture<NetRails> accepted = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                accepted.complete(NetRails.listen(s, new NetRails.HostPort(s.addresses().get(0), 0), TIMEOUT, bound::complete));
            } catch (Throwable e) {
                bound.completeExceptionally(e);
                accepted.completeExceptionally(e);
            }
        }, "rdmaflux-bench-listener");
        t.setDaemon(true);
        t.start();
        NetRails connector = null;
        try {
            String at = get(bound);
            connector = NetRails.connect(s, NetRails.HostPort.parse("--listen", at), TIMEOUT, "rdmaflux bench");
            return new NetPair(get(accepted), connector);
        } catch (RuntimeException e) {
            if (connector != null) {
                connector.close();
            }
            accepted.thenAccept(NetRails::close);
            throw e;
        }
    }

    private static <T> T get(CompletableFuture<T> f) {
        try {
            return f.get(TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new UserError("the net fabric pair failed: " + Main.rootMessage(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw new UserError("the two ends of the net fabric pair did not connect within " + TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserError("interrupted while connecting the net fabric pair");
        }
    }

    @Override
    public RdmaConnection sender() {
        return connector.connection();
    }

    @Override
    public io.rdmaflux.core.RdmaNode senderNode() {
        return connector.node();
    }

    @Override
    public io.rdmaflux.core.RdmaNode receiverNode() {
        return listener.node();
    }

    @Override
    public RdmaConnection receiver() {
        return listener.connection();
    }

    @Override
    public void close() {
        try {
            connector.close();
        } finally {
            listener.close();
        }
    }
}
