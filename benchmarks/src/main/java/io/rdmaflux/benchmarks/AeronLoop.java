package io.rdmaflux.benchmarks;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The Aeron reference of the message-rate benchmarks: an embedded media driver (SHARED threading, its
 * directory under {@code java.io.tmpdir}, deleted on {@link #close()}), one publication and one
 * subscription on {@code channel}, and a loop that offers fixed-size messages and polls them back on
 * the calling thread. Not thread-safe: one benchmark thread.
 */
public final class AeronLoop implements AutoCloseable {
    private final MediaDriver driver;
    private final Aeron aeron;
    private final Subscription subscription;
    private final Publication publication;
    private final File dir;
    private final UnsafeBuffer source;
    private final int messageBytes;
    private long received;
    private final FragmentHandler handler = (buffer, offset, length, header) -> received++;

    /**
     * Launches the driver and connects a publication to a subscription.
     *
     * @param name         distinguishes the driver directory (with the process id)
     * @param channel      e.g. {@code aeron:ipc} or {@code aeron:udp?endpoint=127.0.0.1:PORT}
     * @param streamId     the stream id of both ends
     * @param messageBytes the size of every message, bytes
     * @param ipcTermBytes the IPC term buffer length, bytes (0: Aeron's default)
     * @throws IllegalStateException if the publication does not connect within 10 s
     */
    public AeronLoop(String name, String channel, int streamId, int messageBytes, int ipcTermBytes) {
        this.messageBytes = messageBytes;
        this.source = new UnsafeBuffer(ByteBuffer.allocateDirect(messageBytes));
        this.dir = new File(System.getProperty("java.io.tmpdir"), "rdmaflux-" + name + "-" + ProcessHandle.current().pid());
        MediaDriver.Context ctx = new MediaDriver.Context().aeronDirectoryName(dir.getAbsolutePath())
            .dirDeleteOnStart(true).dirDeleteOnShutdown(true).threadingMode(io.aeron.driver.ThreadingMode.SHARED);
        if (ipcTermBytes > 0) {
            ctx.ipcTermBufferLength(ipcTermBytes);
        }
        driver = MediaDriver.launch(ctx);
        aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir.getAbsolutePath()));
        subscription = aeron.addSubscription(channel, streamId);
        publication = aeron.addPublication(channel, streamId);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!publication.isConnected()) {
            if (System.nanoTime() - deadline > 0) {
                close();
                throw new IllegalStateException("the Aeron publication did not connect within 10 s on " + channel);
            }
            Thread.onSpinWait();
        }
    }

    /** Offers {@code messages} messages and polls until all arrived; returns the total received so far. */
    public long batch(int messages) {
        long target = received + messages;
        for (int i = 0; i < messages; i++) {
            while (publication.offer(source, 0, messageBytes) < 0) {
                subscription.poll(handler, 256);
            }
        }
        while (received < target) {
            subscription.poll(handler, 256);
        }
        return received;
    }

    @Override
    public void close() {
        publication.close();
        subscription.close();
        aeron.close();
        driver.close();
        IoUtil.delete(dir, true);
    }
}
