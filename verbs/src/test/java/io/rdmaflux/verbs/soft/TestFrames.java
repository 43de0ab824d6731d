package io.rdmaflux.verbs.soft;

/** Test access to {@link SoftFrame}s without a {@link SoftDevice} (for codec tests of the wire transports). */
public final class TestFrames {
    private TestFrames() {
    }

    /** A new frame from a pool of its own; {@link SoftFrame#release()} returns it there. */
    public static SoftFrame newFrame() {
        return new SoftFrame(new FramePool());
    }
}
