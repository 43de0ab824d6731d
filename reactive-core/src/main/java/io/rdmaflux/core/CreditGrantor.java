package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.internal.credit.MessageCredits;

/**
 * Connection stage: grants the peer credits on every duty cycle (seed 001 &sect;3.1, two-level as
 * {@link MessageCredits} explains). Message credits: the subscriber's outstanding demand covered by free
 * receive buffers over all rails; then every channel grants its buffer credits. Both travel piggybacked
 * on whatever frame goes next ({@link io.rdmaflux.core.channel.ChannelEvents#takeMessageCreditTotal()});
 * an explicit CREDIT frame goes on the first rail able to send one when message credits are due and no
 * frame carried them, or after a rail failure (a frame lost on it may have carried the latest total).
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class CreditGrantor {
    private final Channel[] channels;
    private final MessageCredits messageCredits;
    private final ReceiveBuffers buffers;
    private final InboundAssembler assembler;
    private final RendezvousReceiver rendezvous;
    /** Message credits per free DATA receive buffer ({@code RdmaNode.Builder.messageCreditsPerBuffer}). */
    private final int creditsPerBuffer;
    private boolean resync;

    CreditGrantor(Channel[] channels, MessageCredits messageCredits, ReceiveBuffers buffers, InboundAssembler assembler,
                  RendezvousReceiver rendezvous, int creditsPerBuffer) {
        this.channels = channels;
        this.messageCredits = messageCredits;
        this.buffers = buffers;
        this.assembler = assembler;
        this.rendezvous = rendezvous;
        this.creditsPerBuffer = creditsPerBuffer;
    }

    /** A rail failed: the next grant goes in an explicit CREDIT frame, whatever its size. */
    void resync() {
        resync = true;
    }

    /** @return work done */
    int flush() {
        long free = 0;
        for (Channel ch : channels) {
            free += ch.freeReceiveBuffers();
        }
        // creditsPerBuffer message credits per free buffer (small messages travel packed); a rendezvous in
        // progress holds no receive buffer but is a message ahead of the ESN, and messages held in packed
        // buffers beyond one each are messages too: both count against it, so unreleased messages plus
        // message credits stay within creditsPerBuffer per buffer and messages ahead of the ESN within the
        // reorder window
        int rv = rendezvous.inProgress();
        free = Math.max(0, free * creditsPerBuffer - rv - buffers.packedExtraHeld());
        messageCredits.grant(free, rv + assembler.partialCount());
        int work = 0;
        for (Channel ch : channels) {
            work += ch.flushCredits();
        }
        if (messageCredits.explicitCreditDue() || resync) {
            for (Channel ch : channels) {
                if (ch.sendCreditFrame()) {
                    resync = false;
                    work++;
                    break;
                }
            }
        }
        return work;
    }
}
