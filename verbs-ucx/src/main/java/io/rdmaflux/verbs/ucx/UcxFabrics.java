package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.soft.SoftFabric;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The JVM-wide UCX fabrics, one per transport list ({@code tls}): a {@link SoftFabric} over one
 * {@link UcxFrameTransport} (one UCP context), shared by every {@code ucx} provider opened with the
 * same {@code tls} so that their connection managers find each other's listeners and their NICs each
 * other's workers. Reference-counted: the UCP context closes when the last provider using it closes.
 *
 * <p><b>Concurrency:</b> thread-safe (one lock; setup path only).
 */
final class UcxFabrics {
    private static final Map<String, Entry> FABRICS = new HashMap<>();

    private UcxFabrics() {
    }

    private static final class Entry {
        final SoftFabric fabric;
        final UcxFrameTransport transport;
        int users;

        Entry(SoftFabric fabric, UcxFrameTransport transport) {
            this.fabric = fabric;
            this.transport = transport;
        }
    }

    private static String key(@Nullable String tls, boolean rma) {
        return (tls == null ? "" : tls) + (rma ? "" : "#no-rma");
    }

    /**
     * The fabric for {@code tls}, its contexts with UCX's RMA feature when {@code rma} (the put path may
     * run), opened on first use; pair with {@link #release}.
     */
    static synchronized SoftFabric acquire(@Nullable String tls, boolean rma) {
        Entry e = FABRICS.get(key(tls, rma));
        if (e == null) {
            UcxFrameTransport t = new UcxFrameTransport(tls, UcxDirectory.JVM, rma);
            e = new Entry(SoftFabric.over("ucx" + (tls == null ? "" : "[" + tls + "]") + (rma ? "" : "[no-rma]"), t), t);
            FABRICS.put(key(tls, rma), e);
        }
        e.users++;
        return e.fabric;
    }

    /** Gives back one use; the last one closes the UCP context. */
    static synchronized void release(@Nullable String tls, boolean rma) {
        Entry e = FABRICS.get(key(tls, rma));
        if (e != null && --e.users == 0) {
            FABRICS.remove(key(tls, rma));
            e.transport.close();
        }
    }
}
