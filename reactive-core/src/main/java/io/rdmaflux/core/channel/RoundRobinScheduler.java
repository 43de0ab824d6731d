package io.rdmaflux.core.channel;

/**
 * Round robin over the subchannels that can send now (seed 000 &sect;4.4): the next message goes on
 * the next rail after the previous one that has a credit and a send buffer.
 */
final class RoundRobinScheduler implements SubchannelScheduler {
    private int next;

    @Override
    public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
        int n = subchannels.length;
        for (int i = 0; i < n; i++) {
            int idx = next + i;
            if (idx >= n) {
                idx -= n;
            }
            if (subchannels[idx].canSend()) {
                next = idx + 1 == n ? 0 : idx + 1;
                return idx;
            }
        }
        return -1;
    }
}
