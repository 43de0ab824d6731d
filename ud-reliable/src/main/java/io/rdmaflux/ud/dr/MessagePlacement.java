package io.rdmaflux.ud.dr;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * Where a received message goes instead of a heap array ({@link DrEndpoint#placement(MessagePlacement)}): memory
 * its owner has ready for it (a posted receive, a granted RDMA WRITE window), into which DR copies each VFRAG's
 * payload once it is in order, so the message is copied once on receipt, not reassembled and then copied again.
 *
 * <p>DR asks only for a message whose first VFRAG is at the ESN (CRC32C checked, not a duplicate) while no earlier
 * message waits to be {@linkplain DrEndpoint#poll() polled}, so the message is the next one the owner would place
 * anyway. VFRAGs that arrived ahead of the ESN are held by DR and copied in when their turn comes. Exactly one of
 * {@link #placed()} or {@link #abandoned()} follows a {@link #begin} that returned a destination.
 *
 * <p><b>Concurrency:</b> called on the thread that drives the {@link DrEndpoint}.
 */
public interface MessagePlacement {
    /**
     * A message of {@code messageLength} bytes starts; {@code firstVfrag} holds its first {@code length} bytes at
     * {@code offset} (read them only during this call). Returns where bytes {@code [skipBytes, messageLength)} of the
     * message go (to index 0 onward; at least {@code messageLength - skipBytes} bytes long), or null to have the
     * message reassembled on the heap and polled as before. The first {@code skipBytes} bytes (a header the owner
     * reads here) are placed nowhere.
     */
    @Nullable MutableDirectBuffer begin(int messageLength, DirectBuffer firstVfrag, int offset, int length);

    /** Leading bytes of a message {@link #begin} does not place, in [0, first VFRAG's length]. */
    int skipBytes();

    /** The message {@link #begin} took is whole in its destination, in order. */
    void placed();

    /** The message {@link #begin} took will not be completed (the endpoint failed, a protocol error): its destination holds partial bytes. */
    void abandoned();
}
