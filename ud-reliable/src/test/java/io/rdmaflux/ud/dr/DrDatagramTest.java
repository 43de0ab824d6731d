package io.rdmaflux.ud.dr;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The DR datagram codec against a hex dump, and the datagrams it refuses. */
class DrDatagramTest {
    @Test
    void dataDatagramMatchesItsHexDump() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[DrDatagram.HEADER_BYTES + 3]);
        b.putBytes(DrDatagram.HEADER_BYTES, new byte[] {1, 2, 3});
        int len = DrDatagram.encode(b, 0, DrDatagram.DATA, DrDatagram.FLAG_FIRST | DrDatagram.FLAG_LAST, 3, 0x0A0B0C0D, 7, 3, 0, new CRC32C());
        assertEquals(31, len);
        String hex = HexFormat.of().formatHex(b.byteArray(), 4, 31);
        // type 0b, flags 03, length 0300, source 0d0c0b0a, psn 07000000, message length 03000000, word B 0, payload 010203
        assertEquals("0b0303000d0c0b0a0700000003000000" + "0000000000000000" + "010203", hex);
        CRC32C crc = new CRC32C();
        crc.update(b.byteArray(), 4, 27);
        assertEquals((int) crc.getValue(), b.getInt(0, java.nio.ByteOrder.LITTLE_ENDIAN));
        DrDatagram d = new DrDatagram();
        assertEquals(DrDatagram.OK, d.decode(b, 0, len));
        assertEquals(7, d.psn);
        assertEquals(3, d.payloadLength);
        assertEquals(0x0A0B0C0D, d.sourceId);
    }

    @Test
    void truncatedCorruptedAndForeignDatagramsAreRefused() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        int len = DrDatagram.encode(b, 0, DrDatagram.ACK, 0, 0, 1, 2, 3, 0xFFL, new CRC32C());
        DrDatagram d = new DrDatagram();
        assertEquals(DrDatagram.TRUNCATED, d.decode(b, 0, len - 1));
        assertEquals(DrDatagram.TRUNCATED, d.decode(b, 0, 3));
        b.putByte(20, (byte) (b.getByte(20) ^ 0x10));
        assertEquals(DrDatagram.BAD_CRC, d.decode(b, 0, len));
        UnsafeBuffer f = new UnsafeBuffer(new byte[64]);
        int flen = DrDatagram.encode(f, 0, 42, 0, 0, 1, 2, 3, 0, new CRC32C());
        assertEquals(DrDatagram.FOREIGN, d.decode(f, 0, flen));
    }

    @Test
    void aForeignOrTruncatedDatagramIsCountedAndDisturbsNothing() {
        LossyWire wire = new LossyWire(1, 0, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(DrConfig.DEFAULTS, wire, 1, 1, 20, 3000, false, 0);
        sim.run(100_000);
        UnsafeBuffer junk = new UnsafeBuffer(new byte[] {1, 2, 3, 4, 5, 6, 0, 0, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30});
        assertEquals(DrDatagram.BAD_CRC, sim.ep[1].onDatagram(0, junk, 0, 30, sim.nowNs));
        assertEquals(DrDatagram.TRUNCATED, sim.ep[1].onDatagram(0, junk, 0, 10, sim.nowNs));
        UnsafeBuffer other = new UnsafeBuffer(new byte[64]);
        int len = DrDatagram.encode(other, 0, DrDatagram.DATA, 7, 0, 999, 0, 0, 0, new CRC32C());
        assertEquals(DrDatagram.FOREIGN, sim.ep[1].onDatagram(0, other, 0, len, sim.nowNs), "another source id");
        assertEquals(true, sim.run(60_000_000_000L));
        assertEquals(20, sim.received.get(0).size());
        assertEquals(2, sim.ep[1].stats().malformedDropped());
        assertEquals(1, sim.ep[1].stats().corruptedDropped());
    }
}
