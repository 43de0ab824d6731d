package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DrConfig;
import io.rdmaflux.ud.dr.DrDatagram;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 14 (4 KiB message rate over the net fabric): with {@link UdSpec#DEFAULTS} a DR datagram is as large as the
 * port's UD MTU allows, so a 4 KiB message with its 24-byte work-request header and the RC channel's framing is 2
 * VFRAGs on a 4096-byte MTU, not 3 (DR's own 2 KiB default made it 3 datagrams plus ACKs per message: about 3.2
 * {@code sendto} calls per message measured with {@code strace -c}).
 */
class UdSpecDatagramSizeTest {
    /** Bytes the RC channel's frame adds to a message, bounded from above. */
    private static final int RC_FRAMING_BOUND = 32;

    @Test
    void defaultDatagramFillsA4096ByteMtu() {
        // what ReliableDatagramQp does: the spec's datagramBytes lowered to the port's UD MTU minus the tag
        int datagram = Math.min(UdSpec.DEFAULTS.dr().datagramBytes(), 4096 - UdPort.TAG_BYTES);
        assertEquals(4092, datagram);
        DrConfig lowered = UdSpec.DEFAULTS.dr().toBuilder().datagramBytes(datagram).build();
        int payload = lowered.datagramBytes() - DrDatagram.HEADER_BYTES;
        int message = 4096 + ReliableDatagramQp.MESSAGE_HEADER_BYTES + RC_FRAMING_BOUND;
        assertEquals(2, (message + payload - 1) / payload, "VFRAGs per 4 KiB message");
    }

    @Test
    void smallerMtuStillLowersTheDatagram() {
        assertEquals(2044, Math.min(UdSpec.DEFAULTS.dr().datagramBytes(), 2048 - UdPort.TAG_BYTES));
    }
}
