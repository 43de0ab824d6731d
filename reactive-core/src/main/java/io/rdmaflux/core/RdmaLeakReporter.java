package io.rdmaflux.core;

import java.util.List;
import java.util.Objects;

/**
 * The one place rdmaflux reports leaked messages, like Netty's {@code ResourceLeakDetector}: received
 * messages the application never released when their node closed.
 *
 * <p><b>When it fires:</b> {@link RdmaNode#close()} stops the node's progress thread, ends every
 * connection (messages still queued inside the connection are released by the connection, not
 * reported) and then counts, per connection, the received messages whose reference count is still
 * above 0: those were handed to the application and never released. It frees their memory all the
 * same (a closed node holds nothing), so the application's references become invalid, and reports
 * one {@link Leak} per connection that had any, after every resource was freed. A connection closed
 * by itself ({@link RdmaConnection#close()}, {@link RdmaConnection#abort()}) is not a leak while its
 * node is open: it keeps the receive buffers of held messages until they are released. Messages the
 * application sends carry no node memory (the connection releases each one it takes), so only the
 * receive side can leak.
 *
 * <p><b>Cost:</b> nothing on the message path; the count is taken once per connection at node
 * close by reading the reference counts of the connection's reusable message objects.
 *
 * <p><b>Concurrency:</b> {@link #onLeak} runs on the thread that called {@link RdmaNode#close()}, after
 * the node's own thread stopped; it may be called from several threads at once when several nodes
 * close at once, so implementations must be thread-safe. It should not block. Whatever it throws
 * propagates from {@code close()}, which has freed everything by then and still reports the leaks of
 * the node's other connections: the first throwable is rethrown after the last call, with later ones
 * suppressed in it. The installed reporter is a
 * global (per class loader) that {@link #install} swaps atomically: meant for the application's start
 * or for a test harness that records leaks and fails the test that made them.
 */
@FunctionalInterface
public interface RdmaLeakReporter {
    /**
     * Called once per connection that had received messages not released when its node closed.
     *
     * @param leak the connection, how many messages, and examples of them
     */
    void onLeak(Leak leak);

    /**
     * The default reporter: one {@link System.Logger.Level#WARNING} line on the {@link System.Logger}
     * named {@code io.rdmaflux.core.RdmaLeakReporter} (the JDK's logging unless the application
     * installs another {@link System.LoggerFinder}), with {@link Leak#toString()}.
     */
    static RdmaLeakReporter logging() {
        return LeakReporters.LOGGING;
    }

    /** The reporter in use now ({@link #logging()} unless another was installed). */
    static RdmaLeakReporter installed() {
        return LeakReporters.INSTALLED.get();
    }

    /**
     * Makes {@code reporter} the one every node reports to from now on.
     *
     * @return the reporter it replaces, to put back with another {@code install}
     */
    static RdmaLeakReporter install(RdmaLeakReporter reporter) {
        return LeakReporters.INSTALLED.getAndSet(Objects.requireNonNull(reporter, "reporter"));
    }

    /**
     * Received messages of one connection that the application still held when the node closed.
     *
     * @param connection the connection's name ({@code node/connN (local -> remote)})
     * @param messages   how many messages were held (at least 1)
     * @param examples   {@code toString()} of up to {@value #MAX_EXAMPLES} of them (PSN, length in bytes,
     *                   the buffer it was in); fewer than {@code messages} when more were held, or when
     *                   they were reassembled from fragments (those are counted only)
     */
    record Leak(String connection, int messages, List<String> examples) {
        /** At most this many messages are named in {@link #examples()}. */
        public static final int MAX_EXAMPLES = 3;

        public Leak {
            Objects.requireNonNull(connection, "connection");
            if (messages <= 0) {
                throw new IllegalArgumentException("messages > 0 required but it was " + messages);
            }
            examples = List.copyOf(examples);
        }

        /** One line for a log: what leaked, where, and how to fix it. */
        @Override
        public String toString() {
            return "LEAK: " + messages + " received message" + (messages == 1 ? " was" : "s were") + " not released by the application when the node of "
                + connection + " closed (the node freed " + (messages == 1 ? "it" : "them") + "), e.g. " + examples
                + "; release each received message exactly once (release(), try-with-resources or Kotlin use {})";
        }
    }
}
