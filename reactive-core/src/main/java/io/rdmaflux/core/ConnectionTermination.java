package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Connection stage: the end of a connection, once. The termination sequence (every send fails, the receive
 * side ends, the rails are flushed after a failure or left to send their CLOSE, the one-sided engine ends,
 * then the node and {@link RdmaConnection#onClose()} hear of it), the aborts that lead into it (an abort
 * CLOSE on every rail first: a protocol failure, an internal error, the application's abort) and the
 * node's force close. The rails themselves are freed later by {@link ConnectionResources}, once nothing of
 * theirs is held.
 *
 * <p><b>Concurrency:</b> progress thread only; {@link #forceClose} on the closing thread after the node's
 * progress thread stopped; {@link #onClose()} and {@link #closedError()} on any thread.
 */
final class ConnectionTermination {
    private final DefaultRdmaConnection connection;
    private final RdmaNode node;
    private final Channel[] channels;
    private final SendPipeline pipeline;
    private final InflightLedger ledger;
    private final SendOps ops;
    private final InboundDelivery delivery;
    private final LazyOneSidedEngine oneSided;
    private final ConnectionResources resources;
    private final Sinks.Empty<Void> onClose = Sinks.empty();

    ConnectionTermination(DefaultRdmaConnection connection, RdmaNode node, Channel[] channels, SendPipeline pipeline,
                          InflightLedger ledger, SendOps ops, InboundDelivery delivery, LazyOneSidedEngine oneSided,
                          ConnectionResources resources) {
        this.connection = connection;
        this.node = node;
        this.channels = channels;
        this.pipeline = pipeline;
        this.ledger = ledger;
        this.ops = ops;
        this.delivery = delivery;
        this.oneSided = oneSided;
        this.resources = resources;
    }

    Mono<Void> onClose() {
        return onClose.asMono();
    }

    /**
     * The error a send on this closed connection fails with: the transport or protocol failure that ended
     * it, so a caller learns why; a {@link ConnectionClosedException} after a close.
     */
    RdmaException closedError() {
        Throwable failed = connection.failure();
        if (failed instanceof RdmaException && !(failed instanceof ConnectionClosedException)) {
            return (RdmaException) failed;
        }
        return new ConnectionClosedException(connection.name() + " is closed; open a new connection to send", false);
    }

    /** The peer broke the protocol: an abort CLOSE on every rail, then the connection terminates. */
    void protocolFailure(String message) {
        abortWith(message, new RdmaProtocolException(message + "; the connection " + connection.name() + " is aborted"));
    }

    /** An abort CLOSE naming {@code reason} on every rail, then termination with {@code error}. */
    void abortWith(String reason, Throwable error) {
        int nextPsn = pipeline.nextPsn();
        for (Channel ch : channels) {
            ch.sendAbort(nextPsn, reason);
        }
        terminate(error);
    }

    /**
     * An unexpected exception {@code e} left a duty cycle (a bug here or in a channel kind): aborts the
     * connection with {@link RdmaException.Category#INTERNAL}, as its state may be half updated; the caller
     * rethrows {@code e} to the engine's error handler.
     */
    void abortOnInternalError(Throwable e) {
        if (!connection.isTerminated()) {
            RdmaException internal = new RdmaException(RdmaException.Category.INTERNAL, connection.name()
                + " aborted: unexpected " + e + " on its progress thread (a bug: please report it with the cause's stack trace)", null, e);
            try {
                abortWith("internal error", internal);
            } catch (RuntimeException nested) {
                e.addSuppressed(nested);
                terminate(internal);
            }
        }
    }

    /**
     * Ends the connection (once): every send fails with {@code error} (or a closed error after a graceful
     * close), the receive side ends, and the rails are freed once nothing of theirs is held.
     */
    void terminate(@Nullable Throwable error) {
        if (connection.isTerminated()) {
            return;
        }
        connection.markTerminated(error);
        Throwable sendError = error != null ? error : closedError();
        pipeline.clear();
        ledger.releaseAll();
        ops.failAll(sendError);
        if (error != null) {
            delivery.terminate(error);
            if (!(error instanceof ConnectionClosedException) && !isInternal(error)) {
                // a transport or protocol failure: flush whatever is outstanding; a close (and an internal
                // error's abort, so the peer hears it) lets its CLOSE frame go out
                for (Channel ch : channels) {
                    ch.abort();
                }
            }
        } else if (!delivery.receiveTerminated()) {
            delivery.endUnsubscribed();
        }
        ops.failNew(sendError);
        oneSided.end(sendError);
        node.onConnectionTerminated(connection);
        onClose.tryEmitEmpty();
    }

    private static boolean isInternal(Throwable error) {
        return error instanceof RdmaException && ((RdmaException) error).category() == RdmaException.Category.INTERNAL;
    }

    /**
     * Node close (its progress thread stopped): stop now and free everything, whatever is held.
     *
     * @return the received messages the application still held, or null when it held none
     */
    RdmaLeakReporter.@Nullable Leak forceClose() {
        if (!connection.isTerminated()) {
            // releases what the connection itself still queued: what is left is the application's
            abortWith("node closed", new ConnectionClosedException(connection.name() + ": its node was closed", false));
        }
        RdmaLeakReporter.Leak leak = resources.heldByApplication();
        resources.free();
        return leak;
    }
}
