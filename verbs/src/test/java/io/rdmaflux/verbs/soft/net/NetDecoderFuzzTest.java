package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.TestFrames;
import io.rdmaflux.verbs.testing.fuzz.DecoderFuzzer;
import io.rdmaflux.verbs.testing.fuzz.WireMutator;
import io.rdmaflux.verbs.testing.fuzz.WireMutator.Seed;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes the decoders of the soft provider's IP fabric that take bytes from the network: the frame
 * header of a TCP stream ({@link InboundStream}'s parse loop, route release included), a UDP datagram (the UD receive path of
 * {@link NetAttachment}) and the connection manager's messages ({@link CmCodec}). A bounded, seeded run
 * (2,000 mutations per seed; {@code -Dfuzz.iterations=N -Dfuzz.seed=S} for a longer one) plus the stored
 * corpus under {@code src/test/resources/fuzz/}. See verbs/README.md, "Fuzzing the wire decoders".
 */
class NetDecoderFuzzTest {
    private static final int MAX_FRAME_BYTES = NetTransportConfig.DEFAULT_MAX_FRAME_BYTES;
    private static final int ITERATIONS = DecoderFuzzer.iterations(2_000);

    /** A malformed frame must only get a {@link NetFrameCodec.Verdict}: no decoder step may throw. */
    private static final class NeverThrown extends Exception {
        NeverThrown() {
            super("never thrown");
        }
    }

    // ---- the stream and datagram frame decoders ----

    /**
     * One direct buffer reused for every input, as {@link InboundStream} and the UD path reuse theirs (a direct
     * buffer per input would stall in {@code System.gc()} once the direct memory limit is reached).
     */
    private static ByteBuffer shared = NetFrameCodec.direct(64 << 10);

