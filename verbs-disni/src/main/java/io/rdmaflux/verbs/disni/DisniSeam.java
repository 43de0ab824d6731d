package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCRegMr;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * {@link RdmaSeam} over DiSNI 2.0: each method is one DiSNI call ({@code RdmaEventChannel},
 * {@code RdmaCmId}, {@code IbvContext}, {@code IbvPd}, {@code IbvCQ}, {@code IbvQP}), which is one JNI
 * call into libdisni and librdmacm/libibverbs.
 *
 * <p><b>State, plainly:</b> compiled against the real DiSNI jar, never executed on the machines this
 * project builds on (no libdisni, no RDMA device; see the module README for how to run it on one).
 *
 * <p>Private data goes through one 56-byte direct buffer per id ({@code rdma_connect} and
 * {@code rdma_accept} copy it before returning). Timers DiSNI cannot set ({@link RdmaSeam.QpTimers}) are
 * ignored: the NIC uses the CM's ACK timeout and rdma_cm's minimum RNR timer.
 */
final class DisniSeam implements RdmaSeam {
    /** {@code rdma_create_id}'s port space: RDMA_PS_TCP (reliable connected). */
    private static final short PS_TCP = RdmaCm.RDMA_PS_TCP;

    @Override
    public EventChannel createEventChannel() throws IOException {
        return new Channel(RdmaEventChannel.createEventChannel());
    }

    private static final class Channel implements EventChannel {
        private final RdmaEventChannel channel;
        // DiSNI hands back its own RdmaCmId objects in events; map them to ours (a CONNECT_REQUEST brings a new one)
        private final Map<RdmaCmId, Id> ids = new ConcurrentHashMap<>();

        Channel(RdmaEventChannel channel) {
            this.channel = channel;
        }

        @Override
        public CmId createId() throws IOException {
            return wrap(channel.createId(PS_TCP));
        }

        private Id wrap(RdmaCmId native_) {
            return ids.computeIfAbsent(native_, n -> new Id(n, this));
        }

        @Override
        public @Nullable CmEvent poll(int timeoutMs) throws IOException {
            RdmaCmEvent event = channel.getCmEvent(timeoutMs);
            if (event == null) {
                return null;
            }
            try {
                RdmaCmId listen = event.getListenIdPriv();
                RdmaCmId conn = event.getConnIdPriv() != null ? event.getConnIdPriv() : listen;
                if (conn == null) {
                    return null; // an event about no id this provider knows (acked below)
                }
                byte[] privateData = new byte[0];
                RdmaConnParam param = event.getConn();
                if (param != null && param.getPrivate_data() != 0 && param.getPrivate_data_len() > 0) {
                    privateData = new byte[param.getPrivate_data_len() & 0xFF];
                    new UnsafeBuffer(param.getPrivate_data(), privateData.length).getBytes(0, privateData);
                }
                return new CmEvent(event.getEvent(), event.getStatus(), wrap(conn), listen == null || listen == conn ? null : wrap(listen), privateData);
            } finally {
                event.ackEvent();
            }
        }

        @Override
        public void destroy() throws IOException {
            channel.destroyEventChannel();
        }
    }

    private static final class Id implements CmId {
        private final RdmaCmId id;
        private final Channel channel;
        private final ByteBuffer privateData = ByteBuffer.allocateDirect(NativeCodes.MAX_PRIVATE_DATA);

        Id(RdmaCmId id, Channel channel) {
            this.id = id;
            this.channel = channel;
        }

        @Override
        public void bindAddr(InetSocketAddress address) throws IOException {
            id.bindAddr(address);
        }

        @Override
        public void listen(int backlog) throws IOException {
            id.listen(backlog);
        }

        @Override
        public InetSocketAddress source() throws IOException {
            SocketAddress a = id.getSource();
            if (!(a instanceof InetSocketAddress inet)) {
                throw new IOException("rdma_get_local_addr returned " + a + ", not an IP socket address");
            }
            return inet;
        }

        @Override
        public void resolveAddr(InetSocketAddress source, InetSocketAddress destination, int timeoutMs) throws IOException {
            id.resolveAddr(source, destination, timeoutMs);
        }

        @Override
        public void resolveRoute(int timeoutMs) throws IOException {
            id.resolveRoute(timeoutMs);
        }

        @Override
        public Context context() throws IOException {
            IbvContext verbs = id.getVerbs();
            if (verbs == null) {
                throw new IOException("rdma_cm id is not bound to a device (id->verbs is NULL): bind or resolve it first");
            }
            return new Ctx(verbs);
        }

