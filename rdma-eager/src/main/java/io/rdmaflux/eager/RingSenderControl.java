package io.rdmaflux.eager;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.frame.FrameFormatException;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The eager protocol's control messages ({@link EagerControlCodec}) as they arrive on the RC channel's
 * {@code CHANNEL_CONTROL} frames, and the sender's half of the handshake they carry; {@link RingPolling} is
 * the receiver's half (it sends OFFER, CREDIT and REVOKE).
 * <ul>
 * <li>OFFER: the peer's ring &mdash; address, rkey, slots, slot size, CRC, sequence numbers &mdash; becomes
 *     the {@link RingSender}'s target: the persistent buffer association of seed 001 &sect;4.1, set up
 *     in-band after connect and again on every promotion (&sect;4.6) instead of in the connection handshake.</li>
 * <li>CREDIT: the peer's ring freed its slots up to a sequence (&sect;4.4), as a piggybacked credit says.</li>
 * <li>REVOKE: the peer's ring left its polling set (&sect;4.6): the sender writes no more and answers
 *     REVOKE_ACK with its next sequence, behind every WRITE it posted (RC order), so the receiver drains its
 *     ring up to there; while the RC channel has no credit for the answer, each duty cycle tries again.</li>
 * <li>REVOKE_ACK: the answer to this side's REVOKE, for {@link RingPolling#onRevokeAck}.</li>
 * </ul>
 * A malformed message, or an OFFER the sender cannot take, is a protocol violation
 * ({@link EagerChannel#protocolFailure}).
 *
 * <p><b>Concurrency:</b> the channel's progress thread only.
 */
final class RingSenderControl {
    private final EagerChannel channel;
    private final Channel rc;
    private final RingSender sender;
    private final RingPolling polling;
    private final UnsafeBuffer control = new UnsafeBuffer(new byte[16]);
    private boolean revokeAckDue;

    RingSenderControl(EagerChannel channel, Channel rc, RingSender sender, RingPolling polling) {
        this.channel = channel;
        this.rc = rc;
        this.sender = sender;
        this.polling = polling;
    }

    /** Whether a REVOKE was answered but the REVOKE_ACK found the RC channel without credit. */
    boolean revokeAckDue() {
        return revokeAckDue;
    }

    /** Sends the REVOKE_ACK if the RC channel takes it now. @return work done */
    int sendRevokeAck() {
        int len = EagerControlCodec.encodeShort(control, EagerControlCodec.REVOKE_ACK, sender.nextSeq());
        if (rc.sendChannelControl(control, 0, len)) {
            revokeAckDue = false;
            return 1;
        }
        return 0;
    }

    /** A CHANNEL_CONTROL frame of the eager protocol: {@code length} bytes at {@code o}. */
    void onControl(DirectBuffer b, int o, int length) {
        int type;
        try {
            type = EagerControlCodec.validate(b, o, length);
        } catch (FrameFormatException e) {
            channel.protocolFailure(e);
            return;
        }
        ChannelEvents l = channel.listener();
        switch (type) {
            case EagerControlCodec.OFFER -> {
                try {
                    sender.offer(EagerControlCodec.offerAddress(b, o), EagerControlCodec.offerRkey(b, o), EagerControlCodec.offerSlots(b, o),
                        EagerControlCodec.offerSlotBytes(b, o), EagerControlCodec.offerCrc(b, o), EagerControlCodec.offerNextSeq(b, o),
                        EagerControlCodec.offerFreedSeq(b, o));
                } catch (RdmaException e) {
                    channel.protocolFailure(e);
                }
            }
            case EagerControlCodec.CREDIT -> channel.onPiggybackedCredit(EagerControlCodec.value(b, o));
            case EagerControlCodec.REVOKE -> {
                // no WRITE after this: the ACK goes behind every WRITE posted, so the receiver can drain
                sender.revoke();
                revokeAckDue = true;
                sendRevokeAck();
            }
            case EagerControlCodec.REVOKE_ACK -> {
                if (l != null) {
                    polling.onRevokeAck(EagerControlCodec.value(b, o), l);
                }
            }
            default -> throw new IllegalStateException("validated type " + type);
        }
    }
}
