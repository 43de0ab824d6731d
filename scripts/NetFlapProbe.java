import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One RC QP over one rail of the net fabric, for scripts/net-flap-probe.sh (issue 20): role "recv" (host B)
 * answers every SEND with its ACK; role "send" (host A) posts a 64-byte SEND every 10 ms (at most 64
 * outstanding) and prints "ack EPOCH_MS" for every completion, so the script can tell when traffic flows
 * again after a link comes back. The endpoints are exchanged through files in DIR.
 *
 * <pre>java -cp CLASSES:JARS scripts/NetFlapProbe.java send|recv LOCAL_IP PEER_DIR SECONDS RETRY_TIMEOUT_MS</pre>
 *
 * The QP retries 7 times, so it fails if no ACK comes for 8 retry timeouts.
 */
public final class NetFlapProbe {
    /** The renewal counters where the transport has them (not before issue 20's fix). */
    static String stats(Object t) {
        try {
            return ", renewed " + t.getClass().getMethod("streamsRenewed").invoke(t) + ", renewed by peer "
                + t.getClass().getMethod("streamsRenewedByPeer").invoke(t);
        } catch (ReflectiveOperationException e) {
            return "";
        }
    }

    public static void main(String[] args) throws Exception {
        boolean send = args[0].equals("send");
        String ip = args[1];
        Path dir = Path.of(args[2]);
        long end = System.nanoTime() + Long.parseLong(args[3]) * 1_000_000_000L;
        NetTransportConfig cfg = NetTransportConfig.builder().address(ip).basePort(send ? 7611 : 7612).build();
        try (RdmaProvider p = NetProviders.builder(cfg).name(args[0]).build()) {
            ProtectionDomain pd = p.devices().get(0).allocateProtectionDomain();
            CompletionQueue cq = p.devices().get(0).createCompletionQueue(1024);
            MemoryRegion mr = pd.allocateMemory(64 * 512, Access.LOCAL_WRITE);
            QueuePair qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, p.devices().get(0).port(1)).cq(cq)
                .maxSendWr(256).maxReceiveWr(512).retryTimeoutNs(Long.parseLong(args[4]) * 1_000_000L).retryCount(7).build());
            QpEndpoint me = qp.localEndpoint();
            qp.init();
            if (!send) {
                for (int i = 0; i < 512; i++) {
                    qp.postReceive(new ReceiveWorkRequest().wrId(i).sge(mr, 64L * i, 64));
                }
            }
            Files.writeString(dir.resolve(args[0] + ".ep"), me.address().host() + " " + me.address().port() + " " + me.qpn() + " " + me.startPsn()
                + " " + me.mtuBytes());
            Path peerFile = dir.resolve(send ? "recv.ep" : "send.ep");
            while (!Files.exists(peerFile) || Files.readString(peerFile).split(" ").length < 5) {
                Thread.sleep(20);
            }
            String[] e = Files.readString(peerFile).trim().split(" ");
            QpEndpoint peer = new QpEndpoint(new PortAddress("net", e[0], Integer.parseInt(e[1])), Integer.parseInt(e[2]),
                Integer.parseInt(e[3]), Integer.parseInt(e[4]));
            qp.connect(peer);
            if (send) {
                // the receiver is listening once it wrote its file; give its connect a moment
                Thread.sleep(500);
            }
            System.out.println(args[0] + ": connected " + me + " -> " + peer);
            int outstanding = 0;
            long nextSendNs = System.nanoTime();
            while (System.nanoTime() - end < 0) {
                if (send && outstanding < 64 && System.nanoTime() - nextSendNs >= 0) {
                    if (qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 64))) {
                        outstanding++;
                    }
                    nextSendNs += 10_000_000L;
                }
                int[] got = {0};
                cq.poll(64, wc -> {
                    if (wc.status() != WcStatus.SUCCESS) {
                        System.out.println(args[0] + ": FAILED " + wc);
                        System.exit(1);
                    }
                    got[0]++;
                    if (!send) {
                        qp.postReceive(new ReceiveWorkRequest().wrId(wc.wrId()).sge(mr, 64L * wc.wrId(), 64));
                    }
                });
                if (send && got[0] > 0) {
                    outstanding -= got[0];
                    System.out.println("ack " + System.currentTimeMillis());
                }
                if (got[0] == 0) {
                    Thread.sleep(1);
                }
            }
            if (((io.rdmaflux.verbs.soft.SoftProvider) p).fabric().transport() instanceof io.rdmaflux.verbs.soft.net.NetTransport t) {
                System.out.println(args[0] + ": done; streams opened " + t.streamsOpened() + ", broken " + t.streamsBroken()
                    + ", frames dropped on broken streams " + t.framesDroppedOnBrokenStreams() + stats(t));
            }
        }
    }
}
