package io.rdmaflux.eager;

/**
 * Counters of one rail's eager channel ({@link EagerChannel#stats()}), since it was opened.
 *
 * @param rail                   the rail
 * @param receiveState           where the receive ring stands in the polling set: IDLE (not polled), OFFER_DUE,
 *                               POLLING, REVOKE_DUE, REVOKING, DRAINING
 * @param sendingToRing          whether the peer's ring is offered to this side now
 * @param ringFramesSent         frames this side wrote into the peer's ring (one RDMA WRITE each)
 * @param fallbackFramesSent     credit-taking frames this side sent over send/receive
 * @param ringFramesReceived     frames polled from this side's ring
 * @param fallbackFramesReceived DATA/RTS frames that arrived over send/receive
 * @param tornSlotsSeen          slots whose tail was seen before the rest (CRC mismatch), never delivered torn
 * @param deferrals              fragments held until the send/receive channel had a buffer credit
 * @param offersSent             times this side offered its ring (promotions, including the first)
 * @param revokesSent            times this side revoked its ring (demotions)
 * @param creditsSent            explicit CREDIT control messages this side sent for its ring
 * @param ringSlotsHeld          ring slots the application holds now
 * @param ringWritesSignaled     ring WRITEs this side posted signalled (every {@code slots / 2}-th: selective signalling)
 * @param ringFlushes            zero-length signalled WRITEs posted to retire unsignalled ones after traffic stopped
 */
public record EagerStats(int rail, String receiveState, boolean sendingToRing, long ringFramesSent, long fallbackFramesSent,
                         long ringFramesReceived, long fallbackFramesReceived, long tornSlotsSeen, long deferrals, long offersSent,
                         long revokesSent, long creditsSent, int ringSlotsHeld, long ringWritesSignaled, long ringFlushes) {
}
