package io.rdmaflux.core.internal.srq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SrqCreditBudgetTest {
    /**
     * An account that wants credit it could not get is told when another gives buffers back (the connections
     * sharing the pool are visited only when signalled), once per release while it waits, not after it was
     * served or closed.
     */
    @Test
    void anAccountWaitingForBuffersIsToldWhenAnotherGivesSomeBack() {
        SrqCreditBudget b = new SrqCreditBudget(4);
        SrqCreditBudget.Account a = b.open();
        SrqCreditBudget.Account w = b.open();
        int[] told = new int[2];
        a.onRoom(() -> told[0]++);
        w.onRoom(() -> told[1]++);
        assertEquals(4, b.reserve(a, 4));
        assertEquals(0, b.reserve(w, 2), "the pool is empty");
        b.release(a, 1);
        assertEquals(1, told[1], "the waiting account is told");
        assertEquals(0, told[0], "the releasing account is not");
        // equal shares: a holds 3 > share 2, so w gets the freed one and still waits for its second
        assertEquals(1, b.reserve(w, 2));
        b.release(a, 1);
        assertEquals(2, told[1]);
        assertEquals(1, b.reserve(w, 1));
        b.release(a, 1);
        assertEquals(2, told[1], "served: no longer told");
        assertEquals(0, b.reserve(w, 1), "w holds its share of 2: it waits again");
        b.close(w);
        b.release(a, 1);
        assertEquals(2, told[1], "closed: not told again");
    }

    @Test
    void aLoneConnectionMayTakeThePoolAndANewcomerLowersTheShare() {
        SrqCreditBudget b = new SrqCreditBudget(100);
        SrqCreditBudget.Account a = b.open();
        SrqCreditBudget.Account c = b.open();
        assertEquals(100, b.reserve(a, 500));
        // c wants and gets nothing (the pool is lent out), but it is active now: a's share halves
        assertEquals(0, b.reserve(c, 10));
        assertEquals(50, b.share());
        b.release(a, 100);
        // a asks again: capped at its share, and c's turn leaves room for it
        assertEquals(50, b.reserve(a, 500));
        assertEquals(10, b.reserve(c, 10));
        assertEquals(60, b.held());
    }

    @Test
    void closingAnAccountReturnsWhatItHeldAndItsActivity() {
        SrqCreditBudget b = new SrqCreditBudget(10);
        SrqCreditBudget.Account a = b.open();
        SrqCreditBudget.Account c = b.open();
        b.reserve(a, 4);
        b.reserve(c, 20);
        assertEquals(2, b.active());
        b.close(a);
        b.close(a);
        assertEquals(1, b.active());
        assertEquals(1, b.accounts());
        assertEquals(5, b.held());
        assertEquals(0, b.reserve(a, 3), "a closed account is lent nothing");
    }

    @Test
    void badInputIsRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new SrqCreditBudget(0));
        assertTrue(e.getMessage().contains("buffers > 0") && e.getMessage().contains("0"), e.getMessage());
        SrqCreditBudget b = new SrqCreditBudget(4);
        SrqCreditBudget.Account a = b.open();
        e = assertThrows(IllegalArgumentException.class, () -> b.reserve(a, -1));
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.release(a, 1));
        assertTrue(e.getMessage().contains("[0, 0]"), e.getMessage());
    }

    /**
     * Property, in steps of virtual time with seeded random skewed demand: a few connections want huge
     * numbers of buffers and release them at once (fast subscribers); others have small demand and release
     * one buffer every {@code period} steps (slow subscribers holding messages); connections come and go.
     * After every step nothing is overcommitted (buffers held never exceed the pool, nor any connection's
     * own demand), and every connection that wants buffers is served at least its share within a bounded
     * number of steps: no peer starves another, and the slow ones only hold what they asked for.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42, 1234, 99_999})
    void noOvercommitAndNoStarvationUnderSkewedDemand(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int buffers = 16 + rnd.nextInt(240);
        int n = 2 + rnd.nextInt(30);
        SrqCreditBudget b = new SrqCreditBudget(buffers);
        SrqCreditBudget.Account[] acc = new SrqCreditBudget.Account[n];
        int[] demand = new int[n];
        int[] period = new int[n];
        int[] held = new int[n];
        int[] waitingSince = new int[n];
        boolean[] open = new boolean[n];
        for (int i = 0; i < n; i++) {
            acc[i] = b.open();
            open[i] = true;
            boolean fast = rnd.nextInt(4) == 0;
            demand[i] = fast ? 1_000_000 : 1 + rnd.nextInt(8);
            period[i] = fast ? 1 : 2 + rnd.nextInt(20);
            waitingSince[i] = -1;
        }
        int worstWait = 0;
        for (int step = 0; step < 5_000; step++) {
            // start from a random connection, so no one is always first to ask
            int first = rnd.nextInt(n);
            for (int k = 0; k < n; k++) {
                int i = (first + k) % n;
                if (!open[i]) {
                    continue;
                }
                int want = Math.max(0, demand[i] - held[i]);
                int share = b.share();
                int got = b.reserve(acc[i], want);
                held[i] += got;
                assertTrue(held[i] <= demand[i], "connection " + i + " holds " + held[i] + " beyond its demand " + demand[i]);
                boolean starved = want > 0 && held[i] < Math.min(demand[i], share);
                if (starved && waitingSince[i] < 0) {
                    waitingSince[i] = step;
                } else if (!starved) {
                    waitingSince[i] = -1;
                }
                if (waitingSince[i] >= 0) {
                    worstWait = Math.max(worstWait, step - waitingSince[i]);
                }
            }
            int total = 0;
            for (int i = 0; i < n; i++) {
                total += held[i];
            }
            assertEquals(total, b.held(), "the budget's count agrees with the connections'");
            assertTrue(total <= buffers, "overcommitted: " + total + " > " + buffers);
            // subscribers release: fast ones all they hold, slow ones one per period
            for (int i = 0; i < n; i++) {
                if (open[i] && held[i] > 0 && step % period[i] == 0) {
                    int r = period[i] == 1 ? held[i] : 1;
                    b.release(acc[i], r);
                    held[i] -= r;
                }
            }
            // churn: now and then a connection closes and a new one takes its place
            if (rnd.nextInt(100) == 0) {
                int i = rnd.nextInt(n);
                b.close(acc[i]);
                held[i] = 0;
                acc[i] = b.open();
                waitingSince[i] = -1;
            }
        }
        // the longest a connection waited for its share: bounded by how slowly the slowest holder releases
        // the excess it was lent before the share shrank (at most 8 buffers, one per 21 steps)
        assertTrue(worstWait <= 8 * 21 + 2, "a connection waited " + worstWait + " steps for its share (seed " + seed + ")");
        for (int i = 0; i < n; i++) {
            b.close(acc[i]);
        }
        assertEquals(0, b.held());
        assertEquals(0, b.active());
    }
}
