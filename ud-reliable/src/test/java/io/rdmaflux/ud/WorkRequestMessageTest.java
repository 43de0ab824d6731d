package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.MessageSource;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The DR message of a work request: read in place ({@code source}) equals copied up front ({@code encode}). */
class WorkRequestMessageTest {
    @Test
    void aGatheredMessageReadInAnyChunksEqualsTheEncodedOne() {
        ByteBuffer memory = ByteBuffer.allocateDirect(10_000);
        for (int i = 0; i < memory.capacity(); i++) {
            memory.put(i, (byte) (i * 13 + 5));
        }
        long base = BufferUtil.address(memory);
        SendWorkRequest wr = new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immediate(0x1234_5678)
            .remoteAddress(0xABCD_0000_1000L).rkey(77).sge(base + 100, 3000, 1).addSge(base + 5000, 1, 1).addSge(base + 7000, 2500, 1);
        int total = 5501;
        WorkRequestMessage codec = new WorkRequestMessage();
        byte[] encoded = codec.encode(wr, total);
        MessageSource source = codec.source(wr, total);
        wr.reset(); // the poster reuses its request object: the source took what it needs
        assertEquals(encoded.length, source.length());
        for (int chunk : new int[] {1, 7, 24, 25, 1000, 4092, encoded.length}) {
            byte[] read = new byte[encoded.length];
            UnsafeBuffer dst = new UnsafeBuffer(read);
            for (int at = 0; at < read.length; at += chunk) {
                source.copyTo(at, dst, at, Math.min(chunk, read.length - at));
            }
            assertArrayEquals(encoded, read, "read in chunks of " + chunk);
        }
        assertEquals(true, codec.decode(encoded));
        assertEquals(0x1234_5678, codec.imm);
        assertEquals(0xABCD_0000_1000L, codec.address);
        assertEquals(total, codec.length);
    }
}
