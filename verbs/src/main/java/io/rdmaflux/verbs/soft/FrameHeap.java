package io.rdmaflux.verbs.soft;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Frames waiting for their arrival time: a binary min-heap on {@code (deliverAtNs, arrivalSeq)},
 * so frames due at the same time keep their arrival order. Grows only while more frames are in
 * flight than ever before. Engine thread only.
 */
final class FrameHeap {
    private SoftFrame[] heap = new SoftFrame[64];
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    void add(SoftFrame f) {
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            SoftFrame p = heap[parent];
            if (!before(f, p)) {
                break;
            }
            heap[i] = p;
            i = parent;
        }
        heap[i] = f;
    }

    @Nullable SoftFrame peek() {
        return size == 0 ? null : heap[0];
    }

    @Nullable SoftFrame poll() {
        if (size == 0) {
            return null;
        }
        SoftFrame top = heap[0];
        SoftFrame last = heap[--size];
        heap[size] = null;
        if (size > 0) {
            int i = 0;
            while (true) {
                int c = 2 * i + 1;
                if (c >= size) {
                    break;
                }
                if (c + 1 < size && before(heap[c + 1], heap[c])) {
                    c++;
                }
                if (!before(heap[c], last)) {
                    break;
                }
                heap[i] = heap[c];
                i = c;
            }
            heap[i] = last;
        }
        return top;
    }

    private static boolean before(SoftFrame a, SoftFrame b) {
        long d = a.deliverAtNs - b.deliverAtNs;
        return d < 0 || (d == 0 && a.arrivalSeq < b.arrivalSeq);
    }
}
