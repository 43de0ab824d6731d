package io.rdmaflux.samples;

import org.agrona.DirectBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The record mode's aggregation: each line is a record, its fields are the runs of letters and
 * digits in it (lower-cased ASCII); counts records, fields and how often each field occurs.
 * Single-threaded: one consumer feeds it.
 */
public final class WordCounts {
    private final Map<String, long[]> counts = new HashMap<>();
    private final StringBuilder word = new StringBuilder(32);
    private long records;
    private long fields;

    /** Adds every record of {@code lengthBytes} bytes of {@code buffer} (chunks end on a line boundary). */
    public void add(DirectBuffer buffer, int lengthBytes) {
        for (int i = 0; i < lengthBytes; i++) {
            byte b = buffer.getByte(i);
            if ((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9')) {
                word.append((char) b);
            } else if (b >= 'A' && b <= 'Z') {
                word.append((char) (b + ('a' - 'A')));
            } else {
                endWord();
                if (b == '\n') {
                    records++;
                }
            }
        }
        endWord();
    }

    /** Adds the records of a text chunk (the Kotlin pipeline reads strings). */
    public void add(CharSequence text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                word.append(c);
            } else if (c >= 'A' && c <= 'Z') {
                word.append((char) (c + ('a' - 'A')));
            } else {
                endWord();
                if (c == '\n') {
                    records++;
                }
            }
        }
        endWord();
    }

    private void endWord() {
        if (word.length() > 0) {
            counts.computeIfAbsent(word.toString(), k -> new long[1])[0]++;
            fields++;
            word.setLength(0);
        }
    }

    public long records() {
        return records;
    }

    public long fields() {
        return fields;
    }

    public int distinct() {
        return counts.size();
    }

    /** The {@code n} most frequent fields, most frequent first (ties by name). */
    public List<Map.Entry<String, Long>> top(int n) {
        List<Map.Entry<String, Long>> all = new ArrayList<>(counts.size());
        counts.forEach((k, v) -> all.add(Map.entry(k, v[0])));
        all.sort((a, b) -> a.getValue().equals(b.getValue()) ? a.getKey().compareTo(b.getKey()) : Long.compare(b.getValue(), a.getValue()));
        return all.subList(0, Math.min(n, all.size()));
    }
}
