package io.rdmaflux.core.frame;

import io.rdmaflux.verbs.testing.fuzz.DecoderFuzzer;
import io.rdmaflux.verbs.testing.fuzz.WireMutator;
import io.rdmaflux.verbs.testing.fuzz.WireMutator.Seed;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes the decoders of the rdmaflux frames and of the connection handshake: every input either decodes
 * or is refused with a {@link FrameFormatException} that has a message; no other exception, no read
 * outside the frame (Agrona's bounds checks are on in tests), no allocation sized by a length field
 * (at most 2 bytes per input byte + 16 KiB), no input that takes more than a second (a hang). The decode step is the one the
 * receive path takes ({@code RcFrameDispatch.onFrame}): validate the header,
 * then the type's own checks and accessors. A bounded, seeded run (2,000 mutations per seed;
 * {@code -Dfuzz.iterations=N -Dfuzz.seed=S} for a longer one) plus the stored corpus under
 * {@code src/test/resources/fuzz/}. See reactive-core/README.md, "Fuzzing the wire decoders".
 */
class FrameDecoderFuzzTest {
    private static final int ITERATIONS = DecoderFuzzer.iterations(2_000);
    /** Where the frame starts in its receive buffer: not at 0, so offset arithmetic is exercised. */
    private static final int AT = 8;

    private int decoded;

    /** Decodes {@code input} as a frame of {@code input.length} bytes received into a buffer that ends with it. */
    private void decodeFrame(byte[] input) {
        byte[] memory = new byte[AT + input.length];
        System.arraycopy(input, 0, memory, AT, input.length);
        UnsafeBuffer b = new UnsafeBuffer(memory);
        FrameType type = FrameHeader.validate(b, AT, input.length);
        int bufferCredits = FrameHeader.bufferCredits(b, AT);
        int messageCredits = FrameHeader.messageCredits(b, AT);
        check(bufferCredits >= 0 && bufferCredits <= FrameHeader.MAX_BUFFER_CREDITS_PER_FRAME
            && messageCredits >= 0 && messageCredits <= FrameHeader.MAX_MESSAGE_CREDITS_PER_FRAME, "credit halves out of range");
        int payload = FrameHeader.payloadLength(b, AT);
        check(payload == input.length - FrameHeader.LENGTH, "validate accepted payload length " + payload);
        switch (type) {
            case DATA -> {
                if (DataFrameCodec.isPacked(b, AT)) {
                    DataFrameCodec.validatePacked(b, AT);
                    walkPacked(b);
                } else {
                    DataFrameCodec.isFirst(b, AT);
                    DataFrameCodec.isLast(b, AT);
                    FrameHeader.messageLength(b, AT);
                }
            }
            case RTS -> {
                RtsFrameCodec.validatePayload(b, AT);
                RtsFrameCodec.messageLength(b, AT);
            }
            case CTS -> {
                CtsFrameCodec.validatePayload(b, AT);
                CtsFrameCodec.remoteAddress(b, AT);
                CtsFrameCodec.rkey(b, AT);
                CtsFrameCodec.flags(b, AT);
            }
            case FIN -> {
                FinFrameCodec.validatePayload(b, AT);
                int index = FinFrameCodec.stripeIndex(b, AT);
                int stripes = FinFrameCodec.stripes(b, AT);
                check(index >= 0 && index < FinFrameCodec.MAX_STRIPES && stripes >= 1 && stripes <= FinFrameCodec.MAX_STRIPES,
                    "a FIN the receiver's 64-bit stripe mask cannot track passed validation: index " + index + " of " + stripes);
                long end = (long) FinFrameCodec.stripeOffset(b, AT) + FinFrameCodec.stripeLength(b, AT);
                check(FinFrameCodec.stripeOffset(b, AT) >= 0 && FinFrameCodec.stripeLength(b, AT) >= 0
                    && end <= FrameHeader.messageLength(b, AT), "a FIN stripe outside its message passed validation");
            }
            case RAIL_DOWN -> RailDownFrameCodec.rail(b, AT);
            case CREDIT -> {
                CreditFrameCodec.isInboundClosed(b, AT);
                FrameHeader.psn(b, AT);
            }
            case CLOSE -> {
                CloseFrameCodec.isAbort(b, AT);
                CloseFrameCodec.isFinal(b, AT);
                CloseFrameCodec.railMask(b, AT);
                String reason = CloseFrameCodec.reason(b, AT);
                check(reason.length() <= CloseFrameCodec.MAX_REASON_BYTES, "a reason of " + reason.length() + " chars");
            }
        }
        decoded++;
    }

