package io.rdmaflux.core.frame;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameCodecTest {
    private static final HexFormat HEX = HexFormat.of();

    private static String hex(UnsafeBuffer b, int length) {
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return HEX.formatHex(out);
    }

    @Test
    void dataFrameHeaderMatchesTheDocumentedLayout() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = DataFrameCodec.encodeHeader(b, 0, true, true, 7, 0x01020304, 5, 3, 3);
        b.putBytes(DataFrameCodec.payloadOffset(0), new byte[]{'a', 'b', 'c'});
        assertEquals(27, len);
        assertEquals(
            "03" + "01" + "0300"      // version 3, DATA, flags FIRST|LAST
                + "07000000"          // stream id 7
                + "04030201"          // PSN 0x01020304, little-endian
                + "05000000"          // credits 5
                + "03000000"          // payload length 3
                + "03000000"          // message length 3
                + "616263",
            hex(b, len));
        assertEquals(FrameType.DATA, FrameHeader.validate(b, 0, len));
        assertEquals(0x01020304, FrameHeader.psn(b, 0));
        assertEquals(5, FrameHeader.credits(b, 0));
        assertTrue(DataFrameCodec.isFirst(b, 0));
        assertTrue(DataFrameCodec.isLast(b, 0));
    }

    @Test
    void packedDataFrameMatchesTheDocumentedLayout() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int pos = DataFrameCodec.payloadOffset(0);
        pos = DataFrameCodec.putPackedLength(b, pos, 2);
        b.putBytes(pos, new byte[]{'h', 'i'});
        pos = DataFrameCodec.putPackedLength(b, pos + 2, 0);
        pos = DataFrameCodec.putPackedLength(b, pos, 1);
        b.putByte(pos, (byte) 'x');
        int len = DataFrameCodec.encodePackedHeader(b, 0, 0, 9, 5, pos + 1 - DataFrameCodec.payloadOffset(0), 3);
        assertEquals(24 + 4 + 2 + 4 + 4 + 1, len);
        assertEquals(
            "03" + "01" + "0b00"      // version 3, DATA, flags FIRST|LAST|PACKED
                + "00000000"          // stream id 0
                + "09000000"          // first PSN 9
                + "05000000"          // credits 5
                + "0f000000"          // payload length 15
                + "03000000"          // 3 messages
                + "02000000" + "6869" // PSN 9: "hi"
                + "00000000"          // PSN 10: empty
                + "01000000" + "78",  // PSN 11: "x"
            hex(b, len));
        assertEquals(FrameType.DATA, FrameHeader.validate(b, 0, len));
        assertTrue(DataFrameCodec.isPacked(b, 0));
        DataFrameCodec.validatePacked(b, 0);
    }

    @Test
    void aPackedFrameWhosePayloadRunsPastItsBufferIsRejectedBeforeAnyPrefixIsRead() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int p0 = DataFrameCodec.payloadOffset(0);
        DataFrameCodec.putPackedLength(b, p0, 3);
        DataFrameCodec.encodePackedHeader(b, 0, 0, 1, 0, 4 + 3, 1);
        // a payload length beyond the buffer, and a negative one, written raw as a peer could
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, 64, java.nio.ByteOrder.LITTLE_ENDIAN);
        FrameFormatException past = assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        assertTrue(past.getMessage().contains("64-byte payload") && past.getMessage().contains((64 - p0) + " bytes after the header"),
            past.getMessage());
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, -8, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
    }

    @Test
    void packedFramesWhoseMessagesDoNotFillThePayloadExactlyAreRejected() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int p0 = DataFrameCodec.payloadOffset(0);
        DataFrameCodec.putPackedLength(b, p0, 3);
        DataFrameCodec.encodePackedHeader(b, 0, 0, 1, 0, 4 + 3, 1);
        DataFrameCodec.validatePacked(b, 0);
        // a prefix past the payload's end
        DataFrameCodec.putPackedLength(b, p0, 4);
        FrameFormatException over = assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        assertTrue(over.getMessage().contains("message 0 of 1 says 4 bytes but 3 bytes"), over.getMessage());
        // a negative prefix
        DataFrameCodec.putPackedLength(b, p0, -1);
        assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        // bytes left over after the announced count
        DataFrameCodec.putPackedLength(b, p0, 1);
        FrameFormatException under = assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        assertTrue(under.getMessage().contains("end 2 bytes before"), under.getMessage());
        // a count out of range, written raw as a peer could
        DataFrameCodec.putPackedLength(b, p0, 3);
        b.putInt(FrameHeader.MESSAGE_LENGTH_OFFSET, 0, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        b.putInt(FrameHeader.MESSAGE_LENGTH_OFFSET, DataFrameCodec.MAX_PACKED_MESSAGES + 1, java.nio.ByteOrder.LITTLE_ENDIAN);
        FrameFormatException many = assertThrows(FrameFormatException.class, () -> DataFrameCodec.validatePacked(b, 0));
        assertTrue(many.getMessage().contains((DataFrameCodec.MAX_PACKED_MESSAGES + 1) + " messages"), many.getMessage());
        IllegalArgumentException encode = assertThrows(IllegalArgumentException.class,
            () -> DataFrameCodec.encodePackedHeader(b, 0, 0, 1, 0, 4, 2));
        assertTrue(encode.getMessage().contains("2 and 4"), encode.getMessage());
    }

    @Test
    void middleFragmentHasNeitherFirstNorLastFlag() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        DataFrameCodec.encodeHeader(b, 0, false, false, 0, 9, 0, 8, 100);
        assertEquals("0301000000000000090000000000000008000000" + "64000000", hex(b, 24));
        assertFalse(DataFrameCodec.isFirst(b, 0));
        assertFalse(DataFrameCodec.isLast(b, 0));
        assertEquals(100, FrameHeader.messageLength(b, 0));
    }

    @Test
    void creditFrameIsAHeaderCarryingTheCredits() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[32]);
        int len = CreditFrameCodec.encode(b, 0, 0, 300);
        assertEquals(24, len);
        assertEquals("030200000000000000000000" + "2c010000" + "0000000000000000", hex(b, len));
        assertEquals(FrameType.CREDIT, FrameHeader.validate(b, 0, len));
    }

    @Test
    void inboundClosedCreditFrameCarriesFlag0x10AndTheFirstPsnNotDelivered() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[32]);
        int len = CreditFrameCodec.encodeInboundClosed(b, 0, FrameHeader.packCredits(2, 7), 0x105);
        assertEquals(24, len);
        assertEquals("03" + "02" + "1000"          // version 3, CREDIT, flags INBOUND_CLOSED
                + "00000000"                   // stream id 0
                + "05010000"                   // the subscriber got PSNs 0 .. 0x104, not 0x105 on
                + "02000700"                   // 2 buffer credits, message-credit total 7
                + "00000000" + "00000000",     // no payload, message length 0
            hex(b, len));
        assertEquals(FrameType.CREDIT, FrameHeader.validate(b, 0, len));
        assertTrue(CreditFrameCodec.isInboundClosed(b, 0));
        assertEquals(0x105, FrameHeader.psn(b, 0));
        assertThrows(IllegalArgumentException.class, () -> CreditFrameCodec.encodeInboundClosed(b, 0, -1, 0));
        CreditFrameCodec.encode(b, 0, 0, 1);
        assertFalse(CreditFrameCodec.isInboundClosed(b, 0), "a plain CREDIT frame does not close anything");
    }

    @Test
    void gracefulCloseFramesCarryFinalOnlyOnTheLastOneAndTheRailMask() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = CloseFrameCodec.encode(b, 0, 0, 9, 0, false, false, "", 0b11);
        assertEquals("03" + "03" + "0000"          // version 3, CLOSE, no flags: no more messages
                + "00000000" + "09000000"      // stream id 0, next PSN 9
                + "00000000" + "00000000"      // credits 0, no reason
                + "03000000",                  // sent on rails 0 and 1
            hex(b, len));
        assertFalse(CloseFrameCodec.isFinal(b, 0));
        assertFalse(CloseFrameCodec.isAbort(b, 0));
        len = CloseFrameCodec.encode(b, 0, 0, 9, 0, false, true, "", 0b11);
        assertEquals("03" + "03" + "2000" + "00000000" + "09000000" + "00000000" + "00000000" + "03000000", hex(b, len));
        assertTrue(CloseFrameCodec.isFinal(b, 0), "FINAL (0x20): the sender's last frame on this rail");
        assertEquals(0b11, CloseFrameCodec.railMask(b, 0));
        CloseFrameCodec.encode(b, 0, 0, 9, 0, true, false, "x", 0);
        assertTrue(CloseFrameCodec.isFinal(b, 0), "an abort is always the last frame, without the FINAL bit");
        assertEquals(FrameHeader.FLAG_ABORT, FrameHeader.flags(b, 0));
    }

    @Test
    void creditFrameRejectsNegativeCredits() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[32]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CreditFrameCodec.encode(b, 0, 0, -1));
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
    }

    @Test
    void abortCloseFrameCarriesFlagNextPsnAndReason() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = CloseFrameCodec.encode(b, 0, 0, 42, 1, true, "bye");
        assertEquals("03030400000000002a000000010000000300000000000000627965", hex(b, len));
        assertEquals(FrameType.CLOSE, FrameHeader.validate(b, 0, len));
        assertTrue(CloseFrameCodec.isAbort(b, 0));
        assertEquals("bye", CloseFrameCodec.reason(b, 0));
    }

    @Test
    void codecWritesAtAnOffset() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        CreditFrameCodec.encode(b, 16, 3, 1);
        assertEquals(FrameType.CREDIT, FrameHeader.validate(b, 16, 24));
        assertEquals(3, FrameHeader.streamId(b, 16));
        assertEquals(0, b.getByte(15));
    }

    @Test
    void validateRejectsShortFramesUnknownTypesWrongVersionsAndLengthMismatch() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        assertThrows(FrameFormatException.class, () -> FrameHeader.validate(b, 0, 10));
        DataFrameCodec.encodeHeader(b, 0, true, true, 0, 0, 0, 4, 4);
        FrameFormatException mismatch = assertThrows(FrameFormatException.class, () -> FrameHeader.validate(b, 0, 30));
        assertTrue(mismatch.getMessage().contains("payload length 4"), mismatch.getMessage());
        b.putByte(FrameHeader.TYPE_OFFSET, (byte) 11);
        FrameFormatException unknown = assertThrows(FrameFormatException.class, () -> FrameHeader.validate(b, 0, 28));
        assertTrue(unknown.getMessage().contains("11"), unknown.getMessage());
        b.putByte(FrameHeader.TYPE_OFFSET, (byte) 1);
        // a version 2 peer (before the inbound-closed notice and the FINAL CLOSE)
        b.putByte(FrameHeader.VERSION_OFFSET, (byte) 2);
        FrameFormatException version = assertThrows(FrameFormatException.class, () -> FrameHeader.validate(b, 0, 28));
        assertTrue(version.getMessage().contains("frame version 2 is not the supported version 3"), version.getMessage());
    }

    @Test
    void dataHeaderRejectsPayloadLargerThanMessage() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        assertThrows(IllegalArgumentException.class, () -> DataFrameCodec.encodeHeader(b, 0, true, true, 0, 0, 0, 5, 4));
    }

    @Test
    void handshakeRoundTripsThroughItsHexDump() {
        HandshakeCodec h = new HandshakeCodec(2, 4096, 64, 0, 1 << 20);
        byte[] bytes = h.encode();
        assertEquals("52444658" + "0302" + "0000" + "00100000" + "40000000" + "00000000" + "00001000" + "0101" + "00", HEX.formatHex(bytes));
        assertEquals(h, HandshakeCodec.decode(bytes));
    }

    @Test
    void handshakeFromAnOlderPeerIsRefusedNamingBothVersions() {
        byte[] bytes = new HandshakeCodec(1, 4096, 64, 0, 1 << 20).encode();
        // version 2 closes without a FINAL: a close with it would never end here
        bytes[4] = 2;
        FrameFormatException e = assertThrows(FrameFormatException.class, () -> HandshakeCodec.decode(bytes));
        assertTrue(e.getMessage().contains("version 2, this node 3"), e.getMessage());
        bytes[4] = 1;
        FrameFormatException v1 = assertThrows(FrameFormatException.class, () -> HandshakeCodec.decode(bytes));
        assertTrue(v1.getMessage().contains("version 1, this node 3"), v1.getMessage());
    }

    @Test
    void handshakeFromANonRdmafluxPeerIsRejectedWithAClearMessage() {
        FrameFormatException e = assertThrows(FrameFormatException.class, () -> HandshakeCodec.decode(new byte[24]));
        assertTrue(e.getMessage().contains("magic"), e.getMessage());
        assertThrows(FrameFormatException.class, () -> HandshakeCodec.decode(new byte[3]));
        assertThrows(IllegalArgumentException.class, () -> new HandshakeCodec(0, 4096, 1, 0, 0));
    }

    @Test
    void rtsFrameIsAHeaderWithPsnAndMessageLength() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = RtsFrameCodec.encode(b, 0, 5, FrameHeader.packCredits(2, 1), 0x100000);
        assertEquals(24, len);
        assertEquals("03040000" + "00000000" + "05000000" + "02000100" + "00000000" + "00001000", hex(b, len));
        assertEquals(FrameType.RTS, FrameHeader.validate(b, 0, len));
        assertTrue(FrameType.RTS.consumesCredit());
    }

    @Test
    void ctsFrameCarriesAddressRkeyAndFlags() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = CtsFrameCodec.encode(b, 0, 7, 0, 4096, 0x1122334455667788L, 0xCAFE, CtsFrameCodec.DISCARD);
        assertEquals(40, len);
        assertEquals("03050000" + "00000000" + "07000000" + "00000000" + "10000000" + "00100000"
            + "8877665544332211" + "feca0000" + "01000000", hex(b, len));
        assertEquals(FrameType.CTS, FrameHeader.validate(b, 0, len));
        CtsFrameCodec.validatePayload(b, 0);
        assertEquals(0x1122334455667788L, CtsFrameCodec.remoteAddress(b, 0));
        assertEquals(0xCAFE, CtsFrameCodec.rkey(b, 0));
        assertEquals(CtsFrameCodec.DISCARD, CtsFrameCodec.flags(b, 0));
        assertFalse(FrameType.CTS.consumesCredit());
    }

    @Test
    void ctsOverSeveralDevicesCarriesOneRkeyPerRailAndOneWhenTheyAreTheSame() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = CtsFrameCodec.encode(b, 0, 7, 0, 4096, 0x1122334455667788L, new int[] {0xCAFE, 0xBEEF}, 0);
        assertEquals(48, len);
        assertEquals("03050000" + "00000000" + "07000000" + "00000000" + "18000000" + "00100000"
            + "8877665544332211" + "feca0000" + "00000000" + "feca0000" + "efbe0000", hex(b, len));
        assertEquals(FrameType.CTS, FrameHeader.validate(b, 0, len));
        CtsFrameCodec.validatePayload(b, 0);
        assertEquals(2, CtsFrameCodec.railRkeyCount(b, 0));
        assertEquals(0xCAFE, CtsFrameCodec.rkey(b, 0), "rail 0's in the one-rkey field");
        assertEquals(0xCAFE, CtsFrameCodec.rkey(b, 0, 0));
        assertEquals(0xBEEF, CtsFrameCodec.rkey(b, 0, 1));
        // rails on one device: the 16-byte payload, byte for byte the one-rkey frame
        int same = CtsFrameCodec.encode(b, 0, 7, 0, 4096, 0x1122334455667788L, new int[] {0xCAFE, 0xCAFE}, CtsFrameCodec.DISCARD);
        assertEquals(40, same);
        assertEquals(0, CtsFrameCodec.railRkeyCount(b, 0));
        assertEquals("03050000" + "00000000" + "07000000" + "00000000" + "10000000" + "00100000"
            + "8877665544332211" + "feca0000" + "01000000", hex(b, same));
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, 18, java.nio.ByteOrder.LITTLE_ENDIAN);
        FrameFormatException odd = assertThrows(FrameFormatException.class, () -> CtsFrameCodec.validatePayload(b, 0));
        assertTrue(odd.getMessage().contains("CTS frame carries 18 payload bytes but its layout has 16, or 16 + 4 per rail rkey"),
            odd.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CtsFrameCodec.encode(b, 0, 1, 0, 10, 0, new int[0], 0));
    }

    @Test
    void rtsReadFrameCarriesTheSendersAddressAndRkeyAndTakesACredit() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = RtsReadFrameCodec.encode(b, 0, 5, FrameHeader.packCredits(2, 1), 1 << 20, 0x1122334455667788L, 0xBEEF);
        assertEquals(40, len);
        assertEquals("03080000" + "00000000" + "05000000" + "02000100" + "10000000" + "00001000"
            + "8877665544332211" + "efbe0000" + "00000000", hex(b, len));
        assertEquals(FrameType.RTS_READ, FrameHeader.validate(b, 0, len));
        RtsReadFrameCodec.validatePayload(b, 0);
        assertEquals(0x1122334455667788L, RtsReadFrameCodec.address(b, 0));
        assertEquals(0xBEEF, RtsReadFrameCodec.rkey(b, 0));
        assertEquals(1 << 20, FrameHeader.messageLength(b, 0));
        assertTrue(FrameType.RTS_READ.consumesCredit());
        assertThrows(IllegalArgumentException.class, () -> RtsReadFrameCodec.encode(b, 0, 1, 0, -1, 0, 0));
        FrameHeader.write(b, 0, FrameType.RTS_READ, 0, 0, 5, 0, 8, 100);
        FrameFormatException shortPayload = assertThrows(FrameFormatException.class, () -> RtsReadFrameCodec.validatePayload(b, 0));
        assertTrue(shortPayload.getMessage().contains("RTS_READ frame carries 8 payload bytes but its layout has 16"), shortPayload.getMessage());
    }

    @Test
    void readFinFrameNamesThePsnAndItsDiscardFlagAndTakesNoCredit() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = ReadFinFrameCodec.encode(b, 0, 9, 0, 4096, ReadFinFrameCodec.DISCARD);
        assertEquals(32, len);
        assertEquals("03090000" + "00000000" + "09000000" + "00000000" + "08000000" + "00100000" + "01000000" + "00000000", hex(b, len));
        assertEquals(FrameType.READ_FIN, FrameHeader.validate(b, 0, len));
        ReadFinFrameCodec.validatePayload(b, 0);
        assertEquals(ReadFinFrameCodec.DISCARD, ReadFinFrameCodec.flags(b, 0));
        assertFalse(FrameType.READ_FIN.consumesCredit());
        assertEquals(FrameType.READ_FIN, FrameType.fromCode(9));
        assertEquals(FrameType.RTS_READ, FrameType.fromCode(8));
    }

    @Test
    void handshakeFeaturesByteCarriesReadRendezvousAndTheModeAndIsZeroFromAnOlderPeer() {
        HandshakeCodec h = new HandshakeCodec(2, 4096, 64, 0, 1 << 20, 4, java.util.List.of(1, 1), HandshakeCodec.features(true, 2));
        byte[] bytes = h.encode();
        assertEquals("0101" + "05", HEX.formatHex(bytes, HandshakeCodec.LENGTH, bytes.length), "kinds, then features: READ (bit 0), AUTO (2 << 1)");
        HandshakeCodec back = HandshakeCodec.decode(bytes);
        assertEquals(h, back);
        assertTrue(back.readRendezvous());
        assertEquals(2, back.rendezvousModeCode());
        // an older peer: no features byte, or zero padding from the connection manager
        HandshakeCodec old = HandshakeCodec.decode(java.util.Arrays.copyOf(bytes, HandshakeCodec.LENGTH + 2));
        assertFalse(old.readRendezvous());
        assertEquals(0, old.rendezvousModeCode());
        HandshakeCodec padded = HandshakeCodec.decode(java.util.Arrays.copyOf(java.util.Arrays.copyOf(bytes, HandshakeCodec.LENGTH + 2), 56));
        assertFalse(padded.readRendezvous());
        assertThrows(IllegalArgumentException.class, () -> HandshakeCodec.features(true, 4));
    }

    @Test
    void finFrameNamesItsStripeAndTheStripeCount() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = FinFrameCodec.encode(b, 0, 9, 0, 1000, 600, 400, 2, 1);
        assertEquals(40, len);
        assertEquals("03060000" + "00000000" + "09000000" + "00000000" + "10000000" + "e8030000"
            + "58020000" + "90010000" + "02000000" + "01000000", hex(b, len));
        assertEquals(FrameType.FIN, FrameHeader.validate(b, 0, len));
        assertEquals(600, FinFrameCodec.stripeOffset(b, 0));
        assertEquals(400, FinFrameCodec.stripeLength(b, 0));
        assertEquals(2, FinFrameCodec.stripes(b, 0));
        assertEquals(1, FinFrameCodec.stripeIndex(b, 0));
    }

    @Test
    void rendezvousFramesRejectBadStripesAndShortPayloads() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
            () -> FinFrameCodec.encode(b, 0, 1, 0, 1000, 700, 400, 2, 0));
        assertTrue(outside.getMessage().contains("1000-byte message"), outside.getMessage());
        assertThrows(IllegalArgumentException.class, () -> FinFrameCodec.encode(b, 0, 1, 0, 1000, 0, 10, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> FinFrameCodec.encode(b, 0, 1, 0, 1000, 0, 10, 1, 64));
        assertThrows(IllegalArgumentException.class, () -> RtsFrameCodec.encode(b, 0, 1, 0, -1));
        RtsFrameCodec.encode(b, 0, 1, 0, 10);
        b.putByte(FrameHeader.TYPE_OFFSET, (byte) FrameType.FIN.code());
        FrameFormatException e = assertThrows(FrameFormatException.class, () -> FinFrameCodec.validatePayload(b, 0));
        assertTrue(e.getMessage().contains("FIN") && e.getMessage().contains("16"), e.getMessage());
    }

    @Test
    void railDownFrameIsAHeaderNamingTheFailedRailInThePsnField() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = RailDownFrameCodec.encode(b, 0, FrameHeader.packCredits(3, 2), 5);
        assertEquals(24, len);
        assertEquals("03070000" + "00000000" + "05000000" + "03000200" + "00000000" + "00000000", hex(b, len));
        assertEquals(FrameType.RAIL_DOWN, FrameHeader.validate(b, 0, len));
        assertEquals(5, RailDownFrameCodec.rail(b, 0));
        assertFalse(FrameType.RAIL_DOWN.consumesCredit());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RailDownFrameCodec.encode(b, 0, 0, 256));
        assertTrue(e.getMessage().contains("256"), e.getMessage());
    }

    @Test
    void rtsAndCtsDecodersCheckTheirFixedPayload() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        RtsFrameCodec.encode(b, 0, 1, 0, 77);
        RtsFrameCodec.validatePayload(b, 0);
        assertEquals(77, RtsFrameCodec.messageLength(b, 0));
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, 4, java.nio.ByteOrder.LITTLE_ENDIAN);
        FrameFormatException rts = assertThrows(FrameFormatException.class, () -> RtsFrameCodec.validatePayload(b, 0));
        assertTrue(rts.getMessage().contains("RTS frame carries 4 payload bytes but its layout has 0"), rts.getMessage());
        CtsFrameCodec.encode(b, 0, 1, 0, 10, 0, 0, 0);
        b.putInt(FrameHeader.PAYLOAD_LENGTH_OFFSET, 8, java.nio.ByteOrder.LITTLE_ENDIAN);
        FrameFormatException cts = assertThrows(FrameFormatException.class, () -> CtsFrameCodec.validatePayload(b, 0));
        assertTrue(cts.getMessage().contains("CTS frame carries 8 payload bytes but its layout has 16"), cts.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CtsFrameCodec.encode(b, 0, 1, 0, -1, 0, 0, 0));
    }

    @Test
    void handshakeCarriesTheRendezvousBufferCountInTheFormerlyReservedField() {
        HandshakeCodec h = new HandshakeCodec(1, 8192, 64, 0, 1 << 20, 4);
        byte[] bytes = h.encode();
        assertEquals("52444658" + "0301" + "0400" + "00200000" + "40000000" + "00000000" + "00001000" + "01" + "00", HEX.formatHex(bytes));
        assertEquals(h, HandshakeCodec.decode(bytes));
        assertThrows(IllegalArgumentException.class, () -> new HandshakeCodec(1, 8192, 64, 0, 1 << 20, 65536));
    }

    @Test
    void handshakeNamesTheChannelKindOfEachRailAfterTheFixedPart() {
        HandshakeCodec h = new HandshakeCodec(3, 4096, 64, 0, 1 << 20, 0, java.util.List.of(1, 7, 255));
        byte[] bytes = h.encode();
        assertEquals(HandshakeCodec.LENGTH + 3 + 1, bytes.length);
        assertEquals("0107ff" + "00", HEX.formatHex(bytes, HandshakeCodec.LENGTH, bytes.length));
        assertEquals(h, HandshakeCodec.decode(bytes));
    }

    @Test
    void aHandshakeWithoutKindsMeansRcSendRecvOnEveryRail() {
        byte[] bytes = java.util.Arrays.copyOf(new HandshakeCodec(2, 4096, 64, 0, 1 << 20).encode(), HandshakeCodec.LENGTH);
        assertEquals(java.util.List.of(HandshakeCodec.RC_SEND_RECV, HandshakeCodec.RC_SEND_RECV), HandshakeCodec.decode(bytes).kindCodes());
    }

    @Test
    void aHandshakeWithTooFewOrInvalidKindsIsRefusedNamingIt() {
        byte[] full = new HandshakeCodec(3, 4096, 64, 0, 1 << 20).encode();
        FrameFormatException cut = assertThrows(FrameFormatException.class,
            () -> HandshakeCodec.decode(java.util.Arrays.copyOf(full, HandshakeCodec.LENGTH + 2)));
        assertTrue(cut.getMessage().contains("names 3 rails but not the channel kind of each (27 bytes expected)"), cut.getMessage());
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
            () -> new HandshakeCodec(1, 4096, 64, 0, 1 << 20, 0, java.util.List.of(0)));
        assertTrue(zero.getMessage().contains("channel kind codes in [1, 255] required but one was 0"), zero.getMessage());
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
            () -> new HandshakeCodec(2, 4096, 64, 0, 1 << 20, 0, java.util.List.of(1)));
        assertTrue(count.getMessage().contains("one channel kind per rail required but 1 were given for 2 rails"), count.getMessage());
    }

    @Test
    void anOldPeersHandshakePaddedWithZerosMeansRcSendRecv() {
        // rdma_cm on InfiniBand delivers a fixed 56 bytes of private data: an old peer's 24 bytes and zeros
        byte[] old = java.util.Arrays.copyOf(new HandshakeCodec(2, 8192, 64, 0, 1 << 20, 4).encode(), HandshakeCodec.LENGTH);
        HandshakeCodec h = HandshakeCodec.decode(java.util.Arrays.copyOf(old, 56));
        assertEquals(java.util.List.of(HandshakeCodec.RC_SEND_RECV, HandshakeCodec.RC_SEND_RECV), h.kindCodes());
        assertEquals(4, h.rendezvousBuffers());
        // a new peer's record padded the same way keeps its kinds
        byte[] kinds = new HandshakeCodec(2, 8192, 64, 0, 1 << 20, 4, java.util.List.of(1, 1)).encode();
        assertEquals(java.util.List.of(1, 1), HandshakeCodec.decode(java.util.Arrays.copyOf(kinds, 56)).kindCodes());
    }
}
