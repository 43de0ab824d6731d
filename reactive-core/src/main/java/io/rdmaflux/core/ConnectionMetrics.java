package io.rdmaflux.core;

/**
 * A snapshot of one connection's counters. Read from any thread; values may be slightly stale.
 *
 * @param messagesSent          messages whose last fragment was posted
 * @param messagesDelivered     messages sent and completed (delivered to the peer)
 * @param messagesReceived      messages handed to the receive subscriber
 * @param receiveBuffersHeld    receive buffers holding messages not yet released
 * @param sendCredits           credits held for sending now, over all rails
 * @param maxOutstandingRequest most messages ever requested from a send publisher and not yet transmitted
 * @param outOfOrder            messages that waited in the reorder queue
 */
public record ConnectionMetrics(long messagesSent, long messagesDelivered, long messagesReceived, int receiveBuffersHeld,
                                long sendCredits, long maxOutstandingRequest, long outOfOrder) {
}
