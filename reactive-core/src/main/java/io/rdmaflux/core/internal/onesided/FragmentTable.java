package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.channel.WorkRequestTokens;
import org.jspecify.annotations.Nullable;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The posted fragments by number (the WRITE's tag or the READ's token), so a completion finds its
 * fragment in O(1), and a failed rail's fragments can be found to post them again. Numbers are reused
 * (a free list); the table grows to the most fragments posted at once, which the channels' RDMA budget
 * bounds.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class FragmentTable {
    private @Nullable Fragment[] bySlot = new Fragment[64];
    private int[] free = new int[64];
    private int freeCount;
    private int highWater;
    private int posted;
    private final int[] postedOnRail;

    FragmentTable(int rails) {
        postedOnRail = new int[rails];
    }

    /** Numbers {@code f} and counts it posted on its rail. @return its number */
    int add(Fragment f) {
        int slot;
        if (freeCount > 0) {
            slot = free[--freeCount];
        } else {
            if (highWater == WorkRequestTokens.MAX_FRAGMENT) {
                throw new IllegalStateException("more than 2^28 one-sided fragments posted at once");
            }
            if (highWater == bySlot.length) {
                bySlot = Arrays.copyOf(bySlot, bySlot.length * 2);
                free = Arrays.copyOf(free, free.length * 2);
            }
            slot = highWater++;
        }
        bySlot[slot] = f;
        f.slot = slot;
        posted++;
        postedOnRail[f.rail]++;
        return slot;
    }

    /** Takes the fragment posted under {@code slot} out. @return it, or null if none is (a stale number) */
    @Nullable Fragment remove(int slot) {
        if (slot < 0 || slot >= highWater) {
            return null;
        }
        Fragment f = bySlot[slot];
        if (f == null) {
            return null;
        }
        bySlot[slot] = null;
        free[freeCount++] = slot;
        f.slot = -1;
        posted--;
        postedOnRail[f.rail]--;
        return f;
    }

    /** Takes out every fragment posted on {@code rail} and hands each to {@code taken}. */
    void removeRail(int rail, Consumer<Fragment> taken) {
        for (int s = 0; s < highWater && postedOnRail[rail] > 0; s++) {
            Fragment f = bySlot[s];
            if (f != null && f.rail == rail) {
                remove(s);
                taken.accept(f);
            }
        }
    }

    /** Takes out every fragment and hands each to {@code taken}. */
    void removeAll(Consumer<Fragment> taken) {
        for (int s = 0; s < highWater && posted > 0; s++) {
            Fragment f = bySlot[s];
            if (f != null) {
                remove(s);
                taken.accept(f);
            }
        }
    }

    int posted() {
        return posted;
    }

    int postedOn(int rail) {
        return postedOnRail[rail];
    }
}
