package io.rdmaflux.core.tck;

import java.util.function.Predicate;

/**
 * The RC wire-fault profiles {@link ConnectionTck#underRailFaultsEveryMessageArrivesOnceInPsnOrder} runs
 * under, each with fixed seeds (the same run every time in virtual time) and the counters that prove its
 * faults happened and were recovered from.
 *
 * <p>At 20 % loss each way a retry of the oldest request fails with p ~ 0.36 (the request or its ACK
 * lost), so 8 failed tries in a row exhaust {@code qpRetryCount} 7 in a fair share of long runs, and the
 * QP correctly ends in RETRY_EXC_ERR; that profile accepts either outcome (everything delivered, or a
 * clean {@code RdmaTransportException} with nothing lost, duplicated or misordered before it) and runs in
 * virtual time only, where the outcome is one fixed run.
 */
public enum RailFaultProfile {
    /** 1 % of RC frames lost. */
    LOSS_1_PERCENT(new RailFaults(0.01, 0, 0, 101), false, c -> c.framesLost() > 0 && c.retransmits() > 0),
    /** 5 % lost. */
    LOSS_5_PERCENT(new RailFaults(0.05, 0, 0, 105), false, c -> c.framesLost() > 0 && c.timeoutRetransmits() > 0
        && c.nakRetransmits() > 0),
    /** 20 % lost: retries may run out (see the class comment); virtual time only. */
    LOSS_20_PERCENT(new RailFaults(0.20, 0, 0, 120), true, c -> c.framesLost() > 0 && c.retransmits() > 0),
    /** 5 % of RC frames delivered twice. */
    DUPLICATION(new RailFaults(0, 0.05, 0, 205), false, c -> c.framesDuplicated() > 0 && c.duplicateRequests() > 0),
    /**
     * 5 % of RC frames held back 10 µs, overtaken by later ones. Whether a frame sent within those 10 µs
     * overtakes it (and the responder NAKs the gap) depends on timing in real time, so only the reordering
     * itself is required.
     */
    REORDERING(new RailFaults(0, 0, 0.05, 305), false, c -> c.framesReordered() > 0),
    /** 5 % lost, 1 % duplicated, 1 % reordered at once. */
    MIXED(new RailFaults(0.05, 0.01, 0.01, 42), false, c -> c.framesLost() > 0 && c.framesDuplicated() > 0
        && c.framesReordered() > 0 && c.retransmits() > 0);

    private final RailFaults faults;
    private final boolean retriesMayRunOut;
    private final Predicate<RailFaultCounters> happened;

    RailFaultProfile(RailFaults faults, boolean retriesMayRunOut, Predicate<RailFaultCounters> happened) {
        this.faults = faults;
        this.retriesMayRunOut = retriesMayRunOut;
        this.happened = happened;
    }

    public RailFaults faults() {
        return faults;
    }

    /**
     * Whether the RC retries may run out under this profile, so a clean transport failure is a correct
     * outcome; such a profile runs in virtual time only (in real time its outcome would vary run to run).
     */
    public boolean retriesMayRunOut() {
        return retriesMayRunOut;
    }

    /** Whether {@code c} shows this profile's faults happened and were recovered from. */
    public boolean happenedIn(RailFaultCounters c) {
        return happened.test(c);
    }

    @Override
    public String toString() {
        return name() + " (" + faults + ")";
    }
}
