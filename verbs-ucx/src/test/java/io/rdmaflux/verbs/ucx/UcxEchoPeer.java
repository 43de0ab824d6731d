package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The child process of {@link UcxTwoProcessTest}: a ucx provider with {@code cm=tcp} over UCX
 * {@code tcp} listening at {@code ucx://127.0.0.1:0} (prints {@code listening at 127.0.0.1:<port>}),
 * accepting one queue pair, and echoing {@link EchoQp#MESSAGES} messages back with SEND, each from the
 * slot it arrived in (a receive is posted on every slot, and reposted when its message arrived).
 * Exits 0 when done, 1 on a failure (message on stderr), 2 after 60 s.
 */
public final class UcxEchoPeer {
    private UcxEchoPeer() {
    }

    public static void main(String[] args) {
        try (UcxProvider p = UcxProvider.builder().name("echo-child").tls("tcp").cm(UcxProvider.Cm.TCP)
                .threadingMode(ThreadingMode.INVOKER).build();
             EchoQp e = new EchoQp(p.devices().get(0))) {
            CompletableFuture<CmParams> accepted = new CompletableFuture<>();
            try (ConnectionManager.Listener l = p.connectionManager().listen(new PortAddress("ucx", "127.0.0.1", 0), (from, request) -> {
                e.qp.connect(request.endpoints().get(0));
                for (int slot = 0; slot < EchoQp.SLOTS; slot++) {
                    e.postReceive(slot);
                }
                CmParams reply = new CmParams(List.of(e.qp.localEndpoint()), new byte[0]);
                accepted.complete(reply);
                return CompletableFuture.completedFuture(reply);
            })) {
                System.out.println("listening at 127.0.0.1:" + l.address().port());
                System.out.flush();
                long deadline = System.nanoTime() + 60_000_000_000L;
                int echoed = 0;
                int received = 0;
                while (echoed < EchoQp.MESSAGES) {
                    if (System.nanoTime() - deadline > 0) {
                        System.err.println("echo peer: timed out after " + echoed + " echoes");
                        System.exit(2);
                    }
                    p.progress(System.nanoTime());
                    java.util.List<WorkCompletion> wcs;
                    try {
                        wcs = e.poll();
                    } catch (IllegalStateException flushed) {
                        if (received == EchoQp.MESSAGES) {
                            // the parent had every echo and closed before this side saw its last send completions:
                            // the receives posted after the last message are flushed, as RC flushes them
                            break;
                        }
                        throw flushed;
                    }
                    for (WorkCompletion wc : wcs) {
                        if (EchoQp.isReceive(wc)) {
                            received++;
                            int n = wc.byteLength();
                            int slot = (int) wc.wrId();
                            e.send.buffer().put(slot * EchoQp.MAX, e.receive.buffer(), slot * EchoQp.MAX, n);
                            e.postReceive(slot);
                            e.postSend(slot, n);
                        } else {
                            echoed++;
                        }
                    }
                }
            }
        } catch (RuntimeException ex) {
            System.err.println("echo peer failed: " + ex);
            System.exit(1);
        }
        System.exit(0);
    }
}
