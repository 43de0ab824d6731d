package io.rdmaflux.ud.dr;

/**
 * The retransmission timeout of one peer from measured round-trip times, as RFC 6298 &sect;2 computes it:
 * the first sample R sets {@code SRTT = R, RTTVAR = R/2}; later ones {@code RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|},
 * {@code SRTT = 7/8 SRTT + 1/8 R}; {@code RTO = SRTT + max(G, 4 RTTVAR)}, clamped to [min, max]. Each timeout
 * doubles the RTO up to the max (&sect;5.5, exponential backoff); the next sample recomputes it (&sect;5.7).
 * Callers follow Karn's rule (&sect;3): a VFRAG sent more than once gives no sample.
 *
 * <p>Seed 003 &sect;4.2 names the ACK timeout but not how it is set; this is the deviation: DR's timeouts are
 * fixed parameters, here they follow the measured RTT so a slow rail does not retransmit needlessly and a
 * fast one recovers quickly. All values ns. Not thread-safe.
 */
public final class RtoEstimator {
    /** Clock granularity G of RFC 6298, ns. */
    static final long GRANULARITY_NS = 1_000;

    private final long minRtoNs;
    private final long maxRtoNs;
    private final long initialRtoNs;
    private long srttNs = -1;
    private long rttvarNs;
    private long rtoNs;
    private int backoffs;

    public RtoEstimator(long initialRtoNs, long minRtoNs, long maxRtoNs) {
        if (minRtoNs <= 0 || maxRtoNs < minRtoNs) {
            throw new IllegalArgumentException("0 < minRtoNs <= maxRtoNs required but they were " + minRtoNs + " and " + maxRtoNs);
        }
        this.minRtoNs = minRtoNs;
        this.maxRtoNs = maxRtoNs;
        this.initialRtoNs = clamp(initialRtoNs);
        this.rtoNs = this.initialRtoNs;
    }

    /** One RTT sample, ns (&ge; 0; a negative one is ignored). */
    public void sample(long rttNs) {
        if (rttNs < 0) {
            return;
        }
        if (srttNs < 0) {
            srttNs = rttNs;
            rttvarNs = rttNs / 2;
        } else {
            rttvarNs = (3 * rttvarNs + Math.abs(srttNs - rttNs)) / 4;
            srttNs = (7 * srttNs + rttNs) / 8;
        }
        rtoNs = clamp(srttNs + Math.max(GRANULARITY_NS, 4 * rttvarNs));
        backoffs = 0;
    }

    /** A retransmission timeout expired: doubles the RTO, up to the max. */
    public void backoff() {
        rtoNs = Math.min(maxRtoNs, rtoNs * 2);
        backoffs++;
    }

    /** Forgets the measurements (a new path after failover): back to the initial RTO. */
    public void reset() {
        srttNs = -1;
        rttvarNs = 0;
        rtoNs = initialRtoNs;
        backoffs = 0;
    }

    public long rtoNs() {
        return rtoNs;
    }

    /** The smoothed RTT, ns, or -1 before the first sample. */
    public long srttNs() {
        return srttNs;
    }

    public long rttvarNs() {
        return rttvarNs;
    }

    /** Backoffs since the last sample. */
    public int backoffs() {
        return backoffs;
    }

    private long clamp(long v) {
        return Math.max(minRtoNs, Math.min(maxRtoNs, v));
    }
}
