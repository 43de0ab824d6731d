package io.rdmaflux.striping;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class CommonFinishSplitTest {

    @Test
    void equalQueuesPerUnitOfRateKeepThePolicysSplit() {
        long[] split = {800, 200};
        CommonFinishSplit.topUp(1000, 0b11, new long[] {4000, 1000}, 1, split, new double[2]);
        assertArrayEquals(new long[] {800, 200}, split);
    }

    @Test
    void aRailWhoseQueueOutlastsTheCommonFinishGetsNothingAndTheOthersCatchUp() {
        // rates 1:1; rail 1 has 3000 bytes queued: 1000 more bytes all go to rail 0 (finishing at 1000 < 3000)
        long[] split = {500, 500};
        CommonFinishSplit.topUp(1000, 0b11, new long[] {0, 3000}, 1, split, new double[2]);
        assertArrayEquals(new long[] {1000, 0}, split);
        // 4000 bytes: level (4000 + 3000) / 2 = 3500 -> rail 0 3500, rail 1 500
        split = new long[] {2000, 2000};
        CommonFinishSplit.topUp(4000, 0b11, new long[] {0, 3000}, 1, split, new double[2]);
        assertArrayEquals(new long[] {3500, 500}, split);
    }

    @Test
    void stripesAreWholeGranulesButTheLastRailsWhichTakesTheTail() {
        long length = (1 << 20) + 1;
        long[] split = {length / 2, length - length / 2};
        CommonFinishSplit.topUp(length, 0b11, new long[] {10_000, 0}, 4096, split, new double[2]);
        assertEquals(0, split[0] % 4096, "rail 0: " + split[0]);
        assertEquals(length, split[0] + split[1]);
        assertEquals(1, split[1] % 4096, "the last rail's stripe carries the tail byte: " + split[1]);
        assertEquals(true, split[1] > split[0], "rail 1 had no queue, so it gets more: " + split[0] + " / " + split[1]);
    }

    @Test
    void anUnusableRailGetsNothingAndFewerThanTwoRailsKeepTheSplit() {
        long[] split = {1000, 0};
        CommonFinishSplit.topUp(1000, 0b01, new long[] {5000, 0}, 1, split, new double[2]);
        assertArrayEquals(new long[] {1000, 0}, split);
    }
}