        @Override
        public Qp createQp(Pd pd, Cq cq, IbvQPInitAttr attributes, QpTimers timers) throws IOException {
            IbvCQ native_ = ((Completions) cq).cq();
            attributes.setSend_cq(native_);
            attributes.setRecv_cq(native_);
            IbvQP qp = id.createQP(((Protection) pd).pd, attributes);
            if (qp == null) {
                throw new IOException("rdma_create_qp failed (max_send_wr " + attributes.cap().getMax_send_wr()
                    + ", max_recv_wr " + attributes.cap().getMax_recv_wr() + ", max_inline_data "
                    + attributes.cap().getMax_inline_data() + "): lower them to what the device supports");
            }
            return new QueuePair(qp);
        }

        private RdmaConnParam param(ConnParams p) throws IOException {
            RdmaConnParam param = new RdmaConnParam();
            privateData.clear();
            privateData.put(p.privateData());
            param.setPrivate_data(BufferUtil.address(privateData));
            param.setPrivate_data_len((byte) p.privateData().length);
            param.setRetry_count((byte) p.retryCount());
            param.setRnr_retry_count((byte) p.rnrRetryCount());
            // RDMA_MAX_INIT_DEPTH / RDMA_MAX_RESP_RES (0xFF): librdmacm substitutes the device's own maximum of
            // outstanding RDMA READs; a fixed number above it would make rdma_connect/rdma_accept fail with EINVAL
            param.setInitiator_depth((byte) 0xFF);
            param.setResponder_resources((byte) 0xFF);
            return param;
        }

        @Override
        public void connect(ConnParams params) throws IOException {
            id.connect(param(params));
        }

        @Override
        public void accept(ConnParams params) throws IOException {
            id.accept(param(params));
        }

        @Override
        public void disconnect() throws IOException {
            int ret = id.disconnect();
            if (ret != 0) {
                throw new IOException("rdma_disconnect returned " + ret);
            }
        }

        @Override
        public void destroyQp() throws IOException {
            id.destroyQP();
        }

        @Override
        public void destroy() throws IOException {
            channel.ids.remove(id);
            id.destroyId();
        }
    }

    private record Ctx(IbvContext context) implements Context {
        @Override
        public Pd allocPd() throws IOException {
            return new Protection(context.allocPd());
        }

        @Override
        public Cq createCq(int entries) throws IOException {
            IbvCompChannel channel = context.createCompChannel();
            return new Completions(context.createCQ(channel, entries, 0), channel);
        }
    }

    private record Protection(IbvPd pd) implements Pd {
        @Override
        public Mr regMr(ByteBuffer buffer, int access) throws IOException {
            SVCRegMr call = pd.regMr(buffer, access).execute();
            IbvMr mr = call.getMr();
            call.free();
            if (mr == null) {
                throw new IOException("ibv_reg_mr failed for " + buffer.remaining() + " bytes (access 0x" + Integer.toHexString(access)
                    + "): check ulimit -l (locked memory) and the device's max_mr_size");
            }
            return new Region(mr);
        }

        @Override
        public void dealloc() throws IOException {
            try {
                pd.deallocPd();
            } catch (IOException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException("ibv_dealloc_pd: " + e, e);
            }
        }
    }

    private record Region(IbvMr mr) implements Mr {
        @Override
        public long address() {
            return mr.getAddr();
        }

        @Override
        public int length() {
            return mr.getLength();
        }

        @Override
        public int lkey() {
            return mr.getLkey();
        }

        @Override
        public int rkey() {
            return mr.getRkey();
        }

        @Override
        public void dereg() throws IOException {
            mr.deregMr().execute().free();
        }
    }

    private record Completions(IbvCQ cq, IbvCompChannel channel) implements Cq {
        @Override
        public SVCPollCq poll(IbvWC[] wcs) throws IOException {
            return cq.poll(wcs, wcs.length);
        }

        @Override
        public void destroy() throws IOException {
            cq.destroyCQ();
            channel.destroyCompChannel();
        }
    }

    private record QueuePair(IbvQP qp) implements Qp {
        @Override
        public int qpNum() throws IOException {
            return qp.getQp_num();
        }

        @Override
        public SVCPostSend postSend(List<IbvSendWR> wrs) throws IOException {
            return qp.postSend(wrs, null);
        }

        @Override
        public SVCPostRecv postRecv(List<IbvRecvWR> wrs) throws IOException {
            return qp.postRecv(wrs, null);
        }
    }
}
