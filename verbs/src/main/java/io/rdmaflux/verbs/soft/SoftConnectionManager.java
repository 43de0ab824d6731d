package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.CmException;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The soft provider's {@link ConnectionManager}: listeners live in the {@link SoftFabric}'s
 * registry, keyed by service address {@code mem://<device>:<service>}. On the in-JVM fabric a
 * connect request is handed to the listener's handler synchronously, in the connecting thread;
 * a reply that is not ready yet is awaited, and the connect times out when the provider's clock
 * (virtual in INVOKER mode) passes the deadline, checked on each progress pass.
 */
final class SoftConnectionManager implements ConnectionManager {
    private final SoftProvider provider;
    private final SoftFabric fabric;
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /** One bound listener (public to the fabric registry). */
    static final class ListenerEntry implements Listener {
        final SoftConnectionManager owner;
        final PortAddress address;
        final RequestHandler handler;

        ListenerEntry(SoftConnectionManager owner, PortAddress address, RequestHandler handler) {
            this.owner = owner;
            this.address = address;
            this.handler = handler;
        }

        @Override
        public PortAddress address() {
            return address;
        }

        @Override
        public void close() {
            owner.fabric.listeners.remove(address, this);
        }

        @Override
        public String toString() {
            return "listener " + address;
        }
    }

    private record Pending(CompletableFuture<CmParams> future, long deadlineNs, PortAddress address) {
    }

    SoftConnectionManager(SoftProvider provider, SoftFabric fabric) {
        this.provider = provider;
        this.fabric = fabric;
    }

    @Override
    public Listener listen(PortAddress address, RequestHandler handler) {
        if (closed) {
            throw new VerbsException("connection manager of provider '" + provider.instanceName() + "' is closed");
        }
        String fab = fabric.transport().fabric();
        if (!fab.equals(address.fabric())) {
            throw new VerbsException("cannot listen at " + address + ": this provider's fabric is '" + fab
                + "'; use " + fab + "://<device>:<service>");
        }
        boolean local = false;
        for (Device d : provider.devices()) {
            local |= d.name().equals(address.host());
        }
        if (!local) {
            throw new VerbsException("cannot listen at " + address + ": '" + address.host() + "' is not a device of this provider; "
                + "local devices are " + provider.devices().stream().map(Device::name).toList());
        }
        if (address.port() == 0) {
            while (true) {
                int service = fabric.serviceCounter.getAndIncrement();
                if (service > 65535) {
                    throw new VerbsException("no free service number left on fabric '" + fabric.name() + "'");
                }
                PortAddress a = new PortAddress(address.fabric(), address.host(), service);
                ListenerEntry e = new ListenerEntry(this, a, handler);
                if (fabric.listeners.putIfAbsent(a, e) == null) {
                    return e;
                }
            }
        }
        ListenerEntry e = new ListenerEntry(this, address, handler);
        if (fabric.listeners.putIfAbsent(address, e) != null) {
            throw new VerbsException("address " + address + " is already in use by another listener; close it or pick another service");
        }
        return e;
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
        ListenerEntry entry = fabric.listeners.get(address);
        if (entry == null) {
            return CompletableFuture.failedFuture(new CmException(CmException.Reason.REFUSED, "connection refused: nothing listens at " + address
                + " on fabric '" + fabric.name() + "'"));
        }
        PortAddress from = request.endpoints().get(0).address();
        CompletableFuture<CmParams> reply;
        try {
            reply = entry.handler.onRequest(from, request);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new CmException(CmException.Reason.REJECTED, "the listener at " + address + " failed: " + e, e));
        }
        if (reply == null) {
            return CompletableFuture.failedFuture(new CmException(CmException.Reason.REJECTED, "the listener at " + address + " returned no reply future"));
        }
        CompletableFuture<CmParams> result = new CompletableFuture<>();
        reply.whenComplete((params, error) -> {
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                result.completeExceptionally(new CmException(CmException.Reason.REJECTED, "connection to " + address + " rejected: " + cause.getMessage(), cause));
            } else {
                result.complete(params);
            }
        });
        if (!result.isDone()) {
            pending.add(new Pending(result, provider.clock().nanoTime() + timeoutNs, address));
        }
        return result;
    }

    /** Times out pending connects whose deadline passed. */
    int doWork(long nowNs) {
        if (pending.isEmpty()) {
            return 0;
        }
        int n = 0;
        for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (p.future.isDone()) {
                it.remove();
            } else if (nowNs - p.deadlineNs >= 0) {
                it.remove();
                p.future.completeExceptionally(new CmException(CmException.Reason.TIMED_OUT, "connect to " + p.address + " timed out: no reply from the listener"));
                n++;
            }
        }
        return n;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        fabric.listeners.values().removeIf(e -> e.owner == this);
        Pending p;
        while ((p = pending.poll()) != null) {
            p.future.completeExceptionally(new CmException(CmException.Reason.CLOSED, "connect to " + p.address + " abandoned: the connection manager closed"));
        }
    }
}
