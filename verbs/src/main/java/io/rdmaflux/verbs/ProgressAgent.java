package io.rdmaflux.verbs;

/**
 * A unit of protocol progress, in the style of Aeron's agents: the caller passes the current time
 * and the agent does whatever is due, returning how much work it did (0 when idle, so an idle
 * strategy may back off).
 *
 * <p>Time is a parameter, never read from a static clock inside protocol logic, so the same agent
 * runs in real time (a thread passes {@code System.nanoTime()}) or virtual time (a test advances a
 * clock and calls {@code doWork}).
 *
 * <p><b>Concurrency:</b> {@code doWork} is called by one thread at a time.
 */
public interface ProgressAgent {
    /**
     * Does the work that is due at {@code nowNs}.
     *
     * @param nowNs the current time in nanoseconds, from the clock the owner was built with
     * @return the amount of work done; 0 when there was nothing to do
     */
    int doWork(long nowNs);

    /**
     * Whether the agent, idle now, may be left until it is signalled (an engine that schedules by signals
     * asks this of an agent that opted in, when it has been idle long enough to be skipped): false while it
     * has work that can arrive without a signal, such as a ring in memory it must poll. Called by the thread
     * that calls {@link #doWork}. Default true.
     */
    default boolean mayWaitForSignal() {
        return true;
    }

    /** A short name, used for the thread that runs this agent. */
    String roleName();
}
