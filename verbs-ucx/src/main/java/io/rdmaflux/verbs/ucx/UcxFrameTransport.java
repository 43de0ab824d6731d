package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.SoftDevice;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpParams;

/**
 * A {@link FrameTransport} over UCX: each soft NIC frame (RC request, ACK/NAK, READ response) is one
 * UCP active message on a UCP endpoint, the frame's 64-byte header ({@link
 * io.rdmaflux.verbs.soft.net.NetFrameCodec}) in the message's header and its payload in the
 * message's data. Everything that makes a queue pair a queue pair (PSNs, acknowledgement, RNR and
 * transport retry, rkey/bounds/access checks at the responder, completions) stays in the soft NIC,
 * so verbs semantics are exact; UCX supplies the wire: {@code tcp} and shared memory ({@code sm})
 * here, {@code rc}/{@code ud}/{@code dc} on an InfiniBand or RoCE host.
 *
 * <h2>Layout</h2>
 * <ul>
 *   <li>One {@link UcpContext} and one {@code UcpWorker} per NIC ({@link UcxAttachment}), opened
 *       with the active-message feature and the transport list {@code tls} ({@code UCX_TLS}; null =
 *       UCX's own choice). The NIC's engine thread is the only thread that touches them
 *       ({@code progress()} in {@link Attachment#poll}, sends in {@link Attachment#transmit}, endpoint
 *       creation on first use), so they run in UCX's single-thread mode with no locks, and nothing of
 *       UCX is shared between two engine threads (a context shared by the workers of two DEDICATED
 *       engines lost acknowledgements over {@code tcp} in our tests, even with {@code mt_workers_shared}).
 *       A worker per NIC rather than per provider keeps each rail's progress on its own engine, as a
 *       NIC's queues are its own.</li>
 *   <li>Addresses are {@code ucx://<device>:<port>}; {@link #attach} publishes the NIC's worker
 *       address in a {@link UcxDirectory} under the device name, and {@code resolve} looks it up:
 *       the JVM-wide directory (devices named {@code ucx0}, {@code ucx1}, ... JVM-wide), or with
 *       {@code cm=tcp} the provider's own, which also holds the devices of peers learned from the
 *       connection manager's exchanges (devices named {@code ucx<n>-<random tag>}, unique across
 *       processes).</li>
 * </ul>
 *
 * <p><b>UCX keepalive off:</b> contexts are opened with {@code KEEPALIVE_INTERVAL=inf} (unless the
 * environment sets {@code UCX_KEEPALIVE_INTERVAL}). Between two processes over {@code tcp}, UCP's
 * keepalive on peer-failure endpoints (Debian's UCX 1.13.1) failed live endpoints with "Endpoint
 * timeout" within seconds under sustained traffic (4 of 6 two-process {@code bench bw} runs here, and
 * {@code UcxTwoProcessTest} 2 of 2; with it off, 0 of 6). A dead peer process is still found at once
 * (its closed sockets fail the endpoint), and a silent one by the NIC's own transport retry timer.
 *
 * <p><b>Ordering:</b> frames are sent with {@code UCP_AM_SEND_FLAG_EAGER}, so UCX delivers the
 * messages of one endpoint whole and in sending order (a rendezvous message could be overtaken by a
 * later eager one), which is what {@link FrameTransport} requires of a route.
 *
 * <p><b>Concurrency:</b> {@code attach}, {@code resolve} and {@code close} are thread-safe.
 */
public final class UcxFrameTransport implements FrameTransport {
    /** The fabric name in addresses. */
    public static final String FABRIC = "ucx";

    /** Active-message id of soft NIC frames. */
    static final int AM_ID = 0x5246;

    /** Active-message id of an RDMA WRITE's header whose payload already went as {@code ucp_put} ({@link UcxPutPath}). */
    static final int AM_ID_PLACED = 0x5247;

    /** Active-message id of the rkey exchange ({@link UcxRkeyMessages}). */
    static final int AM_ID_RKEY = 0x5248;

    private static final AtomicInteger DEVICE_COUNTER = new AtomicInteger();
    private final @Nullable String tls;
    private final UcxDirectory directory;
    private final boolean rma;
    private volatile boolean closed;

