package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The verbs.h / rdma_cma.h tables: against the spec's numbers, against DiSNI's own constants, and both ways. */
class NativeCodesTest {
    @Test
    void everyNativeStatusMapsToItsSpiStatus() {
        Map<Integer, WcStatus> expected = Map.ofEntries(
            Map.entry(0, WcStatus.SUCCESS), Map.entry(1, WcStatus.LOC_LEN_ERR), Map.entry(2, WcStatus.LOC_QP_OP_ERR),
            Map.entry(3, WcStatus.LOC_QP_OP_ERR), Map.entry(4, WcStatus.LOC_PROT_ERR), Map.entry(5, WcStatus.WR_FLUSH_ERR),
            Map.entry(6, WcStatus.LOC_PROT_ERR), Map.entry(7, WcStatus.GENERAL_ERR), Map.entry(8, WcStatus.LOC_PROT_ERR),
            Map.entry(9, WcStatus.REM_INV_REQ_ERR), Map.entry(10, WcStatus.REM_ACCESS_ERR), Map.entry(11, WcStatus.REM_OP_ERR),
            Map.entry(12, WcStatus.RETRY_EXC_ERR), Map.entry(13, WcStatus.RNR_RETRY_EXC_ERR), Map.entry(14, WcStatus.GENERAL_ERR),
            Map.entry(15, WcStatus.REM_INV_REQ_ERR), Map.entry(16, WcStatus.REM_OP_ERR), Map.entry(17, WcStatus.GENERAL_ERR),
            Map.entry(18, WcStatus.GENERAL_ERR), Map.entry(19, WcStatus.GENERAL_ERR), Map.entry(20, WcStatus.RETRY_EXC_ERR),
            Map.entry(21, WcStatus.GENERAL_ERR));
        expected.forEach((code, status) -> assertEquals(status, NativeCodes.status(code), () -> NativeCodes.statusName(code)));
        assertEquals(WcStatus.GENERAL_ERR, NativeCodes.status(22), "unknown codes are general errors");
        assertEquals(WcStatus.GENERAL_ERR, NativeCodes.status(-1));
    }

    @Test
    void statusNumbersAndNamesAreDisnisOwn() {
        for (IbvWC.IbvWcStatus s : IbvWC.IbvWcStatus.values()) {
            assertEquals(s.name(), NativeCodes.statusName(s.ordinal()), "DiSNI's ordinal is the verbs.h number");
        }
        assertEquals(IbvWC.IbvWcStatus.values().length, 22);
        assertEquals("IBV_WC_RETRY_EXC_ERR", NativeCodes.statusName(NativeCodes.WC_RETRY_EXC_ERR));
        assertEquals("IBV_WC_REM_ACCESS_ERR", NativeCodes.statusName(NativeCodes.WC_REM_ACCESS_ERR));
        assertEquals("IBV_WC_WR_FLUSH_ERR", NativeCodes.statusName(NativeCodes.WC_WR_FLUSH_ERR));
    }

    @Test
    void spiStatusesRoundTripThroughTheirNativeCodes() {
        for (WcStatus s : WcStatus.values()) {
            assertEquals(s, NativeCodes.status(NativeCodes.nativeStatus(s)), s::name);
        }
    }

    @Test
    void errorDetailsNameTheStatusWhatItMeansAndTheVendorError() {
        String d = NativeCodes.describe(NativeCodes.WC_LOC_PROT_ERR, 0x81);
        assertTrue(d.startsWith("IBV_WC_LOC_PROT_ERR: ") && d.contains("outside its region") && d.endsWith("(vendor_err 0x81)"), d);
        assertTrue(NativeCodes.describe(NativeCodes.WC_RETRY_EXC_ERR, 0).contains("peer or the path is gone"));
        assertTrue(NativeCodes.describe(99, 0).contains("99"));
    }

