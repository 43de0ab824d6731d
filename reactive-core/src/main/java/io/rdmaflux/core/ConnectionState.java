package io.rdmaflux.core;

/**
 * The lifecycle of a connection, in order; a connection only moves forward. Its duty cycle runs the
 * stages by this state instead of a set of flags.
 *
 * <pre>
 * OPEN --close()/peer CLOSE--&gt; CLOSING --sends done, CLOSE sent--&gt; CLOSE_SENT --FINAL sent--&gt; FINAL_SENT
 *   \____________________\_____________________________\_______________________\--&gt; TERMINATED --&gt; FREED
 * </pre>
 * Any state may go straight to {@link #TERMINATED}: an abort, a failure of the last rail, a protocol
 * violation, the node's close.
 */
enum ConnectionState {
    /** Messages flow both ways. */
    OPEN,
    /** A graceful close was asked for (here or by the peer): sends in progress finish, new ones are refused. */
    CLOSING,
    /** This side's CLOSE went on every live rail: no message after it, control frames still go. */
    CLOSE_SENT,
    /** This side's last frame (FINAL) went on every rail of its CLOSE: nothing more is sent. */
    FINAL_SENT,
    /** Over: every send and the receive side ended; rails wait for held receive buffers to be released. */
    TERMINATED,
    /** Queue pairs, completion queues and rail buffers are freed. */
    FREED;

    /** Whether this side's CLOSE went (or the connection is over): no message is sent any more. */
    boolean closeSent() {
        return ordinal() >= CLOSE_SENT.ordinal();
    }

    boolean terminated() {
        return ordinal() >= TERMINATED.ordinal();
    }
}
