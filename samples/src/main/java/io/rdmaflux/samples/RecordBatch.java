package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.security.MessageDigest;

/**
 * The record pipeline's wire format, marshalled with Chronicle Bytes (issue 18): a chunk of lines becomes
 * one message holding each line (its newline included) as a record, a stop-bit encoded length followed
 * by the line's bytes. The sender fills the send slot in place through {@link RdmaMessage#write(int,
 * RdmaMessage.BytesWriter)}; the receiver reads the records back through {@link RdmaMessage#bytes()}.
 * One Chronicle view per message of many records: its creation (µs, see the README's content-API
 * figures) is spread over the chunk, where Chronicle's codecs serve.
 */
final class RecordBatch {
    private RecordBatch() {
    }

    /** The records of {@code chunk} (the raw lines, ending on a line boundary) as one marshalled message; takes over {@code chunk}. */
    static RdmaMessage marshal(RdmaMessage chunk) {
        ByteBuffer lines = ByteBuffer.wrap(chunk.toByteArray());
        chunk.release();
        int n = lines.remaining();
        int length = 0;
        for (int start = 0; start < n; ) {
            int end = lineEnd(lines, start, n);
            length += stopBitLength(end - start) + end - start;
            start = end;
        }
        return RdmaMessage.write(length, bytes -> {
            BytesStore<?, ?> src = BytesStore.wrap(lines);
            for (int start = 0; start < n; ) {
                int end = lineEnd(lines, start, n);
                bytes.writeStopBit(end - start);
                bytes.write(src, (long) start, (long) (end - start));
                start = end;
            }
        });
    }

    /**
     * Reads every record of {@code m}: each line's bytes go to {@code digest} and {@code counts}; releases
     * {@code m}.
     *
     * @return the bytes of the lines (what the source held)
     */
    static long unmarshal(RdmaMessage m, byte[] scratch, MessageDigest digest, WordCounts counts) {
        try (m) {
            Bytes<?> b = m.bytes();
            UnsafeBuffer line = new UnsafeBuffer(scratch);
            long total = 0;
            while (b.readRemaining() > 0) {
                int len = (int) b.readStopBit();
                b.read(scratch, 0, len);
                digest.update(scratch, 0, len);
                counts.add(line, len);
                total += len;
            }
            return total;
        }
    }

    private static int lineEnd(ByteBuffer lines, int start, int n) {
        int i = start;
        while (i < n && lines.get(i) != '\n') {
            i++;
        }
        return i < n ? i + 1 : n;
    }

    /** Bytes of Chronicle's stop-bit encoding of {@code v >= 0}: 7 bits a byte. */
    static int stopBitLength(long v) {
        int n = 1;
        while (v >= 0x80) {
            v >>>= 7;
            n++;
        }
        return n;
    }
}
