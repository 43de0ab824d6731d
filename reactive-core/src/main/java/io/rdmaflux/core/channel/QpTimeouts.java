package io.rdmaflux.core.channel;

/**
 * Retry settings of a subchannel's RC queue pair (verbs' {@code timeout}/{@code retry_cnt} and
 * {@code min_rnr_timer}/{@code rnr_retry}), in ns of the provider's clock.
 *
 * <p>A transport retry fires when nothing is acknowledged for {@code retryTimeoutNs}; after
 * {@code retryCount} retries the work request completes with RETRY_EXC_ERR and the subchannel
 * fails. Real-time defaults must survive a progress thread that is descheduled for a while (many
 * spinning threads on few cores): {@link #DEFAULTS} waits 200 ms per retry, about 1.4 s before a
 * silent peer is declared gone, like a hardware HCA's timeout of 14&ndash;18 (67&ndash;1070 ms).
 *
 * @param retryTimeoutNs transport timeout per retry, &gt; 0
 * @param retryCount     transport retries in [0, 7]
 * @param rnrTimeoutNs   delay before re-sending after an RNR NAK, &gt; 0
 * @param rnrRetryCount  RNR retries in [0, 7]; 7 retries forever
 */
public record QpTimeouts(long retryTimeoutNs, int retryCount, long rnrTimeoutNs, int rnrRetryCount) {
    /** 200 ms &times; 7 transport retries, RNR every 100 &micro;s forever. */
    public static final QpTimeouts DEFAULTS = new QpTimeouts(200_000_000L, 7, 100_000L, 7);

    /** @throws IllegalArgumentException naming the value out of range */
    public QpTimeouts {
        if (retryTimeoutNs <= 0) {
            throw new IllegalArgumentException("retryTimeoutNs > 0 required but it was " + retryTimeoutNs);
        }
        if (retryCount < 0 || retryCount > 7) {
            throw new IllegalArgumentException("retryCount in [0, 7] required but it was " + retryCount);
        }
        if (rnrTimeoutNs <= 0) {
            throw new IllegalArgumentException("rnrTimeoutNs > 0 required but it was " + rnrTimeoutNs);
        }
        if (rnrRetryCount < 0 || rnrRetryCount > 7) {
            throw new IllegalArgumentException("rnrRetryCount in [0, 7] (7 = forever) required but it was " + rnrRetryCount);
        }
    }
}
