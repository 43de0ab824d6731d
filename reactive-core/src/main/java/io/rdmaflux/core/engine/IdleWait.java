package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;

import java.util.Objects;

/**
 * Something an idle progress thread can block in instead of parking, so that the events it waits
 * for end the wait themselves: for a node that drives an INVOKER-mode provider on the IP fabric,
 * the provider's socket {@code Selector} (Netty's event-loop model: block in {@code select} with a
 * timeout, and let another thread's hand-off call {@code selector.wakeup()}).
 *
 * <p><b>Concurrency:</b> {@link #await} on the progress thread only; {@link #wakeup} from any thread.
 */
public interface IdleWait {
    /**
     * Blocks until an event, {@link #wakeup()}, or about {@code timeoutNs}; may return early.
     *
     * @param timeoutNs the longest wait, ns
     * @return true if it waited (possibly cut short), false if it cannot wait now and returned at once
     */
    boolean await(long timeoutNs);

    /** Ends an {@link #await} in progress, or makes the next one return at once. */
    void wakeup();

    /**
     * The I/O wait of a provider the calling node drives ({@link RdmaProvider#awaitWork(long)} and
     * {@link RdmaProvider#wakeup()}).
     *
     * @throws IllegalArgumentException if the provider does not run in INVOKER mode (its own thread
     *     drives it, so no other thread may wait in it)
     */
    static IdleWait of(RdmaProvider provider) {
        Objects.requireNonNull(provider, "provider");
        if (provider.threadingMode() != ThreadingMode.INVOKER) {
            throw new IllegalArgumentException("only the thread driving an INVOKER-mode provider may wait in it, but provider '"
                + provider.name() + "' runs in " + provider.threadingMode() + " mode");
        }
        return new IdleWait() {
            @Override
            public boolean await(long timeoutNs) {
                return provider.awaitWork(timeoutNs);
            }

            @Override
            public void wakeup() {
                provider.wakeup();
            }

            @Override
            public String toString() {
                return "IdleWait{" + provider.name() + "}";
            }
        };
    }
}
