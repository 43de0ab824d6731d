package io.rdmaflux.core.internal.onesided;

/**
 * Work handed from any thread to the engine's progress thread: {@link #run()} there, or
 * {@link #fail(Throwable)} (on whichever thread finds the engine closed) if it never will run.
 */
interface Command {
    void run();

    /** The engine is closed: end whatever waits on this command with {@code error}. */
    default void fail(Throwable error) {
    }
}
