package io.rdmaflux.ud.dr;

/**
 * Counters of one {@link DrEndpoint} at one moment; every count since the endpoint was created.
 *
 * @param vfragsSent           DATA datagrams sent for the first time
 * @param vfragsRetransmitted  DATA datagrams sent again (timeouts, SACK holes, failover)
 * @param timeouts             retransmission timeouts that expired
 * @param acksSent             ACKs sent (probe replies included)
 * @param acksReceived         valid ACKs received
 * @param vfragsReceived       new DATA datagrams accepted
 * @param duplicatesDropped    DATA datagrams already held or delivered, dropped
 * @param outOfWindowDropped   DATA datagrams beyond the receive buffer (or, go-back-N, not at the ESN), dropped
 * @param corruptedDropped     datagrams whose CRC32C did not match, dropped, never delivered
 * @param malformedDropped     truncated or foreign datagrams, dropped
 * @param messagesDelivered    whole messages handed to the receiver's consumer
 * @param rttSamples           RTT samples taken (Karn's rule: first transmissions only)
 * @param failovers            times the peer's traffic moved to another rail
 * @param railsRevived         failed rails that answered a probe and came back
 * @param srttNs               smoothed RTT, ns, -1 before the first sample
 * @param rtoNs                current retransmission timeout, ns
 */
public record DrStats(long vfragsSent, long vfragsRetransmitted, long timeouts, long acksSent, long acksReceived,
                      long vfragsReceived, long duplicatesDropped, long outOfWindowDropped, long corruptedDropped,
                      long malformedDropped, long messagesDelivered, long rttSamples, long failovers, long railsRevived,
                      long srttNs, long rtoNs) {
}
