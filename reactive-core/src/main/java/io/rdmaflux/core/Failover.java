package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;

/**
 * Connection stage: rail failover (seed 000 &sect;4.2: any subchannel can carry any message; seed 003
 * &sect;4.2: failover to another rail after a rail's retries are exhausted). The scheduler stops using
 * the failed rail, and everything sent on it without a completion is sent again with its PSN on the
 * remaining rails: small messages (kept until their completion, or copied back out of packed frames),
 * and rendezvous messages from their RTS, so that the receiver confirms the message buffer is still
 * theirs before any stripe is written again. The receiver drops copies by PSN. The peer hears of the
 * failure in a RAIL_DOWN frame on a live rail. The connection fails only when no rail can do what is
 * left to do.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class Failover {
    private final DefaultRdmaConnection connection;
    private final Channel[] channels;
    private final SubchannelScheduler scheduler;
    private int railFailures;
    private long railDownToSend;

    Failover(DefaultRdmaConnection connection, Channel[] channels, SubchannelScheduler scheduler) {
        this.connection = connection;
        this.channels = channels;
        this.scheduler = scheduler;
    }

    /** Rails that failed while the connection went on over the others. */
    int railFailures() {
        return railFailures;
    }

    void onFailure(Channel ch, RdmaException error) {
        ConnectionState state = connection.state();
        if (state.terminated() || (state == ConnectionState.FINAL_SENT && connection.closeHandshake().peerFinal())) {
            // after both last frames nothing travels any more: the peer freeing its queue pairs is no failure
            return;
        }
        scheduler.onSubchannelFailed(ch);
        if (!railLeft(state) || connection.abortRequested()) {
            connection.termination().terminate(error);
            return;
        }
        int f = ch.rail();
        railFailures++;
        railDownToSend |= 1L << f;
        connection.creditGrantor().resync();
        InboundAssembler assembler = connection.assembler();
        assembler.spillOutOfOrder();
        assembler.onRailFailed(f);
        SendPipeline pipeline = connection.sendPipeline();
        pipeline.onRailFailed(f);
        InflightLedger ledger = connection.ledger();
        ch.forEachUnackedSend((token, memory, frameOffset) -> ledger.keepPackedForResend(f, token, memory, frameOffset));
        ledger.resendAllOf(f, pipeline.nextPsn());
        connection.rendezvousSender().onRailFailed(f, ledger, pipeline.nextPsn());
        connection.rendezvousReceiver().onRailFailed(f);
    }

    /**
     * Whether a rail can still do what this side has left to do: carry messages before its CLOSE; after
     * it, only control frames (credits for the peer's last messages, RAIL_DOWN); after its last frame,
     * only receive the peer's. A rail failing during a graceful close fails over like any other.
     */
    private boolean railLeft(ConnectionState state) {
        for (Channel ch : channels) {
            if (state == ConnectionState.FINAL_SENT ? !ch.isFailed() : state.closeSent() ? ch.carriesControl() : ch.isUsable()) {
                return true;
            }
        }
        return false;
    }

    /** The peer reports that rail {@code failedRail} failed on its side. */
    void onPeerRailDown(int failedRail) {
        if (failedRail < 0 || failedRail >= channels.length) {
            connection.termination().protocolFailure("peer reported rail " + failedRail + " failed but the connection has " + channels.length + " rails");
            return;
        }
        Channel ch = channels[failedRail];
        if (!ch.isFailed()) {
            // the peer saw it first: stop using the rail here too (onFailure re-sends what was on it)
            ch.failedByPeer();
            railDownToSend &= ~(1L << failedRail);
        } else {
            connection.assembler().spillOutOfOrder();
        }
    }

    /** Tells the peer about rails that failed here, on any live rail that can send a control frame. */
    int sendRailDowns() {
        if (railDownToSend == 0) {
            return 0;
        }
        int work = 0;
        for (int f = 0; f < channels.length; f++) {
            if ((railDownToSend & (1L << f)) == 0) {
                continue;
            }
            for (Channel ch : channels) {
                if (ch.carriesControl() && ch.sendRailDown(f)) {
                    railDownToSend &= ~(1L << f);
                    work++;
                    break;
                }
            }
        }
        return work;
    }
}
