package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.net.NetConnectionManager;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The {@code ucx} provider's connection manager between processes ({@code cm=tcp}): the soft IP
 * fabric's {@link NetConnectionManager} ({@code rdma_cm}-like, one TCP exchange per connection)
 * with each side's UCP worker addresses added to the exchange, so that the queue pairs' addresses
 * ({@code ucx://<device>:<port>}) resolve in the other process.
 *
 * <ul>
 *   <li>{@link #listen}: at {@code ucx://<local ip>:<tcp port>} (port 0: any free one); the
 *       listener's {@link Listener#address() address} is {@code ucx://<ip>:<bound port>}.</li>
 *   <li>{@link #connect}: to {@code ucx://<ip>:<tcp port>} of a listener. The REQUEST's private data
 *       gets a trailer ({@link UcxPeerAddresses}) with the worker address and port count of each
 *       local device named by the request's endpoints; the listener {@link UcxDirectory#learn learns}
 *       them into its provider's directory before its handler runs (the handler connects queue pairs
 *       to those endpoints), strips the trailer, and appends its own devices to the ACCEPT; the
 *       requester learns those before the connect future completes.</li>
 * </ul>
 * Why the net CM rather than a directory protocol of its own: the exchange that hands a peer the
 * queue pairs' endpoints is the one that must also hand it how to reach them (as {@code rdma_cm}
 * carries the GIDs), and the net CM already does timeouts, rejects, malformed input and
 * non-blocking I/O on the engine thread; this class adds only the addresses.
 *
 * <p><b>Errors:</b> an address that is not {@code ucx://<host>:<port>} with a resolvable host throws
 * (listen) or fails the future (connect) with a {@link VerbsException} naming it and the expected
 * form; a peer without worker addresses (not a {@code ucx} provider with {@code cm=tcp}) is rejected
 * (listener side) or fails the connect (requester side) naming the fault; everything else is the net
 * CM's (see there).
 *
 * <p><b>Threading:</b> as the net CM: no threads of its own, I/O in {@link #doWork} on the provider's
 * engine; {@code listen}, {@code connect} and {@code close} are thread-safe.
 */
final class UcxConnectionManager implements ConnectionManager, ProgressAgent {
    private static final String NET = "net";

    private final NetConnectionManager net;
    private final UcxDirectory directory;
    private final @Nullable String deviceListenHost;

    /**
     * @param deviceListenHost where a listen at one of this provider's device addresses listens (the
     *                         {@code cmHost} option), or null to refuse such a listen
     */
    UcxConnectionManager(NetConnectionManager net, UcxDirectory directory, @Nullable String deviceListenHost) {
        this.net = net;
        this.directory = directory;
        this.deviceListenHost = deviceListenHost;
    }

    @Override
    public Listener listen(PortAddress address, RequestHandler handler) {
        PortAddress at = deviceListenHost != null && UcxFrameTransport.FABRIC.equals(address.fabric()) && directory.local(address.host()) != null
            ? new PortAddress(NET, deviceListenHost, address.port())
            : toNet(address, "listen at");
        Listener l = net.listen(at, (from, request) -> {
            PortAddress peer = toUcx(from);
            UcxPeerAddresses.Stripped s = UcxPeerAddresses.strip(request, peer);
            learn(s.devices());
            CompletableFuture<CmParams> reply = handler.onRequest(peer, s.params());
            return reply == null ? null : reply.thenApply(this::announce);
        });
        return new Listener() {
            @Override
            public PortAddress address() {
                return toUcx(l.address());
            }

            @Override
            public void close() {
                l.close();
            }

            @Override
            public String toString() {
                return "listener " + address();
            }
        };
    }

    @Override
    public CompletableFuture<CmParams> connect(PortAddress address, CmParams request, long timeoutNs) {
        PortAddress to;
        CmParams out;
        try {
            to = toNet(address, "connect to");
            out = announce(request);
        } catch (VerbsException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<CmParams> result = new CompletableFuture<>();
        net.connect(to, out, timeoutNs).whenComplete((reply, failure) -> {
            if (failure != null) {
                // the net CM names the net:// address it dialled; the caller gave the ucx:// one
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                result.completeExceptionally(new VerbsException(String.valueOf(cause.getMessage()).replace(to.toString(), address.toString()), cause));
                return;
            }
            try {
                UcxPeerAddresses.Stripped s = UcxPeerAddresses.strip(reply, address);
                learn(s.devices());
                result.complete(s.params());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** {@code params} with the worker addresses of the local devices its endpoints name. */
    private CmParams announce(CmParams params) {
        Set<String> named = new LinkedHashSet<>();
        for (QpEndpoint e : params.endpoints()) {
            if (UcxFrameTransport.FABRIC.equals(e.address().fabric())) {
                named.add(e.address().host());
            }
        }
        List<UcxPeerAddresses.Device> devices = new ArrayList<>(named.size());
        for (String name : named) {
            UcxAttachment a = directory.local(name);
            if (a != null) {
                devices.add(new UcxPeerAddresses.Device(name, a.nic().ports().size(), a.workerAddressBytes()));
            }
        }
        return UcxPeerAddresses.append(params, devices);
    }

    private void learn(List<UcxPeerAddresses.Device> devices) {
        for (UcxPeerAddresses.Device d : devices) {
            directory.learn(d.name(), d.workerAddress(), d.ports());
        }
    }

    /** {@code ucx://host:port} as the net CM's {@code net://host:port}. */
    private PortAddress toNet(PortAddress address, String what) {
        if (!UcxFrameTransport.FABRIC.equals(address.fabric())) {
            throw new VerbsException("cannot " + what + " " + address + ": the ucx provider's TCP connection manager (cm=tcp) takes "
                + "ucx://<ip>:<tcp port>");
        }
        if (directory.local(address.host()) != null) {
            throw new VerbsException("cannot " + what + " " + address + ": it names a device, but with cm=tcp the connection manager "
                + "listens on an IP: use ucx://<ip>:<tcp port> (port 0 to listen on any free one), or open the provider with "
                + "cm-host=<ip> to listen there when given a device address");
        }
        return new PortAddress(NET, address.host(), address.port());
    }

    private static PortAddress toUcx(PortAddress netAddress) {
        return new PortAddress(UcxFrameTransport.FABRIC, netAddress.host(), netAddress.port());
    }

    @Override
    public int doWork(long nowNs) {
        return net.doWork(nowNs);
    }

    @Override
    public String roleName() {
        return "ucx-" + net.roleName();
    }

    @Override
    public void close() {
        net.close();
    }
}
