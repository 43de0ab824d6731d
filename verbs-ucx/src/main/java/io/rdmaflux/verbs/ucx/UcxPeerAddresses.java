package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.VerbsException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The UCX worker addresses one side of a {@link UcxConnectionManager} exchange announces: a trailer
 * appended to the {@link CmParams#privateData() private data} of the REQUEST and the ACCEPT, and
 * stripped again before the application (the node's handshake) sees it. {@code rdma_cm} carries the
 * QP's GID in its own header; here the CM's wire is the soft IP fabric's ({@code CmCodec}), which
 * has no field for it, so it travels in the private data, as the plan suggests.
 *
 * <pre>
 *  application private data (any length)
 *  per device: u16 name length, name (UTF-8), u8 ports, u16 address length, UCP worker address
 *  u16 device count | u32 trailer length (the per-device part, bytes) | u32 magic "UCXA"      (big-endian)
 * </pre>
 *
 * <p><b>Errors:</b> {@link #append} throws a {@link VerbsException} when the private data and the
 * trailer together exceed {@link ConnectionManager#MAX_PRIVATE_DATA_BYTES}; {@link #strip} throws one
 * naming the fault when the trailer is missing (the peer is not a {@code ucx} provider with
 * {@code cm=tcp}) or malformed.
 *
 * <p><b>Concurrency:</b> stateless; thread-safe.
 */
final class UcxPeerAddresses {
    static final int MAGIC = 0x55435841; // "UCXA"
    /** The fixed tail: device count, trailer length, magic. */
    static final int TAIL_BYTES = 2 + 4 + 4;

    private UcxPeerAddresses() {
    }

    /** One announced device. */
    record Device(String name, int ports, byte[] workerAddress) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Device d && d.name.equals(name) && d.ports == ports && Arrays.equals(d.workerAddress, workerAddress);
        }

        @Override
        public int hashCode() {
            return name.hashCode() * 31 + Arrays.hashCode(workerAddress);
        }
    }

    /** What {@link #strip} found: the application's params and the peer's devices. */
    record Stripped(CmParams params, List<Device> devices) {
    }

    /**
     * {@code params} with {@code devices} appended to its private data.
     *
     * @throws VerbsException when the result would exceed the private-data limit
     */
    static CmParams append(CmParams params, List<Device> devices) {
        byte[] pd = params.privateData();
        int body = 0;
        List<byte[]> names = new ArrayList<>(devices.size());
        for (Device d : devices) {
            byte[] n = d.name().getBytes(StandardCharsets.UTF_8);
            names.add(n);
            body += 2 + n.length + 1 + 2 + d.workerAddress().length;
        }
        int total = pd.length + body + TAIL_BYTES;
        if (total > ConnectionManager.MAX_PRIVATE_DATA_BYTES) {
            throw new VerbsException("the connection's private data (" + pd.length + " bytes) and the UCX worker addresses of "
                + devices.size() + " devices (" + (body + TAIL_BYTES) + " bytes) exceed the " + ConnectionManager.MAX_PRIVATE_DATA_BYTES
                + "-byte private-data limit; use fewer devices per connection or less private data");
        }
        ByteBuffer b = ByteBuffer.allocate(total).put(pd);
        for (int i = 0; i < devices.size(); i++) {
            Device d = devices.get(i);
            b.putShort((short) names.get(i).length).put(names.get(i)).put((byte) d.ports())
                .putShort((short) d.workerAddress().length).put(d.workerAddress());
        }
        b.putShort((short) devices.size()).putInt(body).putInt(MAGIC);
        return new CmParams(params.endpoints(), b.array());
    }

    /**
     * Splits {@code params}' private data into the application's part and the peer's devices.
     *
     * @param from who sent it, for messages
     * @throws VerbsException when the trailer is missing or malformed
     */
    static Stripped strip(CmParams params, Object from) {
        byte[] pd = params.privateData();
        if (pd.length < TAIL_BYTES || ByteBuffer.wrap(pd, pd.length - 4, 4).getInt() != MAGIC) {
            throw new VerbsException("the connection message from " + from + " carries no UCX worker addresses; "
                + "the peer must be a ucx provider with cm=tcp (ucx with cm=jvm, or another provider, cannot reach this one)");
        }
        ByteBuffer tail = ByteBuffer.wrap(pd, pd.length - TAIL_BYTES, TAIL_BYTES);
        int count = tail.getShort() & 0xFFFF;
        int body = tail.getInt();
        int appEnd = pd.length - TAIL_BYTES - body;
        if (body < 0 || appEnd < 0) {
            throw malformed(from, "trailer length " + body + " exceeds the " + pd.length + "-byte private data");
        }
        ByteBuffer b = ByteBuffer.wrap(pd, appEnd, body);
        List<Device> devices = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                byte[] name = new byte[b.getShort() & 0xFFFF];
                b.get(name);
                int ports = b.get() & 0xFF;
                byte[] address = new byte[b.getShort() & 0xFFFF];
                b.get(address);
                devices.add(new Device(new String(name, StandardCharsets.UTF_8), ports, address));
            }
        } catch (BufferUnderflowException e) {
            throw malformed(from, count + " devices announced but the trailer ends after " + devices.size());
        }
        if (b.hasRemaining()) {
            throw malformed(from, b.remaining() + " bytes left after " + count + " devices");
        }
        return new Stripped(new CmParams(params.endpoints(), Arrays.copyOf(pd, appEnd)), devices);
    }

    private static VerbsException malformed(Object from, String what) {
        return new VerbsException("malformed UCX worker addresses from " + from + ": " + what);
    }
}
