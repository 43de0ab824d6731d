package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MultiplexingPoliciesTest {

    private static int[] picks(MultiplexingPolicy p, long usable, int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = p.selectRail(64, usable);
        }
        return out;
    }

    @Test
    void roundRobinTakesRailsInTurnAndSkipsUnusableOnes() {
        MultiplexingPolicy rr = MultiplexingPolicies.roundRobin().create(3);
        assertArrayEquals(new int[] {0, 1, 2, 0, 1, 2}, picks(rr, 0b111, 6));
        assertArrayEquals(new int[] {0, 2, 0, 2}, picks(rr, 0b101, 4));
    }

    @Test
    void bindingUsesOneRailAndFallsBackWhenItFails() {
        MultiplexingPolicy b = MultiplexingPolicies.binding(1).create(3);
        assertArrayEquals(new int[] {1, 1, 1}, picks(b, 0b111, 3));
        assertArrayEquals(new int[] {0, 0}, picks(b, 0b101, 2));
    }

    @Test
    void weightedRoundRobinInterleavesInProportion() {
        MultiplexingPolicy w = MultiplexingPolicies.weightedRoundRobin(3, 1).create(2);
        int[] p = picks(w, 0b11, 8);
        assertArrayEquals(new int[] {0, 0, 1, 0, 0, 0, 1, 0}, p);
        int[] counts = new int[2];
        for (int r : picks(w, 0b11, 4000)) {
            counts[r]++;
        }
        assertEquals(3000, counts[0]);
        assertEquals(1000, counts[1]);
    }

    @Test
    void weightedRoundRobinFallsBackWhenOnlyZeroWeightRailsRemain() {
        MultiplexingPolicy w = MultiplexingPolicies.weightedRoundRobin(1, 0).create(2);
        assertArrayEquals(new int[] {1, 1}, picks(w, 0b10, 2));
    }

    @Test
    void windowRoundRobinSendsWConsecutiveMessagesPerRail() {
        MultiplexingPolicy w = MultiplexingPolicies.windowRoundRobin(3).create(2);
        assertArrayEquals(new int[] {0, 0, 0, 1, 1, 1, 0, 0, 0}, picks(w, 0b11, 9));
    }

    @Test
    void windowRoundRobinLeavesAFailedRailAtOnce() {
        MultiplexingPolicy w = MultiplexingPolicies.windowRoundRobin(4).create(2);
        assertArrayEquals(new int[] {0, 0}, picks(w, 0b11, 2));
        assertArrayEquals(new int[] {1, 1, 1, 1, 1}, picks(w, 0b10, 5));
    }

    @Test
    void badArgumentsNameTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.windowRoundRobin(0));
        assertTrue(e.getMessage().contains("window > 0 required but it was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.binding(2).create(2));
        assertTrue(e.getMessage().contains("was 2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.weightedRoundRobin(1, 2, 3).create(2));
        assertTrue(e.getMessage().contains("2 rails but 3 weights"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.weightedRoundRobin(0, 0).create(2));
        assertTrue(e.getMessage().contains("at least one weight > 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.weightedRoundRobin(1, -1).create(2));
        assertTrue(e.getMessage().contains(">= 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.roundRobin().create(0));
        assertTrue(e.getMessage().contains("railCount in [1, 64] required but it was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiplexingPolicies.roundRobin().create(65));
        assertTrue(e.getMessage().contains("was 65"), e.getMessage());
    }
}
