package io.rdmaflux.striping;

/**
 * A subchannel as the {@link Rails} operators drive it: one rail's connection (an RC queue pair,
 * an eager ring, a reliable UD channel — any kind, seed 000 §4.2).
 *
 * <p><b>Completion:</b> every posted stripe is reported exactly once through
 * {@link StripeListener#onStripeCompleted}, in post order (as an RC send queue completes), or the
 * subchannel reports {@link StripeListener#onRailFailed} once, after which its remaining stripes
 * count as lost and are re-sent elsewhere.
 *
 * <p><b>Concurrency:</b> {@link #post} is called from the operator's drain loop, never
 * concurrently with itself. Reports for one rail must come from one thread at a time (the thread
 * polling that rail's completion queue); different rails may report from different threads.
 *
 * @param <T> the message type
 */
public interface RailSubchannel<T> {
    /** Called once when a subscription starts, before any {@link #post}. */
    void start(int rail, StripeListener listener);

    /**
     * Posts {@code stripe} (bytes {@link Stripe#offsetBytes()} .. + {@link Stripe#lengthBytes()} of
     * {@link Stripe#message()}). Must not block; copy what is needed, the stripe object is reused.
     */
    void post(Stripe<T> stripe);

    /** Called once when the subscription ends (complete, error or cancel); stop reporting. */
    default void stop() {
    }

    /** Where a subchannel reports completions and failure; thread-safe as described above. */
    interface StripeListener {
        /** The stripe {@code stripeId} completed successfully at {@code nowNs} (the operator's clock). */
        void onStripeCompleted(int rail, long stripeId, long nowNs);

        /** The rail failed (error completion, port down, peer gone). */
        void onRailFailed(int rail, Throwable cause, long nowNs);
    }
}
