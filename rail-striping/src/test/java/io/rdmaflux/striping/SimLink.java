package io.rdmaflux.striping;

import java.util.ArrayDeque;

/**
 * One direction of a simulated rail (or a resource shared by both directions, as the PCI-X bus of
 * seed 000 §6.3): a FIFO server whose rate is a token bucket one packet deep, so a rate change
 * takes effect at the next packet. A transfer's arrival is the end of its last packet plus the
 * one-way latency; its sender-side completion (the RC acknowledgement) comes one latency later.
 */
final class SimLink {
    private static final class Job {
        long remaining;
        final long generation;
        final Runnable arrived;
        final Runnable acked;

        Job(long bytes, long generation, Runnable arrived, Runnable acked) {
            this.remaining = bytes;
            this.generation = generation;
            this.arrived = arrived;
            this.acked = acked;
        }
    }

    private final VirtualTimeLoop loop;
    private final String name;
    private final long packetBytes;
    private final ArrayDeque<Job> queue = new ArrayDeque<>();
    private long rateBytesPerSec;
    private long latencyNs;
    private boolean busy;
    private boolean alive = true;
    private long generation;
    private long bytesSent;

    SimLink(VirtualTimeLoop loop, String name, long rateBytesPerSec, long latencyNs, long packetBytes) {
        this.loop = loop;
        this.name = name;
        this.rateBytesPerSec = rateBytesPerSec;
        this.latencyNs = latencyNs;
        this.packetBytes = packetBytes;
    }

    /** Queues {@code bytes}; {@code arrived} runs at the receiver, {@code acked} at the sender. */
    void transmit(long bytes, Runnable arrived, Runnable acked) {
        if (!alive) {
            return;
        }
        queue.add(new Job(bytes, generation, arrived, acked));
        if (!busy) {
            nextPacket();
        }
    }

    private void nextPacket() {
        Job job = queue.peek();
        if (job == null) {
            busy = false;
            return;
        }
        busy = true;
        long packet = Math.min(packetBytes, job.remaining);
        long serviceNs = Math.max(1, (packet * 1_000_000_000L + rateBytesPerSec - 1) / rateBytesPerSec);
        long gen = generation;
        loop.after(serviceNs, () -> {
            if (gen != generation) {
                return;
            }
            bytesSent += packet;
            job.remaining -= packet;
            if (job.remaining <= 0) {
                queue.poll();
                long lat = latencyNs;
                loop.after(lat, () -> {
                    if (job.generation == generation) {
                        job.arrived.run();
                        loop.after(lat, () -> {
                            if (job.generation == generation) {
                                job.acked.run();
                            }
                        });
                    }
                });
            }
            nextPacket();
        });
    }

    void rateBytesPerSec(long rate) {
        this.rateBytesPerSec = rate;
    }

    long rateBytesPerSec() {
        return rateBytesPerSec;
    }

    long latencyNs() {
        return latencyNs;
    }

    /** Takes the link down: everything queued or in flight is lost, no callback runs any more. */
    void kill() {
        alive = false;
        generation++;
        queue.clear();
        busy = false;
    }

    boolean alive() {
        return alive;
    }

    long bytesSent() {
        return bytesSent;
    }

    @Override
    public String toString() {
        return name + "{" + rateBytesPerSec + " B/s, " + latencyNs + " ns}";
    }
}
