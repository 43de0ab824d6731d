package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A provider's one {@code rdma_cm} event channel and the dispatch of its events to the id's owner (a
 * QP's {@link QpConnection}): CONNECT_REQUEST to the owner of the listening id, every other event to
 * the owner of the id it names. A request at a listener nobody owns any more is rejected (its id
 * destroyed), as the kernel does for a port nobody listens on.
 *
 * <p><b>Concurrency:</b> {@link #lock} guards every CM state of the provider: dispatch holds it, and so
 * do the QP state changes that start or stop CM work; lock order is this lock, then a QP's.
 */
final class CmEvents {
    /** Receives the events of the ids it registered. */
    interface Handler {
        void onCmEvent(RdmaSeam.CmEvent event);
    }

    /** Guards the CM state of the whole provider. */
    final Object lock = new Object();
    private final RdmaSeam.EventChannel channel;
    private final Map<RdmaSeam.CmId, Handler> handlers = new HashMap<>();

    CmEvents(RdmaSeam.EventChannel channel) {
        this.channel = channel;
    }

    /** Creates an id on the provider's channel. */
    RdmaSeam.CmId createId() {
        try {
            return channel.createId();
        } catch (IOException e) {
            throw new VerbsException("rdma_create_id failed: " + e.getMessage(), e);
        }
    }

    /** Routes the events of {@code id} to {@code handler} (call with {@link #lock} held). */
    void register(RdmaSeam.CmId id, Handler handler) {
        handlers.put(id, handler);
    }

    /** Stops routing events of {@code id} (call with {@link #lock} held). */
    void unregister(RdmaSeam.CmId id) {
        handlers.remove(id);
    }

    /**
     * Reads and dispatches every pending event; waits up to {@code timeoutMs} for the first.
     *
     * @return how many events were dispatched
     * @throws VerbsException if the channel fails
     */
    int dispatch(int timeoutMs) {
        int n = 0;
        int wait = timeoutMs;
        while (true) {
            RdmaSeam.CmEvent event;
            try {
                event = channel.poll(wait);
            } catch (IOException e) {
                throw new VerbsException("rdma_get_cm_event failed: " + e.getMessage(), e);
            }
            if (event == null) {
                return n;
            }
            wait = 0;
            n++;
            synchronized (lock) {
                RdmaSeam.CmId key = event.type() == NativeCodes.CM_CONNECT_REQUEST && event.listenId() != null ? event.listenId() : event.id();
                Handler h = handlers.get(key);
                if (h != null) {
                    h.onCmEvent(event);
                } else if (event.type() == NativeCodes.CM_CONNECT_REQUEST) {
                    destroyQuietly(event.id());
                }
            }
        }
    }

    /**
     * Destroys the channel; the ids of the provider's QPs must be gone. A CONNECT_REQUEST still queued (a peer
     * connected after the provider's thread stopped dispatching) carries an id of its own that nobody will
     * take: it is read and its id destroyed first, as {@code rdma_destroy_event_channel} needs every id gone
     * (without this the channel stayed, EBUSY, whenever a peer's connect raced the close).
     */
    void close() {
        try {
            RdmaSeam.CmEvent event;
            while ((event = channel.poll(0)) != null) {
                if (event.type() == NativeCodes.CM_CONNECT_REQUEST) {
                    destroyQuietly(event.id());
                }
            }
        } catch (IOException e) {
            // closing: destroy what can be destroyed
        }
        try {
            channel.destroy();
        } catch (IOException e) {
            // closing: nothing left to save
        }
    }

    static void destroyQuietly(RdmaSeam.CmId id) {
        try {
            id.destroy();
        } catch (IOException e) {
            // the id is gone either way
        }
    }
}
