package io.rdmaflux.verbs.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The rkey exchange's messages, one UCP active message each on {@link UcxFrameTransport#AM_ID_RKEY}:
 * a 32-byte little-endian header, and for {@link #REPLY} the packed UCX rkey as the message's data.
 *
 * <pre>
 *  0 kind (int)      4 route id (int, the requester's)   8 rkey (int, the soft NIC's)
 * 12 qpn (REQUEST: the responder's QP) or access (REPLY)
 * 16 address (long, REPLY) or the requester NIC's tag (REQUEST, REFUSED, REVOKE, REVOKE_ACK: a random
 *    long per NIC, so the responder tells apart two requesters' routes with the same id)
 * 24 length (long, REPLY)
 * </pre>
 *
 * <p>REQUEST (requester to responder, sent with {@code UCP_AM_SEND_FLAG_REPLY}): may this route put
 * into the region {@code rkey} names, on behalf of the responder's QP {@code qpn}? REPLY: yes, here
 * are its address, length, access and packed key. REFUSED: no (unknown key, another protection
 * domain, no REMOTE_WRITE, or deregistered): the route sends that key's WRITEs as frames for good (a
 * soft rkey is never reused for another region). REVOKE (responder to requester, on the deregistration
 * of the region): forget the key; answered by REVOKE_ACK on the route's endpoint once every put issued
 * with it has completed (an endpoint flush), after which the responder unmaps the memory and the
 * deregistration returns ({@link UcxRegionExports}).
 */
final class UcxRkeyMessages {
    static final int HEADER = 32;
    static final int REQUEST = 1;
    static final int REPLY = 2;
    static final int REFUSED = 3;
    static final int REVOKE = 4;
    static final int REVOKE_ACK = 5;
    /** Largest packed rkey accepted (bytes); UCX's are tens to a few hundred bytes. */
    static final int MAX_PACKED = 4096;

    private UcxRkeyMessages() {
    }

    /** A new direct header buffer holding one message. */
    static ByteBuffer header(int kind, int routeId, int rkey, int qpnOrAccess, long address, long length) {
        ByteBuffer b = ByteBuffer.allocateDirect(HEADER).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, kind).putInt(4, routeId).putInt(8, rkey).putInt(12, qpnOrAccess).putLong(16, address).putLong(24, length);
        return b;
    }

    static int kind(ByteBuffer h) {
        return h.getInt(0);
    }

    static int routeId(ByteBuffer h) {
        return h.getInt(4);
    }

    static int rkey(ByteBuffer h) {
        return h.getInt(8);
    }

    static int qpnOrAccess(ByteBuffer h) {
        return h.getInt(12);
    }

    static long address(ByteBuffer h) {
        return h.getLong(16);
    }

    static long length(ByteBuffer h) {
        return h.getLong(24);
    }
}
