package io.rdmaflux.core.frame;

/**
 * The frame types of the rdmaflux wire protocol. The numeric {@link #code()} is what travels in the
 * {@link FrameHeader#TYPE_OFFSET type} byte of every frame.
 *
 * <ul>
 *   <li>{@link #DATA}: one fragment of an application message; consumes one credit.</li>
 *   <li>{@link #CREDIT}: an explicit credit update when credit accumulated and no reverse traffic
 *       carried it piggybacked (seed 001 &sect;3.1); consumes no credit.</li>
 *   <li>{@link #CLOSE}: the sender will send no more DATA (graceful) or is aborting; consumes no
 *       credit. One per subchannel, like the FIN of seed 000 &sect;5.3.</li>
 * </ul>
 */
public enum FrameType {
    DATA(1),
    CREDIT(2),
    CLOSE(3);

    private static final FrameType[] BY_CODE = {null, DATA, CREDIT, CLOSE};

    private final int code;

    FrameType(int code) {
        this.code = code;
    }

    /** The code carried on the wire, in [1, 255]. */
    public int code() {
        return code;
    }

    /** Whether a frame of this type consumes one of the peer's receive credits. */
    public boolean consumesCredit() {
        return this == DATA;
    }

    /**
     * The type with the given wire code.
     *
     * @throws FrameFormatException if no type has that code
     */
    public static FrameType fromCode(int code) {
        if (code <= 0 || code >= BY_CODE.length) {
            throw new FrameFormatException("unknown frame type code " + code + "; known codes are 1 (DATA), 2 (CREDIT), 3 (CLOSE)");
        }
        FrameType t = BY_CODE[code];
        if (t == null) {
            throw new FrameFormatException("unknown frame type code " + code);
        }
        return t;
    }
}
