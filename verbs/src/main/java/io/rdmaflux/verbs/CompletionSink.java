package io.rdmaflux.verbs;

/** Receives completions from {@link CompletionQueue#poll}. */
@FunctionalInterface
public interface CompletionSink {
    /** One completion; {@code wc} is reused and valid only during this call. Must not throw. */
    void onCompletion(WorkCompletion wc);
}
