package io.rdmaflux.samples;

import java.security.MessageDigest;

/**
 * Gets the JIT to compile the pipeline's SHA-256 verification before the first chunk, on a background thread
 * that runs while the rails are opened and connected.
 *
 * <p>Why: HotSpot runs SHA-256 with its CPU instructions ({@code sha_ni}/AVX2, about 1.6 GB/s here) only once
 * C2 has compiled {@code DigestBase.implCompressMultiBlock}; before that the interpreter and C1 run the Java
 * rounds at 60–250 MiB/s. In a fresh JVM on two cores, C2 is busy with everything else for the first few
 * hundred ms, so the sender's and the receiver's digests ran in Java for the first ~0.2 s of the transfer and
 * held the main job at ~10–15 MiB/s there (async-profiler: {@code SHA2.implCompress0} was the top frame of
 * both the producer and the consumer thread). That was the largest part of the "ramp" the issue measured, and
 * it is the application's cost, not the transport's. Hashing a few MiB of zeros on the side while the rails
 * connect moves it out of the transfer (README "The main job from its first byte").
 *
 * <p>It stops when three 256 KiB blocks in a row hash in under {@link #FAST_BLOCK_NS} (the compiled
 * intrinsic takes ~160 µs per block), after {@link #MAX_BLOCKS} blocks, or when closed. Thread-safe: one
 * thread starts it, any thread may {@link #awaitReady} or {@link #close} it.
 */
final class DigestWarmup implements AutoCloseable {
    /** A 256 KiB block faster than this, ns, counts as compiled. */
    static final long FAST_BLOCK_NS = 500_000;
    /** At most this many 256 KiB blocks (16 MiB) are hashed. */
    static final int MAX_BLOCKS = 64;
    private static final int BLOCK_BYTES = 256 << 10;
    private static final int FAST_IN_A_ROW = 3;

    private final Thread thread;
    private volatile boolean stop;
    private volatile int blocks;
    private volatile boolean compiled;

    private DigestWarmup() {
        thread = new Thread(this::run, "rdmaflux-digest-warmup");
        thread.setDaemon(true);
    }

    /** Starts warming on a new daemon thread. */
    static DigestWarmup start() {
        DigestWarmup w = new DigestWarmup();
        w.thread.start();
        return w;
    }

    private void run() {
        MessageDigest d = PipelineCommand.sha256();
        byte[] block = new byte[BLOCK_BYTES];
        int fast = 0;
        for (int i = 0; i < MAX_BLOCKS && !stop; i++) {
            long t = System.nanoTime();
            d.update(block);
            blocks = i + 1;
            if (System.nanoTime() - t < FAST_BLOCK_NS) {
                if (++fast == FAST_IN_A_ROW) {
                    compiled = true;
                    return;
                }
            } else {
                fast = 0;
            }
        }
    }

    /**
     * Waits until warming has finished, at most {@code maxMs} ms (the transfer then starts anyway).
     *
     * @return true if SHA-256 now runs compiled
     */
    boolean awaitReady(long maxMs) {
        try {
            thread.join(Math.max(1, maxMs));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return compiled;
    }

    /** 256 KiB blocks hashed so far. */
    int blocks() {
        return blocks;
    }

    /** Stops warming and waits for the thread to end (bounded: one block). */
    @Override
    public void close() {
        stop = true;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
