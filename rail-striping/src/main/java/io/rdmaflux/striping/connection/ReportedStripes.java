package io.rdmaflux.striping.connection;

import io.rdmaflux.core.stripe.StripeEngine;

/**
 * The {@code SubchannelScheduler} hooks {@code stripe} and {@code onStripeCompleted}, for a caller that
 * splits and posts with them instead of taking {@link MessageRailScheduler#stripePolicy()} (a scheduler
 * wrapped without forwarding it; tests that drive the hooks): each hook is turned into calls on a
 * {@link StripeEngine} of its own, with the scheduler's {@link ConnectionStriping} as the policy, so the
 * policy hears the same accounting it hears from the connection's engine. Created at the first hook
 * call; a scheduler whose connection takes the policy never has one.
 *
 * <p>What the hooks cannot say: they carry no post, so a stripe counts as posted on its planned rail at
 * its split ({@code onStripePosted} then, idle at post if nothing was outstanding there then), which is
 * when the connection posts it unless the rail has no room. A completion names its stripe by PSN and
 * offset: it is looked up among its message's stripes (at most one per rail); one that arrives on
 * another rail (re-sent after a failover) is moved there first, and one of a message the hooks never
 * split (a rendezvous message below the stripe threshold, written whole) counts as a whole message
 * posted at its post time when its completion arrives.
 *
 * <p><b>Memory:</b> {@value #ENTRIES} engine entries, indexed by PSN; nothing allocated per message
 * or stripe. More messages than that in flight overwrite each other's accounting.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class ReportedStripes {
    static final int ENTRIES = 1024;

    private final StripeEngine engine;

    /** @param failedRails rails that failed before the first hook call */
    ReportedStripes(int railCount, ConnectionStriping policy, long failedRails) {
        this.engine = new StripeEngine(railCount, ENTRIES, policy);
        for (long f = failedRails; f != 0; f &= f - 1) {
            engine.railFailed(Long.numberOfTrailingZeros(f));
        }
    }

    /** {@code SubchannelScheduler.stripe}: splits {@code psn} and counts its stripes as posted at {@code nowNs}. */
    void stripe(int psn, int lengthBytes, long nowNs, long[] stripeBytes) {
        int e = psn & (ENTRIES - 1);
        engine.begin(e, psn, lengthBytes);
        if (engine.split(e, engine.usableRails(), nowNs) == 0) {
            return;
        }
        long slots = engine.slots(e);
        for (int rail = 0; rail < stripeBytes.length; rail++) {
            boolean used = (slots & (1L << rail)) != 0;
            stripeBytes[rail] = used ? engine.stripeBytes(e, rail) : 0;
            if (used) {
                engine.post(e, rail, rail, nowNs);
            }
        }
    }

    /** {@code SubchannelScheduler.onStripeCompleted}: the stripe of {@code psn} at {@code offsetBytes} completed on {@code rail}. */
    void completed(int rail, int psn, long offsetBytes, long lengthBytes, long postedNs, long completedNs) {
        int e = psn & (ENTRIES - 1);
        int slot = engine.psn(e) == psn ? slotAt(e, offsetBytes) : -1;
        if (slot < 0) {
            engine.begin(e, psn, lengthBytes);
            engine.whole(e, rail);
            slot = rail;
            engine.post(e, slot, rail, postedNs);
        } else if (engine.carrier(e, slot) != rail && (engine.completedSlots(e) & (1L << slot)) == 0) {
            engine.unpost(e, slot);
            engine.move(e, slot, rail);
            engine.post(e, slot, rail, postedNs);
        }
        engine.complete(e, slot, completedNs);
    }

    /** {@code rail} failed. */
    void railFailed(int rail) {
        engine.railFailed(rail);
    }

    private int slotAt(int e, long offsetBytes) {
        for (long s = engine.slots(e); s != 0; s &= s - 1) {
            int slot = Long.numberOfTrailingZeros(s);
            if (engine.stripeOffset(e, slot) == offsetBytes) {
                return slot;
            }
        }
        return -1;
    }
}
