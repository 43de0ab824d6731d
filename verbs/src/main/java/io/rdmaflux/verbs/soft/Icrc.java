package io.rdmaflux.verbs.soft;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The soft NIC's invariant CRC of an RC frame: the counterpart of the InfiniBand ICRC (IBA vol. 1
 * &sect;7.8.1), a CRC over the fields that do not change on the way and the payload, which the
 * receiving NIC checks before it executes the frame, dropping a frame whose check fails. Here it is
 * CRC32C ({@code java.util.zip.CRC32C}) over type, flags, status, QPNs, PSN, immediate, rkey, length,
 * remote address and the payload entries; the send and delivery times are left out, as the variant
 * fields are from the ICRC (the IP fabric rebases them on the receiver's clock).
 *
 * <p>Only frames the RC fault model corrupted carry one ({@link SoftFrame#hasIcrc}, see
 * {@link RcFaults}): an intact frame's would always match, and computing it for every frame would cost
 * the RC hot path a pass over registered memory the NIC does not own (an RC payload is placed by
 * reference on the in-JVM fabric). The payload of a frame that carries one is the frame's own copy.
 *
 * <p><b>Concurrency:</b> stateless; the engine thread of the sending or the receiving NIC.
 */
final class Icrc {
    private static final int HEADER_BYTES = 48;

    private Icrc() {
    }

    /** The ICRC of {@code f} as it is now. */
    static int of(SoftFrame f) {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(f.type.ordinal()).putInt(f.hasImmediate ? 1 : 0).putInt(f.status.ordinal()).putInt(f.sourceQpn)
            .putInt(f.destinationQpn).putInt(f.psn).putInt(f.immediate).putInt(f.rkey).putInt(f.length).putLong(f.remoteAddress)
            .flip();
        CRC32C crc = new CRC32C();
        crc.update(h);
        for (int i = 0; i < f.payloadCount; i++) {
            ByteBuffer d = f.payloadBuffers[i].duplicate();
            d.clear().limit(f.payloadOffsets[i] + f.payloadLengths[i]).position(f.payloadOffsets[i]);
            crc.update(d);
        }
        return (int) crc.getValue();
    }

    /** Whether the ICRC {@code f} carries matches its contents (its check passes). */
    static boolean matches(SoftFrame f) {
        return of(f) == f.icrc;
    }
}
