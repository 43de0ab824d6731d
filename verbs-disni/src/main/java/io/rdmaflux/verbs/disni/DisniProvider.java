package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The {@code disni} provider: the RC subset of the verbs SPI on RDMA NICs through DiSNI, over the
 * internal {@link RdmaSeam} (DiSNI itself in production, {@link DisniSeam}).
 *
 * <ul>
 *   <li>Devices: one per configured IP address ({@link DisniOptions}), opened by binding a CM id to it;
 *       one port each; one native CQ each, which every SPI completion queue of the device is fed from.</li>
 *   <li>Queue pairs: RC only, each with its own listening CM id; {@code QueuePair.connect} is an
 *       {@code rdma_cm} exchange (DiSNI has no {@code ibv_modify_qp}), see {@link QpConnection}.</li>
 *   <li>Not offered (DiSNI does not marshal them): UD QPs and address handles, SRQs, atomics; asking
 *       for them throws a {@link VerbsException} that says so.</li>
 * </ul>
 *
 * <p><b>Threading:</b> DEDICATED (default) runs one thread, {@code rdmaflux-disni-<name>}, that waits for
 * CM events (1 ms at a time) and drains the devices' CQs into the SPI CQs; INVOKER leaves both to
 * {@link #progress(long)}. Polling an SPI CQ also drains its device's CQ, so completions never wait
 * for the thread.
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} destroys every QP, CQ, region,
 * PD and CM id, then the event channel; idempotent.
 */
public final class DisniProvider implements RdmaProvider {
    /** The fabric name of the port addresses and QP endpoints ({@code disni://<ip>:<cm port>}). */
    public static final String FABRIC = "disni";

    private final String name;
    private final DisniOptions options;
    private final RdmaSeam seam;
    private final CmEvents cm;
    private final List<DisniDevice> devices = new ArrayList<>();
    private final DisniDevice[] deviceArray;
    private final @Nullable Thread thread;
    private volatile boolean closed;
    private volatile @Nullable Throwable lastError;
    private volatile @Nullable DisniConnectionManager connections;
    private final java.util.concurrent.atomic.AtomicLong allocatedBytes = new java.util.concurrent.atomic.AtomicLong();

    DisniProvider(String name, RdmaSeam seam, DisniOptions options) {
        this.name = Objects.requireNonNull(name, "name");
        this.seam = seam;
        this.options = options;
        try {
            this.cm = new CmEvents(seam.createEventChannel());
        } catch (IOException e) {
            throw new VerbsException("rdma_create_event_channel failed: " + e.getMessage(), e);
        }
        try {
            for (InetAddress ip : options.addresses()) {
                devices.add(new DisniDevice(this, devices.size(), ip));
            }
        } catch (RuntimeException e) {
            closeDevices();
            cm.close();
            throw e;
        }
        deviceArray = devices.toArray(new DisniDevice[0]);
        if (options.threading() == ThreadingMode.DEDICATED) {
            Thread t = new Thread(this::runLoop, "rdmaflux-disni-" + name);
            t.setDaemon(true);
            thread = t;
            t.start();
        } else {
            thread = null;
        }
    }

    @Override
    public String name() {
        return DisniProviderFactory.NAME;
    }

    /** This instance's name (its thread's suffix). */
    public String instanceName() {
        return name;
    }

    RdmaSeam seam() {
        return seam;
    }

    CmEvents cm() {
        return cm;
    }

    DisniOptions options() {
        return options;
    }

    @Override
    public List<Device> devices() {
        return List.copyOf(devices);
    }

    /**
     * The provider's connection manager ({@link DisniConnectionManager}: the SPI's exchange over TCP on the
     * NICs' IP addresses), created on first use.
     *
     * @throws VerbsException if the provider is closed
     */
    @Override
    public ConnectionManager connectionManager() {
        synchronized (cm.lock) {
            checkOpen();
            DisniConnectionManager c = connections;
            if (c == null) {
                c = new DisniConnectionManager();
                connections = c;
            }
            return c;
        }
    }

    @Override
    public ThreadingMode threadingMode() {
        return options.threading();
    }

    /**
     * Dispatches pending CM events and drains every device's CQ. In DEDICATED mode the provider's
     * thread does this; a call here does it once more.
     *
     * @param nowNs the current time, ns, for the one timer of its own: the deadline of sends held for a
     *              connection that never comes ({@link DisniQueuePair#expireHeldSends})
     * @return CM events dispatched plus completions moved
     */
    @Override
    public int progress(long nowNs) {
        checkOpen();
        int work = cm.dispatch(0);
        for (int i = 0; i < deviceArray.length; i++) {
            work += deviceArray[i].completions().drain();
        }
        DisniConnectionManager c = connections;
        if (c != null) {
            work += c.doWork(nowNs);
        }
        return work + expireHeldSends(nowNs);
    }

    private int expireHeldSends(long nowNs) {
        int n = 0;
        synchronized (cm.lock) {
            for (int i = 0; i < deviceArray.length; i++) {
                DisniQueuePair[] qps = deviceArray[i].queuePairs();
                for (int q = 0; q < qps.length; q++) {
                    n += qps[q].expireHeldSends(nowNs);
                }
            }
        }
        return n;
    }

    private void runLoop() {
        while (!closed) {
            try {
                cm.dispatch(1);
                for (int i = 0; i < deviceArray.length; i++) {
                    deviceArray[i].completions().drain();
                }
                long now = System.nanoTime();
                DisniConnectionManager c = connections;
                if (c != null) {
                    c.doWork(now);
                }
                expireHeldSends(now);
            } catch (RuntimeException e) {
                if (!closed) {
                    lastError = e;
                }
            }
        }
    }

    void regionAllocated(long bytes) {
        allocatedBytes.addAndGet(bytes);
    }

    void regionFreed(long bytes) {
        allocatedBytes.addAndGet(-bytes);
    }

    /** Bytes of memory the provider allocated for regions ({@code allocateMemory}) and has not freed yet. */
    public long allocatedBytes() {
        return allocatedBytes.get();
    }

    /** The last error the provider's thread caught (it keeps running), or null. */
    public @Nullable Throwable lastError() {
        return lastError;
    }

    void checkOpen() {
        if (closed) {
            throw new VerbsException("provider 'disni' (" + name + ") is closed");
        }
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        synchronized (cm.lock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        Thread t = thread;
        if (t != null) {
            boolean interrupted = false;
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        DisniConnectionManager c = connections;
        if (c != null) {
            c.close();
        }
        closeDevices();
        cm.close();
    }

    private void closeDevices() {
        for (DisniDevice d : devices) {
            d.close();
        }
    }

    @Override
    public String toString() {
        return "disni{" + name + ", devices=" + devices.stream().map(Device::name).toList() + "}";
    }

    /** A builder (tests use it to put the provider on a seam of their own). */
    static Builder builder() {
        return new Builder();
    }

    /** Builder: name, seam and options. */
    static final class Builder {
        private String name = "disni";
        private RdmaSeam seam = new DisniSeam();
        private @Nullable DisniOptions options;

        Builder name(String name) {
            this.name = name;
            return this;
        }

        Builder seam(RdmaSeam seam) {
            this.seam = seam;
            return this;
        }

        Builder options(DisniOptions options) {
            this.options = options;
            return this;
        }

        DisniProvider build() {
            DisniOptions o = options;
            if (o == null) {
                o = DisniOptions.parse(java.util.Map.of(), DisniDeviceDiscovery.discover());
            }
            return new DisniProvider(name, seam, o);
        }
    }
}
