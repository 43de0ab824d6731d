package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * A soft NIC's memory key table: which region an lkey or rkey names ({@link SoftMemoryRegion} gives the
 * key layout, {@code index << 8 | generation << 1}, the rkey with bit 0 set).
 *
 * <p><b>A stale key never names a later region.</b> A slot's generation starts at a random value and
 * goes up by one each time the slot is reused; a slot is reused only after every other free slot
 * (first in, first out) and is retired for good after 128 uses, before its 7-bit generation could come
 * round to a value a deregistered region had. (Before this class, slots were reused last in, first out
 * and the generation wrapped: after 128 re-registrations of one slot the next got back the key of the first,
 * so a peer's stale rkey could write the new region.) Retired slots are counted
 * ({@link #retiredSlots()}); a device runs out of keys after about 2^31 registrations, not 16 M live ones.
 *
 * <p><b>Guessing:</b> the random start generation makes a key that was never handed out a 1-in-128
 * guess per slot; each wrong guess costs the guesser its QP (REM_ACCESS_ERR moves it to ERROR) and is
 * counted by the responder. Keys are per device and checked against the QP's protection domain, as in
 * verbs; they are not secrets on the wire of the net fabric (no encryption).
 *
 * <p><b>Concurrency:</b> lookups lock-free from the engine; add/remove under the device's setup lock.
 */
final class SoftKeyTable {
    static final int MAX_INDEX = 0xFFFFFF;
    /** Uses of one slot before it is retired: one per 7-bit generation. */
    static final int USES_PER_SLOT = 128;

    private static final SecureRandom SEEDS = new SecureRandom();

    private final String deviceName;
    private volatile SoftMemoryRegion @Nullable [] regions = new SoftMemoryRegion[64];
    private byte[] generations = new byte[64];
    private byte[] uses = new byte[64];
    private int nextIndex = 1;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private long retired;

    SoftKeyTable(String deviceName) {
        this.deviceName = deviceName;
    }

    /** Registers a region in a free slot; the caller holds the setup lock. */
    SoftMemoryRegion add(SoftProtectionDomain pd, ByteBuffer base, int access, boolean allocated) {
        int index;
        Integer reused = free.pollFirst();
        if (reused != null) {
            index = reused;
        } else {
            index = nextIndex++;
            if (index > MAX_INDEX) {
                nextIndex--;
                throw new VerbsException("device '" + deviceName + "' has no free memory keys (" + MAX_INDEX
                    + " slots in use or retired); deregister some regions, or open a new device");
            }
        }
        SoftMemoryRegion[] table = regions;
        if (index >= table.length) {
            table = Arrays.copyOf(table, Math.max(index + 1, table.length * 2));
            generations = Arrays.copyOf(generations, table.length);
            uses = Arrays.copyOf(uses, table.length);
        }
        if (reused == null) {
            generations[index] = (byte) SEEDS.nextInt(128);
        }
        SoftMemoryRegion mr = new SoftMemoryRegion(pd, base, access, allocated, index, generations[index]);
        table[index] = mr;
        regions = table;
        return mr;
    }

    /** Frees {@code mr}'s slot (for a later region with the next generation, or retires it); setup lock held. */
    void remove(SoftMemoryRegion mr) {
        SoftMemoryRegion[] table = regions;
        if (table[mr.keyIndex] != mr) {
            return;
        }
        table[mr.keyIndex] = null;
        regions = table;
        int used = (uses[mr.keyIndex] & 0xFF) + 1;
        uses[mr.keyIndex] = (byte) used;
        generations[mr.keyIndex] = (byte) ((generations[mr.keyIndex] + 1) & 0x7F);
        if (used >= USES_PER_SLOT) {
            retired++;
        } else {
            free.addLast(mr.keyIndex);
        }
    }

    /** The region {@code key}'s slot holds, or null; the caller compares the full key. Any thread. */
    @Nullable SoftMemoryRegion lookup(int key) {
        SoftMemoryRegion[] table = regions;
        int index = key >>> 8;
        return index < table.length ? table[index] : null;
    }

    /** Slots retired after {@value #USES_PER_SLOT} uses; setup lock (or a racy read). */
    long retiredSlots() {
        return retired;
    }
}
