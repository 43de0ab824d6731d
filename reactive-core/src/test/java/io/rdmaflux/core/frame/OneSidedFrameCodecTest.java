package io.rdmaflux.core.frame;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one-sided frames (15..18): layouts against hex dumps, round trips, and malformed payloads refused by name. */
class OneSidedFrameCodecTest {
    private final UnsafeBuffer b = new UnsafeBuffer(ByteBuffer.allocateDirect(256));

    private String hex(int length) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            sb.append(String.format("%02x", b.getByte(i)));
        }
        return sb.toString();
    }

    @Test
    void regionExposeLayout() {
        int len = RegionExposeFrameCodec.encode(b, 0, 7, 0, 0x1122334455667788L, 4096, RegionExposeFrameCodec.ACCESS_READ
            | RegionExposeFrameCodec.ACCESS_WRITE, new int[] {0xA1, 0xB2});
        assertEquals(52, len);
        assertEquals("030f0000" + "00000000" + "07000000" + "00000000" + "1c000000" + "00000000"
            + "8877665544332211" + "0010000000000000" + "0300" + "0200" + "a1000000" + "b2000000", hex(len));
        assertEquals(FrameType.REGION_EXPOSE, FrameHeader.validate(b, 0, len));
        RegionExposeFrameCodec.validatePayload(b, 0);
        assertEquals(7, RegionExposeFrameCodec.regionId(b, 0));
        assertEquals(0x1122334455667788L, RegionExposeFrameCodec.address(b, 0));
        assertEquals(4096, RegionExposeFrameCodec.lengthBytes(b, 0));
        assertEquals(3, RegionExposeFrameCodec.access(b, 0));
        assertEquals(2, RegionExposeFrameCodec.rails(b, 0));
        assertEquals(0xB2, RegionExposeFrameCodec.rkey(b, 0, 1));
    }

    @Test
    void regionExposeRefusesMalformedPayloads() {
        RegionExposeFrameCodec.encode(b, 0, 1, 0, 0, 10, 1, new int[] {1, 2});
        b.putShort(RegionExposeFrameCodec.RAILS_OFFSET, (short) 3, FrameHeader.ORDER);
        assertEquals("REGION_EXPOSE frame says 3 rails but carries 28 payload bytes",
            assertThrows(FrameFormatException.class, () -> RegionExposeFrameCodec.validatePayload(b, 0)).getMessage());
        RegionExposeFrameCodec.encode(b, 0, 1, 0, 0, 10, 1, new int[] {1});
        b.putShort(RegionExposeFrameCodec.ACCESS_OFFSET, (short) RegionExposeFrameCodec.ACCESS_ATOMIC, FrameHeader.ORDER);
        RegionExposeFrameCodec.validatePayload(b, 0); // bit 2, ATOMIC, is known
        b.putShort(RegionExposeFrameCodec.ACCESS_OFFSET, (short) 8, FrameHeader.ORDER);
        assertTrue(assertThrows(FrameFormatException.class, () -> RegionExposeFrameCodec.validatePayload(b, 0)).getMessage()
            .contains("unknown access bits 0x8"));
        RegionExposeFrameCodec.encode(b, 0, 1, 0, 0, 10, 1, new int[] {1});
        b.putLong(RegionExposeFrameCodec.LENGTH_OFFSET, 0, FrameHeader.ORDER);
        assertTrue(assertThrows(FrameFormatException.class, () -> RegionExposeFrameCodec.validatePayload(b, 0)).getMessage()
            .contains("region of 0 bytes"));
        assertEquals("lengthBytes > 0 required but it was -1", assertThrows(IllegalArgumentException.class,
            () -> RegionExposeFrameCodec.encode(b, 0, 1, 0, 0, -1, 1, new int[] {1})).getMessage());
    }

    @Test
    void regionRevokeLayout() {
        int len = RegionRevokeFrameCodec.encode(b, 0, 9, 0, true);
        assertEquals("03100100" + "00000000" + "09000000" + "00000000" + "00000000" + "00000000", hex(len));
        assertEquals(FrameType.REGION_REVOKE, FrameHeader.validate(b, 0, len));
        RegionRevokeFrameCodec.validatePayload(b, 0);
        assertTrue(RegionRevokeFrameCodec.byOwner(b, 0));
        RegionRevokeFrameCodec.encode(b, 0, 9, 0, false);
        assertFalse(RegionRevokeFrameCodec.byOwner(b, 0));
        assertEquals(9, RegionRevokeFrameCodec.regionId(b, 0));
    }

    @Test
    void epochSyncLayoutAndChecks() {
        int len = EpochSyncFrameCodec.encode(b, 0, 5, 0, 0b11, 1, 16, 1 << 20);
        assertEquals("03110000" + "00000000" + "05000000" + "00000000" + "18000000" + "00000000"
            + "0300000000000000" + "01000000" + "10000000" + "0000100000000000", hex(len));
        assertEquals(FrameType.EPOCH_SYNC, FrameHeader.validate(b, 0, len));
        EpochSyncFrameCodec.validatePayload(b, 0);
        assertEquals(5, EpochSyncFrameCodec.epoch(b, 0));
        assertEquals(3, EpochSyncFrameCodec.railMask(b, 0));
        assertEquals(1, EpochSyncFrameCodec.generation(b, 0));
        assertEquals(16, EpochSyncFrameCodec.puts(b, 0));
        assertEquals(1 << 20, EpochSyncFrameCodec.bytesPut(b, 0));
        b.putLong(EpochSyncFrameCodec.RAIL_MASK_OFFSET, 0, FrameHeader.ORDER);
        assertEquals("EPOCH_SYNC frame with an empty rail mask",
            assertThrows(FrameFormatException.class, () -> EpochSyncFrameCodec.validatePayload(b, 0)).getMessage());
        assertEquals("a non-empty railMask required but it was 0",
            assertThrows(IllegalArgumentException.class, () -> EpochSyncFrameCodec.encode(b, 0, 1, 0, 0, 0, 0, 0)).getMessage());
    }

    @Test
    void epochAckLayout() {
        int len = EpochAckFrameCodec.encode(b, 0, 0x01020304, 0);
        assertEquals("03120000" + "00000000" + "04030201" + "00000000" + "00000000" + "00000000", hex(len));
        assertEquals(FrameType.EPOCH_ACK, FrameHeader.validate(b, 0, len));
        assertEquals(0x01020304, EpochAckFrameCodec.epoch(b, 0));
        FrameHeader.write(b, 0, FrameType.EPOCH_ACK, 0, 0, 1, 0, 4, 0);
        assertTrue(assertThrows(FrameFormatException.class, () -> EpochAckFrameCodec.validatePayload(b, 0)).getMessage()
            .contains("EPOCH_ACK frame carries 4 payload bytes but its layout has 0"));
    }

    @Test
    void theReservedCodesAreUnknown() {
        for (int code = 11; code <= 14; code++) {
            int c = code;
            assertThrows(FrameFormatException.class, () -> FrameType.fromCode(c));
        }
        assertEquals(FrameType.EPOCH_ACK, FrameType.fromCode(18));
        assertThrows(FrameFormatException.class, () -> FrameType.fromCode(19));
    }
}
