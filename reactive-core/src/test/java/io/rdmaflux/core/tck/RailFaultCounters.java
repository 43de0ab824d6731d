package io.rdmaflux.core.tck;

/**
 * What the RC wire faults of a {@link ConnectionTck} pair did, summed over both sides and every rail:
 * the frames the fault model lost, duplicated and held back, and how the RC NICs recovered (the soft
 * provider's counterparts of a hardware NIC's {@code local_ack_timeout_err}, {@code packet_seq_err},
 * {@code duplicate_request} and {@code out_of_sequence} counters). A test checks the faults asked for
 * really happened, so a run that passes proves recovery rather than a quiet wire.
 *
 * @param framesLost         RC frames (requests and responses) dropped by the loss model
 * @param framesDuplicated   RC frames delivered twice
 * @param framesReordered    RC frames held back so later ones overtook them
 * @param timeoutRetransmits go-back-N retransmissions started by an expired ACK timer
 * @param nakRetransmits     go-back-N retransmissions started by a NAK - PSN sequence error (or a READ response gap)
 * @param duplicateRequests  requests a responder saw again and acknowledged again, never placed twice
 * @param sequenceNaksSent   NAKs - PSN sequence error responders sent after a gap
 * @param framesCorrupted    RC frames the fault model corrupted
 * @param icrcDrops          frames the receiving NICs dropped because their ICRC check failed (a hardware NIC's
 *                           {@code port_rcv_errors}); equal to {@code framesCorrupted} once the wire is quiet
 */
public record RailFaultCounters(long framesLost, long framesDuplicated, long framesReordered, long timeoutRetransmits,
                                long nakRetransmits, long duplicateRequests, long sequenceNaksSent, long framesCorrupted,
                                long icrcDrops) {
    /** Go-back-N retransmissions of either cause. */
    public long retransmits() {
        return timeoutRetransmits + nakRetransmits;
    }

    /** The sum of this and {@code o}, field by field. */
    public RailFaultCounters plus(RailFaultCounters o) {
        return new RailFaultCounters(framesLost + o.framesLost, framesDuplicated + o.framesDuplicated,
            framesReordered + o.framesReordered, timeoutRetransmits + o.timeoutRetransmits, nakRetransmits + o.nakRetransmits,
            duplicateRequests + o.duplicateRequests, sequenceNaksSent + o.sequenceNaksSent, framesCorrupted + o.framesCorrupted,
            icrcDrops + o.icrcDrops);
    }
}
