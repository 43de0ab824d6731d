package io.rdmaflux.core.onesided;

/**
 * A completed access epoch (seed 002 &sect;3.2): every put the origin issued between two fences is in
 * the target's memory, and the target holds the synchronization message of every subchannel the epoch
 * used. The origin's {@link OneSided#fence()} completes with it once the target acknowledged; the target
 * sees it on {@link OneSided#epochs()}.
 *
 * @param number    the epoch's number on its connection and direction, from 0
 * @param puts      puts issued in the epoch
 * @param bytesPut  bytes those puts wrote, bytes
 * @param railMask  the rails (bit r for rail r) that carried the epoch's synchronization messages
 */
public record Epoch(int number, int puts, long bytesPut, long railMask) {
}