    @Test
    void completionOpcodesAreDisnisAndRoundTrip() {
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_SEND.getOpcode(), NativeCodes.WC_SEND);
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RDMA_WRITE.getOpcode(), NativeCodes.WC_RDMA_WRITE);
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RDMA_READ.getOpcode(), NativeCodes.WC_RDMA_READ);
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode(), NativeCodes.WC_RECV);
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode(), NativeCodes.WC_RECV_RDMA_WITH_IMM);
        for (WcOpcode op : WcOpcode.values()) {
            assertEquals(op, NativeCodes.opcode(NativeCodes.nativeWcOpcode(op)));
        }
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_FETCH_ADD.getOpcode(), NativeCodes.WC_FETCH_ADD);
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_COMP_SWAP.getOpcode(), NativeCodes.WC_COMP_SWAP);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> NativeCodes.opcode(IbvWC.IbvWcOpcode.IBV_WC_BIND_MW.getOpcode()));
        assertTrue(e.getMessage().contains("5"), e.getMessage());
    }

    @Test
    void workRequestOpcodesFlagsAndAccessAreDisnisAndRoundTrip() {
        assertEquals(IbvSendWR.IBV_WR_SEND, NativeCodes.wrOpcode(WrOpcode.SEND));
        assertEquals(IbvSendWR.IBV_WR_SEND_WITH_IMM, NativeCodes.wrOpcode(WrOpcode.SEND_WITH_IMM));
        assertEquals(IbvSendWR.IBV_WR_RDMA_WRITE, NativeCodes.wrOpcode(WrOpcode.RDMA_WRITE));
        assertEquals(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, NativeCodes.wrOpcode(WrOpcode.RDMA_WRITE_WITH_IMM));
        assertEquals(IbvSendWR.IBV_WR_RDMA_READ, NativeCodes.wrOpcode(WrOpcode.RDMA_READ));
        assertEquals(IbvSendWR.IBV_WR_ATOMIC_CMP_AND_SWP, NativeCodes.wrOpcode(WrOpcode.ATOMIC_CMP_AND_SWP));
        assertEquals(IbvSendWR.IBV_WR_ATOMIC_FETCH_AND_ADD, NativeCodes.wrOpcode(WrOpcode.ATOMIC_FETCH_AND_ADD));
        for (WrOpcode op : WrOpcode.values()) {
            assertEquals(op, NativeCodes.wrOpcode(NativeCodes.wrOpcode(op)));
        }
        assertEquals(IbvSendWR.IBV_SEND_SIGNALED, NativeCodes.SEND_SIGNALED);
        assertEquals(IbvSendWR.IBV_SEND_INLINE, NativeCodes.SEND_INLINE);
        assertEquals(IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ
            | IbvMr.IBV_ACCESS_REMOTE_ATOMIC, NativeCodes.access(Access.ALL));
        assertEquals(IbvMr.IBV_ACCESS_REMOTE_READ, NativeCodes.access(Access.REMOTE_READ));
        assertEquals(0, NativeCodes.access(0));
        for (int a = 0; a <= Access.ALL; a++) {
            assertEquals(a, NativeCodes.spiAccess(NativeCodes.access(a)));
        }
        assertEquals(IbvQP.IBV_QPT_RC, NativeCodes.QPT_RC);
        assertEquals(WcOpcode.RDMA_WRITE, NativeCodes.sendCompletionOpcode(WrOpcode.RDMA_WRITE_WITH_IMM));
        assertEquals(WcOpcode.SEND, NativeCodes.sendCompletionOpcode(WrOpcode.SEND_WITH_IMM));
    }

    @Test
    void cmEventNumbersAreDisnisOrdinals() {
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal(), NativeCodes.CM_ADDR_RESOLVED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal(), NativeCodes.CM_ADDR_ERROR);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal(), NativeCodes.CM_ROUTE_RESOLVED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal(), NativeCodes.CM_ROUTE_ERROR);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal(), NativeCodes.CM_CONNECT_REQUEST);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal(), NativeCodes.CM_CONNECT_ERROR);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal(), NativeCodes.CM_UNREACHABLE);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal(), NativeCodes.CM_REJECTED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal(), NativeCodes.CM_ESTABLISHED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal(), NativeCodes.CM_DISCONNECTED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL.ordinal(), NativeCodes.CM_DEVICE_REMOVAL);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_TIMEWAIT_EXIT.ordinal(), NativeCodes.CM_TIMEWAIT_EXIT);
        for (RdmaCmEvent.EventType t : RdmaCmEvent.EventType.values()) {
            assertEquals(t.name(), NativeCodes.cmEventName(t.ordinal()));
        }
    }

    @Test
    void immediateDataIsBigEndianOnTheWire() {
        int host = 0x11223344;
        int wire = NativeCodes.toWireImmediate(host);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.nativeOrder()).putInt(0, wire);
        assertEquals(0x11, b.get(0), "the first byte in memory is the most significant (__be32)");
        assertEquals(host, NativeCodes.fromWireImmediate(wire));
    }
}