    /** Splits an accepted packed payload as the receiver does, with bounds-checked reads. */
    private static void walkPacked(UnsafeBuffer b) {
        int count = FrameHeader.messageLength(b, AT);
        int pos = DataFrameCodec.payloadOffset(AT);
        int end = pos + FrameHeader.payloadLength(b, AT);
        for (int i = 0; i < count; i++) {
            int len = DataFrameCodec.packedLength(b, pos);
            check(len >= 0 && pos + DataFrameCodec.PACKED_PREFIX_BYTES + len <= end, "packed message " + i + " outside the payload");
            pos += DataFrameCodec.PACKED_PREFIX_BYTES + len;
        }
        check(pos == end, "packed messages end before the payload");
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    // ---- seeds: one valid encoding of every frame shape ----

    private static final int[] HEADER_FIELDS = {0, 4, 8, 12, 16, 20};

    private static Seed frameSeed(String name, UnsafeBuffer b, int length, int... extraFields) {
        int[] fields = IntStream.concat(IntStream.of(HEADER_FIELDS), IntStream.of(extraFields)).toArray();
        return new Seed(name, Arrays.copyOf(b.byteArray(), length), fields, ByteOrder.LITTLE_ENDIAN, FrameDecoderFuzzTest::reframe);
    }

    /** Makes the payload length field agree with the input's size, so the fuzzer reaches the type's own checks. */
    private static void reframe(byte[] b) {
        if (b.length >= FrameHeader.LENGTH) {
            WireMutator.writeInt(b, FrameHeader.PAYLOAD_LENGTH_OFFSET, b.length - FrameHeader.LENGTH, ByteOrder.LITTLE_ENDIAN);
        }
    }

    static List<Seed> frameSeeds() {
        List<Seed> seeds = new ArrayList<>();
        int credits = FrameHeader.packCredits(3, 9);
        UnsafeBuffer b = new UnsafeBuffer(new byte[1024]);
        seeds.add(frameSeed("data-whole", b, DataFrameCodec.encodeHeader(b, 0, true, true, 0, 5, credits, 40, 40)));
        b = new UnsafeBuffer(new byte[1024]);
        seeds.add(frameSeed("data-fragment", b, DataFrameCodec.encodeHeader(b, 0, false, false, 2, 6, credits, 32, 1000)));
        seeds.add(packedSeed("data-packed-3", new int[]{5, 0, 17}));
        int[] ones = new int[DataFrameCodec.MAX_PACKED_MESSAGES];
        Arrays.fill(ones, 1);
        seeds.add(packedSeed("data-packed-64", ones));
        b = new UnsafeBuffer(new byte[64]);
        seeds.add(frameSeed("credit", b, CreditFrameCodec.encode(b, 0, 0, credits)));
        b = new UnsafeBuffer(new byte[64]);
        seeds.add(frameSeed("credit-inbound-closed", b, CreditFrameCodec.encodeInboundClosed(b, 0, credits, 77)));
        b = new UnsafeBuffer(new byte[512]);
        seeds.add(frameSeed("close", b, CloseFrameCodec.encode(b, 0, 0, 12, credits, false, "bye")));
        b = new UnsafeBuffer(new byte[512]);
        seeds.add(frameSeed("close-abort-long-reason", b, CloseFrameCodec.encode(b, 0, 0, 12, credits, true, "x".repeat(300))));
        b = new UnsafeBuffer(new byte[512]);
        seeds.add(frameSeed("close-final-mask", b, CloseFrameCodec.encode(b, 0, 0, 12, credits, false, true, "", 0b101)));
        b = new UnsafeBuffer(new byte[64]);
        seeds.add(frameSeed("rts", b, RtsFrameCodec.encode(b, 0, 9, credits, 1 << 20)));
        b = new UnsafeBuffer(new byte[64]);
        seeds.add(frameSeed("cts", b, CtsFrameCodec.encode(b, 0, 9, credits, 1 << 20, 0x7f0000001000L, 0x55, 0), 24, 28, 32, 36));
        b = new UnsafeBuffer(new byte[64]);
        seeds.add(frameSeed("fin", b, FinFrameCodec.encode(b, 0, 9, credits, 1 << 20, 1 << 19, 1 << 19, 2, 1), 24, 28, 32, 36));
        b = new UnsafeBuffer(new byte[64]);
        seeds.add(frameSeed("rail-down", b, RailDownFrameCodec.encode(b, 0, credits, 1)));
        return seeds;
    }

    private static Seed packedSeed(String name, int[] lengths) {
        UnsafeBuffer b = new UnsafeBuffer(new byte[1024]);
        int pos = DataFrameCodec.payloadOffset(0);
        int[] prefixes = new int[lengths.length];
        for (int i = 0; i < lengths.length; i++) {
            prefixes[i] = pos;
            pos = DataFrameCodec.putPackedLength(b, pos, lengths[i]) + lengths[i];
        }
        int len = DataFrameCodec.encodePackedHeader(b, 0, 0, 100, FrameHeader.packCredits(1, 2), pos - FrameHeader.LENGTH, lengths.length);
        return frameSeed(name, b, len, prefixes);
    }

    @Test
    void everyFrameDecoderRefusesMalformedFramesWithAFrameFormatExceptionOnly() {
        DecoderFuzzer fuzzer = new DecoderFuzzer("frame", FrameFormatException.class, this::decodeFrame, 2, 16384);
        int stored = fuzzer.replay(DecoderFuzzer.corpus(getClass(), "fuzz/frame"));
        decoded = 0;
        DecoderFuzzer.Result r = fuzzer.fuzz(frameSeeds(), ITERATIONS, DecoderFuzzer.randomSeed());
        assertTrue(stored >= 10, "corpus of " + stored);
        assertTrue(r.runs() >= 13 * ITERATIONS, "ran " + r.runs());
        assertTrue(decoded > ITERATIONS && r.refused() > ITERATIONS,
            "the mutations reach both outcomes: " + decoded + " decoded, " + r.refused() + " refused");
    }

    // ---- the handshake ----

    private static Seed handshakeSeed(String name, byte[] bytes) {
        return new Seed(name, bytes, new int[]{0, 4, 8, 12, 16, 20, 24}, ByteOrder.LITTLE_ENDIAN, b -> {
            // name as many rails as kind bytes follow, so the kinds are parsed rather than the length refused
            if (b.length > HandshakeCodec.LENGTH && b.length - HandshakeCodec.LENGTH <= 255) {
                b[5] = (byte) (b.length - HandshakeCodec.LENGTH);
            }
        });
    }

    @Test
    void handshakeDecoderRefusesMalformedPrivateDataWithAFrameFormatExceptionOnly() {
        DecoderFuzzer fuzzer = new DecoderFuzzer("handshake", FrameFormatException.class, HandshakeCodec::decode, 4, 16384);
        fuzzer.replay(DecoderFuzzer.corpus(getClass(), "fuzz/handshake"));
        byte[] two = new HandshakeCodec(2, 8192, 64, 32, 1 << 20, 16, List.of(1, 2)).encode();
        byte[] padded = Arrays.copyOf(new HandshakeCodec(1, 4096, 16, 16, 65536).encode(), 56);
        byte[] old = Arrays.copyOf(two, HandshakeCodec.LENGTH);
        DecoderFuzzer.Result r = fuzzer.fuzz(List.of(handshakeSeed("two-rails", two), handshakeSeed("rdma-cm-padded", padded),
            handshakeSeed("before-kinds", old)), ITERATIONS, DecoderFuzzer.randomSeed());
        assertTrue(r.accepted() > 0 && r.refused() > 0, "the mutations reach both outcomes: " + r);
    }

    // ---- allocation: a length field cannot size an allocation ----

    @Test
    void aCloseReasonLengthOf2GiBIsRefusedBeforeAnythingIsAllocatedForIt() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = CloseFrameCodec.encode(b, 0, 0, 1, 0, false, "bye");
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, Integer.MAX_VALUE, ByteOrder.LITTLE_ENDIAN);
        FrameFormatException e = assertThrows(FrameFormatException.class, () -> FrameHeader.validate(b, 0, len));
        assertTrue(e.getMessage().contains("payload length " + Integer.MAX_VALUE), e.getMessage());
        // and the reason decoder on its own, for a caller that skipped validate
        FrameFormatException r = assertThrows(FrameFormatException.class, () -> CloseFrameCodec.reason(b, 0));
        assertTrue(r.getMessage().contains("payload length " + Integer.MAX_VALUE), r.getMessage());
        new DecoderFuzzer("close-reason", FrameFormatException.class, in -> CloseFrameCodec.reason(new UnsafeBuffer(in), 0), 2, 16384)
            .check(Arrays.copyOf(b.byteArray(), len), "CLOSE reason length 2^31-1");
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, -1, ByteOrder.LITTLE_ENDIAN);
        assertThrows(FrameFormatException.class, () -> CloseFrameCodec.reason(b, 0));
    }

    @Test
    void aPackedMessageLengthOf2GiBIsRefusedNamingTheMessage() {
        Seed s = packedSeed("p", new int[]{5, 0, 17});
        byte[] in = s.bytes().clone();
        WireMutator.writeInt(in, s.fieldOffsets()[HEADER_FIELDS.length + 1], Integer.MAX_VALUE, ByteOrder.LITTLE_ENDIAN);
        UnsafeBuffer b = new UnsafeBuffer(in);
        FrameFormatException e = assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        assertTrue(e.getMessage().contains("message 1 of 3 says " + Integer.MAX_VALUE + " bytes"), e.getMessage());
    }

    @Test
    void aFinStripeIndexTheStripeMaskCannotHoldIsRefusedNamingIt() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        FinFrameCodec.encode(b, 0, 9, 0, 100, 0, 50, 2, 1);
        FinFrameCodec.validatePayload(b, 0);
        b.putInt(FinFrameCodec.STRIPE_INDEX_OFFSET, 64, ByteOrder.LITTLE_ENDIAN);
        FrameFormatException e = assertThrows(FrameFormatException.class, () -> FinFrameCodec.validatePayload(b, 0));
        assertTrue(e.getMessage().contains("stripe index 64 of 2 stripes"), e.getMessage());
        b.putInt(FinFrameCodec.STRIPE_INDEX_OFFSET, 1, ByteOrder.LITTLE_ENDIAN);
        b.putInt(FinFrameCodec.STRIPE_LENGTH_OFFSET, 101, ByteOrder.LITTLE_ENDIAN);
        e = assertThrows(FrameFormatException.class, () -> FinFrameCodec.validatePayload(b, 0));
        assertTrue(e.getMessage().contains("stripe length 101"), e.getMessage());
        // a stripe planned on rail 3 of a message split over 2 live rails is legal
        b.putInt(FinFrameCodec.STRIPE_LENGTH_OFFSET, 50, ByteOrder.LITTLE_ENDIAN);
        b.putInt(FinFrameCodec.STRIPE_INDEX_OFFSET, 3, ByteOrder.LITTLE_ENDIAN);
        FinFrameCodec.validatePayload(b, 0);
        assertEquals(3, FinFrameCodec.stripeIndex(b, 0));
    }
}
