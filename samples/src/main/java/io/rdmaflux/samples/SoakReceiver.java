package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaServer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The soak's receiving side: accepts one connection per epoch from the sender ({@link SoakSender}),
 * checks every DATA message ({@link SoakWire#check}: CRC32C and the next sequence number, which runs
 * on across epochs, so a message lost or repeated across a reconnect is caught too), answers each
 * epoch's END with a {@link SoakWire.Verdict}, and returns after the last epoch.
 *
 * <p>Messages are checked on one consumer thread and released right after; the first wrong one is
 * kept for the report. Not thread-safe: one {@link #serve} per instance.
 */
final class SoakReceiver {
    /** What the receiver saw over the whole run. */
    record Result(long verified, long wrong, long bytes, int epochs, @Nullable String firstError) {
    }

    private final int maxMessageBytes;
    private byte[] scratch;
    private long expectedSeq;
    private long verified;
    private long wrong;
    private long bytes;
    private long epochMessages;
    private long epochWrong;
    private long epochBytes;
    private @Nullable String firstError;

    SoakReceiver(int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
        this.scratch = new byte[maxMessageBytes];
    }

    /**
     * Serves epochs on {@code server} until the sender's last END.
     *
     * @throws UserError if no sender connects, or an epoch does not end, before {@code deadlineNs}
     */
    Result serve(RdmaServer server, long deadlineNs) {
        BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
        Disposable acceptor = server.accept().subscribe(accepted::add, e -> { });
        Scheduler consumer = Schedulers.newSingle("rdmaflux-soak-consumer");
        int epochs = 0;
        try {
            while (true) {
                RdmaConnection c = accepted.poll(Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (c == null) {
                    throw new UserError("no soak sender connected to " + server.address().host() + ":" + server.address().port()
                        + " in time (epoch " + (epochs + 1) + "; --timeout-s)");
                }
                epochs++;
                boolean last = epoch(c, consumer, deadlineNs);
                if (last) {
                    return new Result(verified, wrong, bytes, epochs, firstError);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserError("interrupted while waiting for the soak sender");
        } finally {
            acceptor.dispose();
            consumer.dispose();
        }
    }

    /** One connection: checks until END, answers, waits for the sender to close it. Returns END's last flag. */
    private boolean epoch(RdmaConnection c, Scheduler consumer, long deadlineNs) {
        epochMessages = 0;
        epochWrong = 0;
        epochBytes = 0;
        CompletableFuture<Boolean> end = new CompletableFuture<>();
        Disposable d = c.receive().publishOn(consumer, 64).subscribe(m -> onMessage(m, end), end::completeExceptionally,
            () -> end.completeExceptionally(new UserError("the soak sender closed an epoch after " + epochMessages
                + " messages, before its END")));
        try {
            boolean last = Deadlines.await(end, deadlineNs, "the soak sender's epoch");
            SoakWire.Verdict v = new SoakWire.Verdict(epochMessages - epochWrong, epochWrong, epochBytes);
            Deadlines.block(c.send(Mono.just(v.encode())), deadlineNs, "sending the soak verdict");
            c.onClose().onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(30));
            return last;
        } finally {
            d.dispose();
            c.close();
        }
    }

    private void onMessage(RdmaMessage m, CompletableFuture<Boolean> end) {
        try {
            if (end.isDone()) {
                return;
            }
            if (SoakWire.isEnd(m)) {
                long announced = SoakWire.endCount(m);
                if (announced != epochMessages) {
                    fail("the epoch's END announces " + announced + " messages but " + epochMessages + " arrived");
                }
                end.complete(SoakWire.endIsLast(m));
                return;
            }
            int len = m.lengthBytes();
            if (len > scratch.length) {
                scratch = new byte[Math.max(len, maxMessageBytes)];
            }
            m.content().getBytes(0, scratch, 0, len);
            String error = SoakWire.check(scratch, len, expectedSeq);
            expectedSeq++;
            epochMessages++;
            if (error != null) {
                fail(error);
            } else {
                verified++;
                bytes += len;
                epochBytes += len;
            }
        } catch (RuntimeException e) {
            end.completeExceptionally(e);
        } finally {
            m.release();
        }
    }

    private void fail(String error) {
        wrong++;
        epochWrong++;
        if (firstError == null) {
            firstError = error;
        }
    }
}