    /** {@code input} in a direct little-endian buffer whose limit and capacity end with it (reads past it throw). */
    private static ByteBuffer wire(byte[] input) {
        if (shared.capacity() < input.length) {
            shared = NetFrameCodec.direct(input.length);
        }
        shared.clear().limit(input.length);
        ByteBuffer b = shared.slice().order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, input);
        return b;
    }

    /** Frames handed over and frames refused by a verdict, so a run shows it reached both. */
    private static int framesDecoded;
    private static int framesRefused;
    private static int releasesHeard;

    /** Parses {@code input} as the bytes read from one RC stream, frame by frame, as {@link InboundStream#deliver} does. */
    private static void decodeStream(byte[] input) {
        ByteBuffer buf = wire(input);
        int readPos = 0;
        while (input.length - readPos >= NetFrameCodec.HEADER_BYTES) {
            if (NetFrameCodec.isRouteRelease(buf, readPos)) {
                if (NetFrameCodec.frameLength(buf, readPos) != NetFrameCodec.HEADER_BYTES || buf.getInt(readPos + NetFrameCodec.LENGTH_OFFSET) != 0) {
                    throw new AssertionError("a route release with a body was taken");
                }
                releasesHeard++;
                return; // the stream ends, without breaking its route
            }
            if (NetFrameCodec.validate(buf, readPos, MAX_FRAME_BYTES) != NetFrameCodec.Verdict.OK) {
                framesRefused++;
                return; // the stream is closed and the frame counted
            }
            int frameLength = NetFrameCodec.frameLength(buf, readPos);
            if (frameLength > MAX_FRAME_BYTES || frameLength < NetFrameCodec.HEADER_BYTES) {
                throw new AssertionError("validate accepted a frame length of " + frameLength);
            }
            if (input.length - readPos < frameLength) {
                return; // waits for the rest
            }
            handOver(buf, readPos, frameLength);
            framesDecoded++;
            readPos += frameLength;
        }
    }

    private static void handOver(ByteBuffer buf, int at, int frameLength) {
        SoftFrame f = TestFrames.newFrame();
        long delay = NetFrameCodec.decodeHeader(buf, at, f);
        if (delay < 0) {
            throw new AssertionError("negative delivery delay " + delay);
        }
        int payload = frameLength - NetFrameCodec.HEADER_BYTES;
        if (f.type != FrameType.RDMA_READ_REQUEST && f.length != payload) {
            throw new AssertionError(f.type + " frame of " + payload + " payload bytes says length " + f.length);
        }
        if (payload > 0) {
            f.addPayload(buf, at + NetFrameCodec.HEADER_BYTES, payload);
        }
        f.release();
    }

    /** Parses {@code input} as one UDP datagram, with the checks of the UD receive path. */
    private static void decodeDatagram(byte[] input) {
        ByteBuffer b = wire(input);
        int n = input.length;
        if (n < NetFrameCodec.HEADER_BYTES
            || NetFrameCodec.validate(b, 0, NetFrameCodec.HEADER_BYTES + SoftFrame.MAX_OWN_PAYLOAD) != NetFrameCodec.Verdict.OK
            || NetFrameCodec.frameLength(b, 0) != n
            || b.get(NetFrameCodec.TYPE_OFFSET) != FrameType.UD_SEND.ordinal()) {
            framesRefused++;
            return; // dropped and counted
        }
        SoftFrame f = TestFrames.newFrame();
        NetFrameCodec.decodeHeader(b, 0, f);
        int len = n - NetFrameCodec.HEADER_BYTES;
        if (len > 0) {
            ByteBuffer own = f.ownPayload(len);
            own.put(0, b, NetFrameCodec.HEADER_BYTES, len);
            f.addPayload(own, 0, len);
        }
        framesDecoded++;
        f.release();
    }

    private static byte[] encode(FrameType type, WcStatus status, int length, boolean immediate) {
        SoftFrame f = TestFrames.newFrame();
        f.type = type;
        f.status = status;
        f.length = length;
        f.hasImmediate = immediate;
        f.sourceQpn = 0x11;
        f.destinationQpn = 0x22;
        f.psn = 7;
        f.rkey = 0x1234;
        f.qkey = 0x11111111;
        f.remoteAddress = 0x7f0000001000L;
        f.sentAtNs = 1_000;
        f.deliverAtNs = 5_000;
        int payload = NetFrameCodec.payloadBytes(f);
        ByteBuffer b = ByteBuffer.allocate(NetFrameCodec.HEADER_BYTES + payload).order(ByteOrder.LITTLE_ENDIAN);
        NetFrameCodec.encodeHeader(f, b, 0);
        for (int i = 0; i < payload; i++) {
            b.put(NetFrameCodec.HEADER_BYTES + i, (byte) i);
        }
        f.release();
        return b.array();
    }

    private static final int[] NET_FIELDS = {4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60};

    /** Makes the frame length and payload length fields of the first frame agree with the input's size. */
    private static void reframe(byte[] b) {
        if (b.length >= NetFrameCodec.HEADER_BYTES) {
            WireMutator.writeInt(b, NetFrameCodec.FRAME_LENGTH_OFFSET, b.length, ByteOrder.LITTLE_ENDIAN);
            if (b[NetFrameCodec.TYPE_OFFSET] != FrameType.RDMA_READ_REQUEST.ordinal()) {
                WireMutator.writeInt(b, NetFrameCodec.LENGTH_OFFSET, b.length - NetFrameCodec.HEADER_BYTES, ByteOrder.LITTLE_ENDIAN);
            }
        }
    }

    private static List<Seed> frameSeeds() {
        List<Seed> seeds = new ArrayList<>();
        seeds.add(netSeed("send", encode(FrameType.SEND, WcStatus.SUCCESS, 16, true)));
        seeds.add(netSeed("write", encode(FrameType.RDMA_WRITE, WcStatus.SUCCESS, 100, false)));
        seeds.add(netSeed("read-request", encode(FrameType.RDMA_READ_REQUEST, WcStatus.SUCCESS, 4096, false)));
        seeds.add(netSeed("read-response", encode(FrameType.RDMA_READ_RESPONSE, WcStatus.SUCCESS, 40, false)));
        seeds.add(netSeed("ack", encode(FrameType.ACK, WcStatus.SUCCESS, 0, false)));
        seeds.add(netSeed("nak", encode(FrameType.NAK, WcStatus.REM_ACCESS_ERR, 0, false)));
        seeds.add(netSeed("ud", encode(FrameType.UD_SEND, WcStatus.SUCCESS, 32, true)));
        byte[] a = encode(FrameType.SEND, WcStatus.SUCCESS, 8, false);
        byte[] c = encode(FrameType.ACK, WcStatus.SUCCESS, 0, false);
        byte[] two = new byte[a.length + c.length];
        System.arraycopy(a, 0, two, 0, a.length);
        System.arraycopy(c, 0, two, a.length, c.length);
        int[] fields = IntStream.concat(IntStream.of(NET_FIELDS), IntStream.of(NET_FIELDS).map(o -> o + a.length)).toArray();
        seeds.add(new Seed("two-frames", two, fields, ByteOrder.LITTLE_ENDIAN, b -> { }));
        byte[] release = routeRelease();
        seeds.add(new Seed("route-release", release, NET_FIELDS, ByteOrder.LITTLE_ENDIAN, b -> { }));
        byte[] ackThenRelease = new byte[c.length + release.length];
        System.arraycopy(c, 0, ackThenRelease, 0, c.length);
        System.arraycopy(release, 0, ackThenRelease, c.length, release.length);
        int[] both = IntStream.concat(IntStream.of(NET_FIELDS), IntStream.of(NET_FIELDS).map(o -> o + c.length)).toArray();
        seeds.add(new Seed("ack-then-release", ackThenRelease, both, ByteOrder.LITTLE_ENDIAN, b -> { }));
        return seeds;
    }

    /** A route release as {@link RcStream} writes it last on a released stream. */
    private static byte[] routeRelease() {
        ByteBuffer b = ByteBuffer.allocate(NetFrameCodec.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        NetFrameCodec.encodeRouteRelease(b, 0, 0x11, 0x22);
        return b.array();
    }

    private static Seed netSeed(String name, byte[] bytes) {
        return new Seed(name, bytes, NET_FIELDS, ByteOrder.LITTLE_ENDIAN, NetDecoderFuzzTest::reframe);
    }

    @Test
    void streamFrameDecoderRefusesMalformedHeadersWithAVerdictOnly() {
        DecoderFuzzer fuzzer = new DecoderFuzzer("net-stream", NeverThrown.class, NetDecoderFuzzTest::decodeStream, 2, 8192);
        fuzzer.replay(DecoderFuzzer.corpus(getClass(), "fuzz/net-frame"));
        framesDecoded = 0;
        framesRefused = 0;
        releasesHeard = 0;
        DecoderFuzzer.Result r = fuzzer.fuzz(frameSeeds(), ITERATIONS, DecoderFuzzer.randomSeed());
        assertTrue(r.runs() >= 10 * ITERATIONS, "ran " + r.runs());
        assertTrue(framesDecoded > ITERATIONS && framesRefused > ITERATIONS && releasesHeard > 0,
            "the mutations reach every outcome: " + framesDecoded + " frames decoded, " + framesRefused + " refused, "
                + releasesHeard + " route releases heard");
    }

    @Test
    void aRouteReleaseIsHeardOnlyWellFormedAndOnlyOnAStream() {
        ByteBuffer b = wire(routeRelease());
        assertTrue(NetFrameCodec.isRouteRelease(b, 0));
        assertEquals(NetFrameCodec.Verdict.BAD_TYPE, NetFrameCodec.validate(b, 0, MAX_FRAME_BYTES),
            "validate refuses it, so the UDP path and the UCX provider drop it as malformed");
        framesRefused = 0;
        decodeDatagram(routeRelease());
        assertEquals(1, framesRefused, "a route release in a datagram is dropped");
        for (int[] lie : new int[][] {{NetFrameCodec.LENGTH_OFFSET, 4}, {NetFrameCodec.FRAME_LENGTH_OFFSET, 68},
            {NetFrameCodec.MAGIC_OFFSET, 0x12345678}}) {
            byte[] m = routeRelease();
            WireMutator.writeInt(m, lie[0], lie[1], ByteOrder.LITTLE_ENDIAN);
            ByteBuffer w = wire(m);
            assertTrue(!NetFrameCodec.isRouteRelease(w, 0) && NetFrameCodec.validate(w, 0, MAX_FRAME_BYTES) != NetFrameCodec.Verdict.OK,
                "field at " + lie[0] + " = " + lie[1] + " is neither a release nor a frame");
        }
        byte[] badStatus = routeRelease();
        badStatus[NetFrameCodec.STATUS_OFFSET] = 1;
        ByteBuffer w = wire(badStatus);
        assertTrue(!NetFrameCodec.isRouteRelease(w, 0) && NetFrameCodec.validate(w, 0, MAX_FRAME_BYTES) == NetFrameCodec.Verdict.BAD_TYPE);
    }

    @Test
    void udDatagramDecoderRefusesMalformedDatagramsWithAVerdictOnly() {
        DecoderFuzzer fuzzer = new DecoderFuzzer("net-datagram", NeverThrown.class, NetDecoderFuzzTest::decodeDatagram, 2, 8192);
        fuzzer.replay(DecoderFuzzer.corpus(getClass(), "fuzz/net-frame"));
        framesDecoded = 0;
        framesRefused = 0;
        fuzzer.fuzz(frameSeeds(), ITERATIONS, DecoderFuzzer.randomSeed() + 1);
        assertTrue(framesDecoded > 0 && framesRefused > ITERATIONS,
            "the mutations reach both outcomes: " + framesDecoded + " datagrams decoded, " + framesRefused + " refused");
    }

    @Test
    void aFrameLengthAboveTheLimitIsRefusedBeforeAnyBufferIsSizedByIt() {
        byte[] b = encode(FrameType.SEND, WcStatus.SUCCESS, 16, false);
        WireMutator.writeInt(b, NetFrameCodec.FRAME_LENGTH_OFFSET, Integer.MAX_VALUE, ByteOrder.LITTLE_ENDIAN);
        WireMutator.writeInt(b, NetFrameCodec.LENGTH_OFFSET, Integer.MAX_VALUE - NetFrameCodec.HEADER_BYTES, ByteOrder.LITTLE_ENDIAN);
        ByteBuffer buf = NetFrameCodec.direct(b.length);
        buf.put(0, b);
        assertEquals(NetFrameCodec.Verdict.BAD_LENGTH, NetFrameCodec.validate(buf, 0, MAX_FRAME_BYTES));
    }

    // ---- the connection manager ----

    /** Parses {@code input} as one connection manager message (header, then body), as {@link NetConnectionManager} does. */
    private static void decodeCm(byte[] input) {
        if (input.length < CmCodec.HEADER_BYTES) {
            return; // the manager waits for the rest of the header
        }
        ByteBuffer header = ByteBuffer.wrap(input, 0, CmCodec.HEADER_BYTES).slice();
        int len = CmCodec.bodyLength(header);
        if (input.length - CmCodec.HEADER_BYTES < len) {
            return; // waits for the rest of the body
        }
        ByteBuffer body = ByteBuffer.wrap(input, CmCodec.HEADER_BYTES, len).slice();
        if (CmCodec.type(header) == CmCodec.REJECT) {
            CmCodec.decodeReject(body);
        } else {
            CmParams p = CmCodec.decodeParams(body);
            if (p.endpoints().isEmpty()) {
                throw new AssertionError("decoded parameters without endpoints");
            }
        }
    }

    private static Seed cmSeed(String name, ByteBuffer message) {
        byte[] b = new byte[message.remaining()];
        message.get(b);
        int[] fields = IntStream.concat(IntStream.of(0, 4, 8), IntStream.iterate(12, o -> o + 4 <= b.length, o -> o + 2)).toArray();
        return new Seed(name, b, fields, ByteOrder.BIG_ENDIAN,
            m -> {
                if (m.length >= CmCodec.HEADER_BYTES) {
                    WireMutator.writeInt(m, 8, m.length - CmCodec.HEADER_BYTES, ByteOrder.BIG_ENDIAN);
                }
            });
    }

    private static List<Seed> cmSeeds() {
        QpEndpoint a = new QpEndpoint(new PortAddress("net", "127.0.0.1", 18515), 0x101, 7, 4096);
        QpEndpoint c = new QpEndpoint(new PortAddress("net", "10.0.0.2", 18516), 0x102, 9, 1024);
        return List.of(
            cmSeed("request", CmCodec.encodeParams(CmCodec.REQUEST, new CmParams(List.of(a), new byte[]{1, 2, 3, 4}))),
            cmSeed("accept-two-rails", CmCodec.encodeParams(CmCodec.ACCEPT, new CmParams(List.of(a, c), new byte[28]))),
            cmSeed("reject", CmCodec.encodeReject("no listener on port 18515")));
    }

    @Test
    void connectionManagerDecoderRefusesMalformedMessagesNamingTheField() {
        DecoderFuzzer fuzzer = new DecoderFuzzer("net-cm", IllegalArgumentException.class, NetDecoderFuzzTest::decodeCm, 4, 16384);
        fuzzer.replay(DecoderFuzzer.corpus(getClass(), "fuzz/net-cm"));
        DecoderFuzzer.Result r = fuzzer.fuzz(cmSeeds(), ITERATIONS, DecoderFuzzer.randomSeed());
        assertTrue(r.accepted() > 0 && r.refused() > 0, "the mutations reach both outcomes: " + r);
    }

    @Test
    void aCmStringLengthBeyondTheBodyIsRefusedBeforeAllocating() {
        // REQUEST body: 1 endpoint, then a fabric name that says 65535 bytes but 2 follow
        byte[] body = new byte[24];
        body[1] = 1;
        body[2] = (byte) 0xFF;
        body[3] = (byte) 0xFF;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CmCodec.decodeParams(ByteBuffer.wrap(body)));
        assertTrue(e.getMessage().contains("65535"), e.getMessage());
        DecoderFuzzer fuzzer = new DecoderFuzzer("net-cm-string", IllegalArgumentException.class,
            in -> CmCodec.decodeParams(ByteBuffer.wrap(in)), 4, 16384);
        fuzzer.check(body, "a 65535-byte fabric name in a 24-byte body");
    }

    @Test
    void aCmEndpointCountBeyondTheBodyIsRefusedBeforeAllocating() {
        byte[] body = {(byte) 0xFF, (byte) 0xFF, 0, 0};
        DecoderFuzzer fuzzer = new DecoderFuzzer("net-cm-count", IllegalArgumentException.class,
            in -> CmCodec.decodeParams(ByteBuffer.wrap(in)), 4, 16384);
        fuzzer.check(body, "65535 endpoints in a 4-byte body");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CmCodec.decodeParams(ByteBuffer.wrap(body)));
        assertTrue(e.getMessage().contains("65535"), e.getMessage());
    }
}
