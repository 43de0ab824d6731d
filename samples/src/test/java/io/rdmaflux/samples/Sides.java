package io.rdmaflux.samples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs {@code rdmaflux} command lines as the two sides of a two-process run, each on its own
 * thread in this JVM (each side opens its own soft provider, so its own sockets): real sockets on
 * 127.0.0.1, a listener on port 0 that prints where it listens, generous bounds on real
 * conditions, no sleeps. {@link #joinAll()} joins every thread started.
 */
final class Sides {
    private final List<Thread> threads = new CopyOnWriteArrayList<>();

    /** A side's exit code and what it printed. */
    record Run(int code, String out, String err) {
        /** The one line of err, asserting there is exactly one and no stack trace. */
        String oneLineError() {
            String[] lines = err.strip().split("\n");
            assertTrue(lines.length == 1 && !err.isBlank(), "one line expected on stderr, got:\n" + err + "\nstdout:\n" + out);
            assertTrue(!err.contains("\tat "), "no stack trace without --verbose: " + err);
            return lines[0];
        }
    }

    /** Captures a side's output and tells when it is listening. */
    static final class Output extends ByteArrayOutputStream {
        final CountDownLatch listening = new CountDownLatch(1);

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            super.write(b, off, len);
            if (toString(StandardCharsets.UTF_8).contains("listening at")) {
                listening.countDown();
            }
        }

        String text() {
            synchronized (this) {
                return toString(StandardCharsets.UTF_8);
            }
        }
    }

    /** Starts {@code args} on a new thread; its future completes just before the thread ends. */
    CompletableFuture<Run> start(Output out, String... args) {
        CompletableFuture<Run> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Output err = new Output();
            try {
                int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
                f.complete(new Run(code, out.text(), err.text()));
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "test-side-" + String.join("-", args).replaceAll("[^A-Za-z0-9.:-]", "_"));
        threads.add(t);
        t.start();
        return f;
    }

    /** Runs {@code args} on this thread. */
    static Run run(String... args) {
        Output out = new Output();
        Output err = new Output();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.text(), err.text());
    }

    /**
     * Waits until the side says where it listens and returns that {@code host:port}; if it stops
     * first, fails with what it printed.
     */
    static String awaitListening(Output out, CompletableFuture<Run> side) throws Exception {
        long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!out.listening.await(50, TimeUnit.MILLISECONDS)) {
            if (side.isDone()) {
                Run r = side.get();
                throw new AssertionError("the listener stopped before listening, exit " + r.code() + ": " + r.err() + r.out());
            }
            if (System.nanoTime() - deadlineNs > 0) {
                throw new AssertionError("the listener did not listen within 30 s: " + out.text());
            }
        }
        Matcher m = java.util.regex.Pattern.compile("listening at (\\S+:\\d+)").matcher(out.text());
        assertTrue(m.find(), out.text());
        return m.group(1);
    }

    /** A loopback port nothing listens on (bound and freed again: only for "nobody listens there" cases). */
    static int freeLoopbackPort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket()) {
            s.bind(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }

    /** Joins every side started, then every {@code rdmaflux-} thread (providers and nodes stop theirs on close). */
    void joinAll() throws InterruptedException {
        for (Thread t : threads) {
            t.join(10_000);
        }
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("rdmaflux-") && t != Thread.currentThread()) {
                t.join(10_000);
            }
        }
    }
}
