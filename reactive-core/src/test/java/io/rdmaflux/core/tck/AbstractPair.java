package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What every {@link ConnectionTckFixture} of this package shares: the two nodes and connections, their
 * {@code onClose} flags, and the close at the end of a test (graceful, then a check that no received
 * message is still held, then nodes and providers). Public so that a suite in another module can build a
 * pair of its own (another fabric, another provider) on it: it sets {@link #clientNode} and
 * {@link #serverNode}, connects, calls {@link #connected} and implements the rest.
 */
public abstract class AbstractPair implements ConnectionTckFixture {
    private final int rails;
    protected RdmaNode clientNode;
    protected RdmaNode serverNode;
    private RdmaConnection client;
    private RdmaConnection server;
    private int maxFramePayloadBytes;
    private final AtomicBoolean clientClosed = new AtomicBoolean();
    private final AtomicBoolean serverClosed = new AtomicBoolean();

    protected AbstractPair(int rails) {
        this.rails = rails;
    }

    /** Port numbers 1 .. {@code rails}. */
    protected static int[] ports(int rails) {
        int[] ports = new int[rails];
        for (int i = 0; i < rails; i++) {
            ports[i] = i + 1;
        }
        return ports;
    }

    /** Called once both sides are connected. */
    protected void connected(RdmaConnection client, RdmaConnection server) {
        this.client = client;
        this.server = server;
        client.onClose().subscribe(null, e -> closed(clientClosed), () -> closed(clientClosed));
        server.onClose().subscribe(null, e -> closed(serverClosed), () -> closed(serverClosed));
        maxFramePayloadBytes = client.subchannels().get(0).maxFramePayloadBytes();
        if (client.subchannels().size() != rails) {
            throw new AssertionError("asked for " + rails + " rails, the connection has " + client.subchannels().size() + " subchannels");
        }
    }

    private void closed(AtomicBoolean flag) {
        flag.set(true);
        signal();
    }

    @Override
    public RdmaConnection client() {
        return client;
    }

    @Override
    public RdmaConnection server() {
        return server;
    }

    @Override
    public RdmaNode clientNode() {
        return clientNode;
    }

    @Override
    public RdmaNode serverNode() {
        return serverNode;
    }

    @Override
    public int rails() {
        return rails;
    }

    @Override
    public int maxFramePayloadBytes() {
        return maxFramePayloadBytes;
    }

    @Override
    public boolean closed(Side side) {
        return (side == Side.CLIENT ? clientClosed : serverClosed).get();
    }

    protected String describe() {
        return client == null ? "(not connected)" : "client " + client.metrics() + "\nserver " + server.metrics();
    }

    @Override
    public void close() {
        AssertionError failure = null;
        try {
            if (client != null) {
                client.close();
                server.close();
                try {
                    await("both sides closed gracefully at the end of the test", () -> clientClosed.get() && serverClosed.get());
                } catch (AssertionError e) {
                    failure = e;
                    client.abort();
                    server.abort();
                    await("both sides aborted", () -> clientClosed.get() && serverClosed.get());
                }
                await("neither node holds a received message", () -> clientNode.metrics().buffersOutstanding() == 0
                    && serverNode.metrics().buffersOutstanding() == 0);
            }
        } catch (AssertionError e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        } finally {
            closeQuietly();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Closes nodes and providers, whatever state they are in. */
    protected final void closeQuietly() {
        try {
            if (clientNode != null) {
                clientNode.close();
            }
        } finally {
            try {
                if (serverNode != null) {
                    serverNode.close();
                }
            } finally {
                closeProviders();
            }
        }
    }

    protected abstract void closeProviders();
}
