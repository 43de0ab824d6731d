package io.rdmaflux.verbs;

import org.jspecify.annotations.Nullable;

/**
 * What a queue pair is created with ({@code ibv_qp_init_attr} plus the connection attributes that
 * verbs sets at RTR/RTS: retry counts and timeouts). Build with {@link #builder(QpType, Port)}.
 *
 * <p>Times are in ns of the provider's clock. {@code rnrRetryCount == 7} means retry forever, as in
 * verbs.
 */
public final class QpInitAttributes {
    private final QpType type;
    private final Port port;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final @Nullable SharedReceiveQueue srq;
    private final int maxSendWr;
    private final int maxReceiveWr;
    private final int maxInlineBytes;
    private final int rnrRetryCount;
    private final long rnrTimeoutNs;
    private final int retryCount;
    private final long retryTimeoutNs;
    private final int qkey;

    private QpInitAttributes(Builder b) {
        if (b.sendCq == null || b.receiveCq == null) {
            throw new VerbsException("a queue pair needs a send CQ and a receive CQ; call sendCq(..) and receiveCq(..) (they may be the same CQ)");
        }
        this.type = b.type;
        this.port = b.port;
        this.sendCq = b.sendCq;
        this.receiveCq = b.receiveCq;
        this.srq = b.srq;
        this.maxSendWr = positive("maxSendWr", b.maxSendWr);
        this.maxReceiveWr = positive("maxReceiveWr", b.maxReceiveWr);
        if (b.maxInlineBytes < 0) {
            throw new VerbsException("maxInlineBytes >= 0 required but it was " + b.maxInlineBytes);
        }
        this.maxInlineBytes = b.maxInlineBytes;
        if (b.rnrRetryCount < 0 || b.rnrRetryCount > 7) {
            throw new VerbsException("rnrRetryCount must be in [0, 7] (7 = infinite) but it was " + b.rnrRetryCount);
        }
        this.rnrRetryCount = b.rnrRetryCount;
        this.rnrTimeoutNs = positive("rnrTimeoutNs", b.rnrTimeoutNs);
        if (b.retryCount < 0 || b.retryCount > 7) {
            throw new VerbsException("retryCount must be in [0, 7] but it was " + b.retryCount);
        }
        this.retryCount = b.retryCount;
        this.retryTimeoutNs = positive("retryTimeoutNs", b.retryTimeoutNs);
        this.qkey = b.qkey;
    }

    private static int positive(String name, int value) {
        if (value <= 0) {
            throw new VerbsException(name + " > 0 required but it was " + value);
        }
        return value;
    }

    private static long positive(String name, long value) {
        if (value <= 0) {
            throw new VerbsException(name + " > 0 required but it was " + value);
        }
        return value;
    }

    /** A builder for a QP of {@code type} on {@code port}. */
    public static Builder builder(QpType type, Port port) {
        return new Builder(type, port);
    }

    public QpType type() {
        return type;
    }

    public Port port() {
        return port;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue receiveCq() {
        return receiveCq;
    }

    public @Nullable SharedReceiveQueue srq() {
        return srq;
    }

    public int maxSendWr() {
        return maxSendWr;
    }

    public int maxReceiveWr() {
        return maxReceiveWr;
    }

    /** Largest inline payload in bytes. */
    public int maxInlineBytes() {
        return maxInlineBytes;
    }

    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /** Delay between RNR retries, ns. */
    public long rnrTimeoutNs() {
        return rnrTimeoutNs;
    }

    public int retryCount() {
        return retryCount;
    }

    /** Transport timeout per retry (peer silent, port down, broken stream), ns. */
    public long retryTimeoutNs() {
        return retryTimeoutNs;
    }

    /** UD Q_Key. */
    public int qkey() {
        return qkey;
    }

    /** Builder; defaults: 256 send and receive WRs, 64 inline bytes, RNR retry 7 every 100 µs, retry 7 every 1 ms. */
    public static final class Builder {
        private final QpType type;
        private final Port port;
        private @Nullable CompletionQueue sendCq;
        private @Nullable CompletionQueue receiveCq;
        private @Nullable SharedReceiveQueue srq;
        private int maxSendWr = 256;
        private int maxReceiveWr = 256;
        private int maxInlineBytes = 64;
        private int rnrRetryCount = 7;
        private long rnrTimeoutNs = 100_000;
        private int retryCount = 7;
        private long retryTimeoutNs = 1_000_000;
        private int qkey = 0x11111111;

        private Builder(QpType type, Port port) {
            this.type = type;
            this.port = port;
        }

        public Builder sendCq(CompletionQueue cq) {
            this.sendCq = cq;
            return this;
        }

        public Builder receiveCq(CompletionQueue cq) {
            this.receiveCq = cq;
            return this;
        }

        /** Uses {@code cq} for both sends and receives. */
        public Builder cq(CompletionQueue cq) {
            this.sendCq = cq;
            this.receiveCq = cq;
            return this;
        }

        public Builder srq(@Nullable SharedReceiveQueue srq) {
            this.srq = srq;
            return this;
        }

        public Builder maxSendWr(int n) {
            this.maxSendWr = n;
            return this;
        }

        public Builder maxReceiveWr(int n) {
            this.maxReceiveWr = n;
            return this;
        }

        public Builder maxInlineBytes(int bytes) {
            this.maxInlineBytes = bytes;
            return this;
        }

        public Builder rnrRetryCount(int n) {
            this.rnrRetryCount = n;
            return this;
        }

        public Builder rnrTimeoutNs(long ns) {
            this.rnrTimeoutNs = ns;
            return this;
        }

        public Builder retryCount(int n) {
            this.retryCount = n;
            return this;
        }

        public Builder retryTimeoutNs(long ns) {
            this.retryTimeoutNs = ns;
            return this;
        }

        public Builder qkey(int qkey) {
            this.qkey = qkey;
            return this;
        }

        /** @throws VerbsException naming the first invalid attribute */
        public QpInitAttributes build() {
            return new QpInitAttributes(this);
        }
    }
}