    /**
     * Checks that UCX runs and accepts {@code tls} (opens and closes one context).
     *
     * @param tls the UCX transports ({@code UCX_TLS} syntax, e.g. {@code tcp} or {@code sm,self}), or
     *            null for UCX's default (the environment's {@code UCX_TLS}, else all it finds)
     * @throws io.rdmaflux.verbs.ProviderUnavailableException when UCX cannot run here
     * @throws VerbsException when UCX rejects {@code tls}
     */
    public UcxFrameTransport(@Nullable String tls) {
        this(tls, UcxDirectory.JVM, true);
    }

    /**
     * As {@link #UcxFrameTransport(String)}, resolving addresses through {@code directory} (the
     * JVM-wide one, or a provider's own with {@code cm=tcp}); {@code rma}: contexts with UCX's RMA
     * feature, which the put path needs ({@link UcxPutPath}); without it UCX is set up exactly as
     * before the put path (active messages only).
     */
    UcxFrameTransport(@Nullable String tls, UcxDirectory directory, boolean rma) {
        this.directory = directory;
        this.rma = rma;
        UcxLibrary.unavailableReason().ifPresent(r -> {
            throw new io.rdmaflux.verbs.ProviderUnavailableException("RDMA provider 'ucx' cannot run here: " + r);
        });
        this.tls = tls;
        // fail here, at provider setup, rather than at the first device
        newContext().close();
    }

    /**
     * A new UCP context for one NIC, with the active-message feature and this transport's {@code tls}.
     *
     * @throws VerbsException when UCX rejects {@code tls}
     */
    UcpContext newContext() {
        // the wakeup feature lets an idle INVOKER engine block on the worker's event fd (UcxEventWait)
        UcpParams params = new UcpParams().requestAmFeature().requestWakeupFeature();
        if (rma) {
            // RDMA WRITEs with a known rkey go as ucp_put (UcxPutPath)
            params.requestRmaFeature();
        }
        if (tls != null) {
            params.setConfig("TLS", tls);
        }
        if (System.getenv("UCX_KEEPALIVE_INTERVAL") == null) {
            params.setConfig("KEEPALIVE_INTERVAL", "inf");
        }
        try {
            return new UcpContext(params);
        } catch (RuntimeException e) {
            throw new VerbsException("UCX could not open a context with tls='" + tls + "' (" + e.getMessage()
                + "); use transports UCX knows, e.g. tcp, sm,self or rc,ud (see ucx_info -d)", e);
        }
    }

    /** A device name not yet used in this JVM ({@code ucx<n>}). */
    public static String nextDeviceName() {
        return "ucx" + DEVICE_COUNTER.getAndIncrement();
    }

    /**
     * A device name unique across processes with high probability: {@code ucx<n>-<suffix>}, where
     * {@code suffix} is a provider's random 48-bit tag in hex (a collision is detected and refused by
     * {@link UcxDirectory#learn}).
     */
    static String nextDeviceName(String suffix) {
        return nextDeviceName() + "-" + suffix;
    }

    /** Whether this transport's contexts have UCX's RMA feature (the put path may run). */
    boolean rma() {
        return rma;
    }

    /** The transports asked for, or null for UCX's default. */
    public @Nullable String tls() {
        return tls;
    }

    @Override
    public String fabric() {
        return FABRIC;
    }

    @Override
    public Attachment attach(SoftDevice nic) {
        if (closed) {
            throw new VerbsException("the UCX transport is closed; open a new provider");
        }
        UcxAttachment a = new UcxAttachment(this, nic);
        try {
            directory.publish(a);
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        return a;
    }

    /** The directory entry of {@code address}'s device, checked ({@link UcxDirectory#lookup}). */
    UcxDirectory.Entry lookup(PortAddress address) {
        return directory.lookup(address);
    }

    /** Where this transport's devices are published and peers' devices learned. */
    UcxDirectory directory() {
        return directory;
    }

    void detach(UcxAttachment a) {
        directory.withdraw(a);
    }

    /** Refuses further attachments; each attachment closes its own context. Idempotent. */
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "UcxFrameTransport{tls=" + (tls == null ? "default" : tls) + "}";
    }
}
