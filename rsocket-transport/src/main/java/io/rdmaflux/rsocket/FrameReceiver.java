package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmaflux.core.RdmaMessage;
import org.agrona.concurrent.UnsafeBuffer;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;

/**
 * The inbound side of {@link RdmaDuplexConnection}: each received {@link RdmaMessage} is copied once into a
 * {@link ByteBuf} from the connection's allocator and released at once (its receive buffer goes back to
 * the pool, and a credit to the peer, without waiting for RSocket); the frame is then handed to RSocket and
 * released when {@code onNext} returns, the contract of RSocket's transports (RSocket retains what it keeps).
 *
 * <p>Demand passes through unchanged: RSocket's {@code request(n)} on {@code receive()} is the demand of
 * the rdmaflux {@code receive()} subscription, which grants the peer credits for
 * {@code min(outstanding demand, free receive buffers)} messages.
 *
 * <p><b>Discard support:</b> a message that arrives after {@code cancel()} (a race with the progress
 * thread) is released without being copied. The copy's {@code ByteBuf} is released on every path,
 * including an {@code onNext} that throws.
 *
 * <p><b>Concurrency:</b> signals are serial (the progress thread of the connection's node); the scratch
 * view is used only inside {@code onNext}.
 */
final class FrameReceiver implements CoreSubscriber<RdmaMessage>, Subscription, Scannable {
    private final CoreSubscriber<? super ByteBuf> actual;
    private final ByteBufAllocator alloc;
    /** Re-pointed at each destination ByteBuf's memory: no view object per frame. */
    private static final byte[] NOTHING = new byte[0];
    private final UnsafeBuffer scratch = new UnsafeBuffer(NOTHING);
    private @Nullable Subscription s;
    private volatile boolean cancelled;
    private boolean done;

    FrameReceiver(CoreSubscriber<? super ByteBuf> actual, ByteBufAllocator alloc) {
        this.actual = actual;
        this.alloc = alloc;
    }

    @Override
    public void onSubscribe(Subscription s) {
        if (Operators.validate(this.s, s)) {
            this.s = s;
            actual.onSubscribe(this);
        }
    }

    @Override
    public void onNext(RdmaMessage message) {
        if (done || cancelled) {
            message.release();
            return;
        }
        ByteBuf frame;
        try {
            frame = copyOut(message);
        } catch (Throwable t) {
            Subscription sub = s;
            if (sub != null) {
                sub.cancel();
            }
            onError(Operators.onOperatorError(t, actual.currentContext()));
            return;
        } finally {
            message.release();
        }
        try {
            actual.onNext(frame);
        } finally {
            frame.release();
        }
    }

    /** One copy from the received message into a new buffer of the allocator; the caller releases the message. */
    private ByteBuf copyOut(RdmaMessage message) {
        int len = message.lengthBytes();
        ByteBuf frame = alloc.buffer(len, len);
        try {
            int at = frame.writerIndex();
            if (frame.hasMemoryAddress()) {
                scratch.wrap(frame.memoryAddress() + at, len);
                message.copyTo(0, scratch, 0, len);
            } else if (frame.hasArray()) {
                scratch.wrap(frame.array(), frame.arrayOffset() + at, len);
                message.copyTo(0, scratch, 0, len);
            } else {
                ByteBuffer nio = frame.nioBuffer(at, len);
                message.content().getBytes(0, nio, nio.position(), len);
            }
            frame.writerIndex(at + len);
            return frame;
        } catch (Throwable t) {
            frame.release();
            throw t;
        } finally {
            scratch.wrap(NOTHING);
        }
    }

    @Override
    public void onError(Throwable t) {
        if (done) {
            Operators.onErrorDropped(t, actual.currentContext());
            return;
        }
        done = true;
        actual.onError(t);
    }

    @Override
    public void onComplete() {
        if (done) {
            return;
        }
        done = true;
        actual.onComplete();
    }

    @Override
    public void request(long n) {
        Subscription sub = s;
        if (sub != null) {
            sub.request(n);
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        Subscription sub = s;
        if (sub != null) {
            sub.cancel();
        }
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    @Override
    public @Nullable Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return s;
        }
        if (key == Attr.ACTUAL) {
            return actual;
        }
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.TERMINATED) {
            return done;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.SYNC;
        }
        return null;
    }
}
