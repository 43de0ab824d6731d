package io.rdmaflux.core;

import net.openhft.chronicle.bytes.Bytes;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.nio.BufferOverflowException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Chronicle Bytes views of a message: {@link RdmaMessage#bytes()} reads the same memory as
 * {@link RdmaMessage#content()} with no copy and within the message's bounds, and
 * {@link RdmaMessage#write(int, RdmaMessage.BytesWriter)} fills the send slot (or a heap buffer when the
 * message is materialized), end to end over a connection too.
 */
class ChronicleContentTest {
    @Test
    void bytesReadsTheMessageWithoutACopyAndOnlyItsRange() {
        ByteBuffer direct = ByteBuffer.allocateDirect(64).order(java.nio.ByteOrder.nativeOrder());
        direct.putLong(8, 42).putInt(16, 7);
        RdmaMessage m = RdmaMessage.of(direct.slice(8, 12));
        Bytes<?> b = m.bytes();
        assertEquals(12, b.readRemaining());
        assertEquals(42, b.readLong());
        assertEquals(42, m.content().getLong(0), "both views in the native byte order");
        direct.putInt(16, 8);
        assertEquals(8, b.readInt(), "a view of the message's memory, not a copy");
        assertThrows(BufferUnderflowException.class, b::readByte, "nothing past the message");
        m.release();
        assertThrows(IllegalReferenceCountException.class, m::bytes);
    }

    @Test
    void bytesOfAHeapMessageStartsAtItsOffset() {
        byte[] array = new byte[32];
        new UnsafeBuffer(array).putLong(10, -5);
        RdmaMessage m = RdmaMessage.of(ByteBuffer.wrap(array, 10, 8));
        Bytes<?> b = m.bytes();
        assertEquals(8, b.readRemaining());
        assertEquals(-5, b.readLong());
        m.release();
    }

    @Test
    void aBytesWriterFillsTheSlotInPlaceOrTheMaterializedCopy() {
        RdmaMessage m = RdmaMessage.write(13, b -> b.writeLong(1).writeInt(2).writeByte((byte) 3));
        UnsafeBuffer slot = new UnsafeBuffer(ByteBuffer.allocateDirect(32));
        m.writeTo(slot, 4);
        assertEquals(1, slot.getLong(4));
        assertEquals(2, slot.getInt(12));
        assertEquals(3, slot.getByte(16));
        assertEquals(1, m.content().getLong(0), "materialized through the same writer on a heap buffer");
        assertEquals(3, m.bytes().readSkip(12).readByte());
        m.release();
    }

    @Test
    void aBytesWriterWritesAtAnUnalignedOffsetWithSeparateCalls() {
        RdmaMessage m = RdmaMessage.write(12, b -> {
            b.writeLong(7L);
            b.writeInt(-3);
        });
        UnsafeBuffer slot = new UnsafeBuffer(ByteBuffer.allocateDirect(16));
        m.writeTo(slot, 2);
        assertEquals(7, slot.getLong(2));
        assertEquals(-3, slot.getInt(10));
        m.release();
    }

    @Test
    void aWriterThatWritesTooFewOrTooManyBytesIsAnErrorNamingTheCounts() {
        UnsafeBuffer slot = new UnsafeBuffer(ByteBuffer.allocateDirect(32));
        RdmaMessage tooFew = RdmaMessage.write(8, b -> b.writeInt(1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> tooFew.writeTo(slot, 0));
        assertTrue(e.getMessage().contains("wrote 4 bytes of a 8-byte message"), e.getMessage());
        RdmaMessage tooMany = RdmaMessage.write(4, b -> b.writeLong(1));
        assertThrows(BufferOverflowException.class, () -> tooMany.writeTo(slot, 0), "bounds-checked: not past the slot");
        assertEquals(0, slot.getLong(8), "nothing written past the message");
        assertThrows(IllegalArgumentException.class, () -> RdmaMessage.write(-1, b -> { }));
        assertThrows(NullPointerException.class, () -> RdmaMessage.write(1, (RdmaMessage.BytesWriter) null));
        tooFew.release();
        tooMany.release();
    }

    @Test
    void marshalledMessagesCrossAConnectionAndAreReadBackWithBytes() {
        try (InvokerPair p = InvokerPair.open()) {
            List<String> got = new CopyOnWriteArrayList<>();
            p.server.receive().subscribe(m -> {
                try (m) {
                    Bytes<?> b = m.bytes();
                    got.add(b.readLong() + ":" + b.read8bit());
                }
            });
            AtomicBoolean sent = new AtomicBoolean();
            p.client.send(Flux.range(0, 50).map(i -> {
                String text = "record " + i;
                return RdmaMessage.write(8 + 1 + text.length(), b -> b.writeLong(i).write8bit(text));
            })).subscribe(null, null, () -> sent.set(true));
            p.runUntil(() -> sent.get() && got.size() == 50);
            assertEquals("0:record 0", got.get(0));
            assertEquals("49:record 49", got.get(49));
            assertArrayEquals(new int[] {50}, new int[] {got.size()});
        }
    }
}
