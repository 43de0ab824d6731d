package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.Route;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;

/**
 * A path to one remote NIC's port: the peer's directory entry, its UCP endpoint (created lazily by
 * {@link UcxRoutes} on the sending engine thread), whether it failed, and the put path's per-route
 * state ({@link UcxPutPath}: its id in rkey messages, the peer's rkeys, the frames held behind a flush).
 * The put path's state lies in the route itself so that a frame's transmission reads it through the
 * route it already holds, with no lookup.
 *
 * <p>Owns the unpacked rkeys in {@link #rkeys} and {@link #retiredKeys} (destroyed by
 * {@link UcxPutPath#close}); the endpoint is owned and closed by {@link UcxRoutes}.
 *
 * <p><b>Concurrency:</b> created on any thread ({@code resolve}, setup); every field is read and
 * written on the engine thread only.
 */
final class UcxRoute implements Route {
    private final PortAddress destination;
    final UcxDirectory.Entry target;
    @Nullable UcpEndpoint endpoint;
    boolean failed;
    // the put path's state (UcxPutPath), engine thread only
    /** The index in {@link UcxRoutes} once the endpoint exists; travels in rkey REQUESTs. */
    int id = -1;
    final Map<Integer, UcxPutPath.Remote> rkeys = UcxPutPath.newCache();
    final ArrayDeque<UcxPutPath.Held> held = new ArrayDeque<>();
    /** Keys revoked by the responder, closed when the route closes. */
    final List<UcpRemoteKey> retiredKeys = new ArrayList<>();
    long flushesStarted;
    long flushesDone;
    boolean flushing;
    boolean putsSinceFlush;
    boolean anyRequest;
    int highestRequestPsn;

    UcxRoute(PortAddress destination, UcxDirectory.Entry target) {
        this.destination = destination;
        this.target = target;
    }

    @Override
    public PortAddress destination() {
        return destination;
    }
}
