package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.ScatterGatherEntry;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The producer side of a QP's send queue ({@link SoftQueuePair#postSend}): checks a work request,
 * copies it into the next {@link SendRing} slot (an inline payload into the slot's inline area,
 * {@link SendSges#copyInline}), publishes the slot with a release store of the ring's tail and rings
 * the QP's doorbell. Returns false when {@code maxSendWr} work requests are outstanding; below that, a
 * full ring grows ({@link SendRing#producerSlots}).
 *
 * <p>Programming errors throw {@link VerbsException} and post nothing: a QP not in RTS or ERROR, an
 * opcode UD does not have, a UD send without a valid address handle of the QP's protection domain, a
 * negative SGE length, an inline READ or atomic, an inline payload above {@code maxInlineBytes}, an
 * atomic on a device without atomics. Errors a NIC reports by completion are recorded in the slot
 * ({@link SendRing#markError}) and completed by the engine, never sent: a message above the device's
 * maximum (LOC_LEN_ERR); an atomic without exactly one 8-byte SGE (LOC_LEN_ERR) or with an unaligned
 * remote address (LOC_QP_OP_ERR); an inline SGE that fails its protection check (LOC_PROT_ERR).
 *
 * <h2>Atomics</h2>
 * Checked at post time: an RC QP on a device with {@code atomics}, not inline (else
 * {@link VerbsException}); one SGE of exactly 8 bytes and an 8-byte aligned remote address, as a
 * completion, never sent.
 *
 * <p>Thread-safety: any thread. Posters are serialized by a spin lock held only for the copy (never
 * across a blocking call); with the provider's single-thread domain
 * ({@link SoftProvider.Builder#threadDomain(boolean)}) there is one poster and no lock is taken.
 */
final class SendPoster {
    private static final long MAX_MESSAGE_BYTES = SoftDevice.CAPABILITIES.maxMessageBytes();

    private final SoftQueuePair qp;
    private final SoftDevice device;
    private final SoftProtectionDomain pd;
    private final QpType type;
    private final int qpn;
    private final SendRing sq;
    private final SendSges sges;
    private final AtomicBoolean postLock = new AtomicBoolean();
    private final boolean singlePoster;

    SendPoster(SoftQueuePair qp, SoftDevice device, SoftProtectionDomain pd, SendRing sq, SendSges sges, boolean singlePoster) {
        this.qp = qp;
        this.device = device;
        this.pd = pd;
        this.type = qp.type();
        this.qpn = qp.qpn;
        this.sq = sq;
        this.sges = sges;
        this.singlePoster = singlePoster;
    }

    /** Posts {@code wr}; false when the send queue is full (see the class Javadoc for what throws). */
    boolean post(SendWorkRequest wr) {
        // A spin lock rather than a monitor: one CAS to take it, a release store to drop it, and it is
        // only ever held for the copy into the ring (never across a blocking call).
        while (!singlePoster && !postLock.compareAndSet(false, true)) {
            Thread.onSpinWait();
        }
        try {
            qp.checkSendPostable();
            WrOpcode op = wr.opcode();
            SoftAddressHandle ah = null;
            if (type == QpType.UD) {
                if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                    throw new VerbsException("UD QP " + qpn + " cannot post " + op + "; UD supports SEND and SEND_WITH_IMM only");
                }
                AddressHandle a = wr.addressHandle();
                if (a == null) {
                    throw new VerbsException("a UD send needs a destination; call wr.ud(addressHandle, remoteQpn, remoteQkey)");
                }
                if (!(a instanceof SoftAddressHandle sa) || sa.pd() != pd || sa.isClosed()) {
                    throw new VerbsException("address handle " + a + " is closed or from another protection domain; "
                        + "create it with this QP's protection domain");
                }
                ah = sa;
            }
            if (op.isAtomic()) {
                checkAtomicPost(wr);
            }
            long t = sq.tail.get();
            SendRing.Slots p = sq.producerSlots(t);
            if (p == null) {
                return false;
            }
            int n = wr.numSge();
            if (n > p.sgeRows) {
                p = sq.withSgeRows(t, n);
            }
            int slot = (int) t & p.mask;
            long total = 0;
            for (int k = 0; k < n; k++) {
                ScatterGatherEntry e = wr.sge(k);
                int len = e.length();
                if (len < 0) {
                    throw new VerbsException("SGE " + k + " of " + wr + " has negative length " + len);
                }
                total += len;
                int i = p.sgeIndex(slot, k);
                p.sgeAddress[i] = e.address();
                p.sgeLength[i] = len;
                p.sgeLkey[i] = e.lkey();
            }
            boolean inline = wr.inline();
            if (inline) {
                if (op == WrOpcode.RDMA_READ) {
                    throw new VerbsException("RDMA_READ cannot be inline: the read data lands in the SGEs; clear inline(false)");
                }
                if (total > p.inlineStride) {
                    throw new VerbsException("inline payload of " + total + " bytes exceeds QP " + qpn + "'s maxInlineBytes "
                        + p.inlineStride + "; send it without inline or raise maxInlineBytes");
                }
            }
            p.numSge[slot] = n;
            p.wrId[slot] = wr.wrId();
            p.opcode[slot] = (byte) op.ordinal();
            p.signaled[slot] = wr.signaled();
            boolean imm = op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM;
            p.hasImm[slot] = imm;
            if (imm) {
                p.imm[slot] = wr.immediate();
            }
            if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                p.remoteAddress[slot] = wr.remoteAddress();
                p.rkey[slot] = wr.rkey();
            }
            if (op == WrOpcode.RDMA_READ || op.isAtomic()) {
                p.readDone[slot] = false;
            }
            if (op.isAtomic()) {
                p.compareAdd[slot] = wr.compareAdd();
                p.swap[slot] = wr.swap();
            }
            if (type == QpType.UD) {
                if (p.ah[slot] != ah) {
                    p.ah[slot] = ah;
                }
                p.remoteQpn[slot] = wr.remoteQpn();
                p.remoteQkey[slot] = wr.remoteQkey();
            }
            p.inline[slot] = inline;
            p.error[slot] = SendRing.NO_ERROR;
            if (p.errorDetail[slot] != null) {
                p.errorDetail[slot] = null;
            }
            if (total > MAX_MESSAGE_BYTES) {
                p.markError(slot, WcStatus.LOC_LEN_ERR, "message of " + total + " bytes exceeds the device limit of "
                    + MAX_MESSAGE_BYTES + " bytes");
            }
            if (op.isAtomic() && p.error[slot] == SendRing.NO_ERROR) {
                markAtomicError(p, slot, op, n, total, wr.remoteAddress());
            }
            p.length[slot] = (int) Math.min(total, Integer.MAX_VALUE);
            if (wr.inline() && p.error[slot] == SendRing.NO_ERROR) {
                sges.copyInline(p, slot);
            }
            sq.tail.lazySet(t + 1);
            qp.ring();
            return true;
        } finally {
            if (!singlePoster) {
                postLock.lazySet(false);
            }
        }
    }

    /** Post-time refusals of an atomic that are programming errors (thrown, as for the other opcodes). */
    private void checkAtomicPost(SendWorkRequest wr) {
        if (!device.capabilities().atomics()) {
            throw new VerbsException("provider '" + device.provider().name() + "' offers no atomics (device '" + device.name()
                + "' capabilities: atomics=false); " + wr.opcode() + " needs a provider with atomics such as 'soft'");
        }
        if (wr.inline()) {
            throw new VerbsException(wr.opcode() + " cannot be inline: the original value lands in the SGE; clear inline(false)");
        }
    }

    /** Post-time errors of an atomic's shape, completed with a local error status and never sent. */
    private static void markAtomicError(SendRing.Slots p, int slot, WrOpcode op, int numSge, long total, long remoteAddress) {
        if (numSge != 1 || total != Long.BYTES) {
            p.markError(slot, WcStatus.LOC_LEN_ERR, op + " needs exactly one SGE of 8 bytes for the original value but it has "
                + numSge + " SGE(s) of " + total + " bytes; use wr.sge(region, offset, 8)");
        } else if ((remoteAddress & (Long.BYTES - 1)) != 0) {
            p.markError(slot, WcStatus.LOC_QP_OP_ERR, op + " remote address 0x" + Long.toHexString(remoteAddress)
                + " is not 8-byte aligned; atomics act on aligned 8-byte words (round it down to 0x"
                + Long.toHexString(remoteAddress & ~7L) + ")");
        }
    }
}
