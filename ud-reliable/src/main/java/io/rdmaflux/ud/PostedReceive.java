package io.rdmaflux.ud;

import io.rdmaflux.verbs.ReceiveWorkRequest;

/**
 * A receive posted to a {@link ReliableDatagramQp} or a {@link DatagramSharedReceiveQueue}: a copy of the work
 * request (the poster reuses its own), scattered into when a SEND of the peer is placed.
 *
 * @param wrId      the work request id the completion carries
 * @param addresses the scatter/gather addresses
 * @param lengths   their lengths, bytes
 */
record PostedReceive(long wrId, long[] addresses, int[] lengths) {
    static PostedReceive of(ReceiveWorkRequest wr) {
        long[] a = new long[wr.numSge()];
        int[] l = new int[wr.numSge()];
        for (int i = 0; i < a.length; i++) {
            a[i] = wr.sge(i).address();
            l[i] = wr.sge(i).length();
        }
        return new PostedReceive(wr.wrId(), a, l);
    }

    /** Bytes the receive holds. */
    long total() {
        long t = 0;
        for (int l : lengths) {
            t += l;
        }
        return t;
    }
}
