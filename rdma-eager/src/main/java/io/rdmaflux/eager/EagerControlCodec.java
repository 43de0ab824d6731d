package io.rdmaflux.eager;

import io.rdmaflux.core.frame.FrameFormatException;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The eager ring's control messages, carried as the payload of the RC channel's
 * {@code CHANNEL_CONTROL} frames (in order with every frame and RDMA WRITE on the queue pair),
 * little-endian. The first byte is the type:
 *
 * <pre>
 * OFFER (1)       the receiver polls its ring for this sender now (seed 001 &sect;4.1, &sect;4.6)
 *   0: type | 1..3: 0 | 4: slots u32 | 8: slot bytes u32 | 12: flags u32 (1: CRC required)
 *  16: ring address u64 | 24: rkey u32 | 28: next sequence (low 32) | 32: freed to (low 32)     36 bytes
 * CREDIT (2)      slots before "freed to" are free again (seed 001 &sect;4.4)
 *   0: type | 4: freed to (low 32)                                                               8 bytes
 * REVOKE (3)      the receiver leaves its polling set: stop writing, answer REVOKE_ACK
 *   0: type | 4: 0                                                                               8 bytes
 * REVOKE_ACK (4)  the sender stopped; every WRITE before this frame is placed (RC order)
 *   0: type | 4: the sender's next sequence (low 32)                                             8 bytes
 * </pre>
 *
 * <p>The ring is advertised in-band, right after connect, instead of in the connection handshake:
 * the polling set (&sect;4.6) must offer and revoke rings during a connection's life anyway, in order
 * with the ring WRITEs, so one mechanism does both; and the handshake stays kind-neutral.
 *
 * <p><b>Concurrency:</b> static pure functions.
 */
final class EagerControlCodec {
    static final int OFFER = 1;
    static final int CREDIT = 2;
    static final int REVOKE = 3;
    static final int REVOKE_ACK = 4;
    static final int OFFER_LENGTH = 36;
    static final int SHORT_LENGTH = 8;
    static final int OFFER_CRC = 0x1;

    private EagerControlCodec() {
    }

    static int encodeOffer(MutableDirectBuffer b, int slots, int slotBytes, boolean crc, long address, int rkey, long nextSeq,
                           long freedSeq) {
        b.putInt(0, OFFER, RingLayout.ORDER);
        b.putInt(4, slots, RingLayout.ORDER);
        b.putInt(8, slotBytes, RingLayout.ORDER);
        b.putInt(12, crc ? OFFER_CRC : 0, RingLayout.ORDER);
        b.putLong(16, address, RingLayout.ORDER);
        b.putInt(24, rkey, RingLayout.ORDER);
        b.putInt(28, (int) nextSeq, RingLayout.ORDER);
        b.putInt(32, (int) freedSeq, RingLayout.ORDER);
        return OFFER_LENGTH;
    }

    static int encodeShort(MutableDirectBuffer b, int type, long value) {
        b.putInt(0, type, RingLayout.ORDER);
        b.putInt(4, (int) value, RingLayout.ORDER);
        return SHORT_LENGTH;
    }

    /**
     * The type of the message of {@code length} bytes at {@code offset}.
     *
     * @throws FrameFormatException naming the type or length when the message is malformed
     */
    static int validate(DirectBuffer b, int offset, int length) {
        if (length < SHORT_LENGTH) {
            throw new FrameFormatException("eager control message of " + length + " bytes is shorter than " + SHORT_LENGTH);
        }
        int type = b.getInt(offset, RingLayout.ORDER);
        int need = switch (type) {
            case OFFER -> OFFER_LENGTH;
            case CREDIT, REVOKE, REVOKE_ACK -> SHORT_LENGTH;
            default -> throw new FrameFormatException("unknown eager control message type " + type
                + "; known: 1 OFFER, 2 CREDIT, 3 REVOKE, 4 REVOKE_ACK");
        };
        if (length != need) {
            throw new FrameFormatException("eager control message type " + type + " of " + length + " bytes, " + need + " expected");
        }
        return type;
    }

    static int offerSlots(DirectBuffer b, int o) {
        return b.getInt(o + 4, RingLayout.ORDER);
    }

    static int offerSlotBytes(DirectBuffer b, int o) {
        return b.getInt(o + 8, RingLayout.ORDER);
    }

    static boolean offerCrc(DirectBuffer b, int o) {
        return (b.getInt(o + 12, RingLayout.ORDER) & OFFER_CRC) != 0;
    }

    static long offerAddress(DirectBuffer b, int o) {
        return b.getLong(o + 16, RingLayout.ORDER);
    }

    static int offerRkey(DirectBuffer b, int o) {
        return b.getInt(o + 24, RingLayout.ORDER);
    }

    static int offerNextSeq(DirectBuffer b, int o) {
        return b.getInt(o + 28, RingLayout.ORDER);
    }

    static int offerFreedSeq(DirectBuffer b, int o) {
        return b.getInt(o + 32, RingLayout.ORDER);
    }

    /** The 32-bit value of a short message (CREDIT, REVOKE_ACK). */
    static int value(DirectBuffer b, int o) {
        return b.getInt(o + 4, RingLayout.ORDER);
    }

    /** The 64-bit sequence whose low 32 bits are {@code low32}, nearest to {@code near}. */
    static long extend(int low32, long near) {
        return near + (int) (low32 - (int) near);
    }
}
