package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.SoftProvider;
import reactor.core.publisher.Flux;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The peer process of the fault matrix's process cells ({@link ProcessFaultCells}): a node on the IP
 * fabric listening at {@code net://HOST:PORT} with one rail per address, offering every channel kind its
 * classpath has ({@code ServiceLoader}). To each connection it accepts it sends TCK messages
 * ({@link TckPayload}, sizes {@link ConnectionTck#faultSize}) 0 .. n-1, where n is the last {@code STREAM n}
 * command read on stdin before the connection arrived (0: without end), and it receives and releases
 * whatever the connection sends it. Not a test; it runs until killed or stdin closes.
 *
 * <pre>
 * args:   HOST:PORT IP[,IP...] [n]          n: messages for each connection until a STREAM command (default 200)
 * stdin:  STREAM n                      messages for the next connection accepted
 *         FAULTS loss dup reorder seed  the soft NIC's fault model on every port (RailFaults; 0 0 0 0: none)
 * stdout: LISTENING net://host:port     once bound
 *         OK                            after each command
 *         SEND i COMPLETED n | SEND i FAILED Exception: message   per connection i (from 1)
 * </pre>
 */
public final class FaultPeerMain {
    private FaultPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) {
            System.err.println("usage: FaultPeerMain HOST:PORT IP[,IP...] [n: messages for each connection until a STREAM command]");
            System.exit(2);
        }
        int colon = args[0].lastIndexOf(':');
        String host = args[0].substring(0, colon);
        int port = Integer.parseInt(args[0].substring(colon + 1));
        List<String> addresses = List.of(args[1].split(","));
        SoftProvider provider = ProcessFaultCells.provider(addresses, "fault-peer");
        RdmaNode node = ProcessFaultCells.node(provider, ProcessFaultCells.baseOptions(addresses.size()), "fault-peer");
        AtomicInteger stream = new AtomicInteger(args.length == 3 ? Integer.parseInt(args[2]) : 200);
        AtomicInteger connections = new AtomicInteger();
        RdmaServer server = node.bind(new PortAddress("net", host, port));
        server.accept().subscribe(c -> serve(c, connections.incrementAndGet(), stream.get()));
        say("LISTENING " + server.address());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            if (w[0].equals("STREAM")) {
                stream.set(Integer.parseInt(w[1]));
            } else if (w[0].equals("FAULTS")) {
                RailFaults f = new RailFaults(Double.parseDouble(w[1]), Double.parseDouble(w[2]), Double.parseDouble(w[3]), Long.parseLong(w[4]));
                SoftRails.applyOne(provider, addresses.size(), f.lossRate() + f.duplicateRate() + f.reorderRate() > 0 ? f : null, 1);
            } else {
                say("UNKNOWN " + line);
                continue;
            }
            say("OK");
        }
        // stdin closed: the survivor is gone; end quietly
        server.close();
        node.close();
        provider.close();
        System.exit(0);
    }

    private static void serve(RdmaConnection c, int i, int messages) {
        c.receive().subscribe(RdmaMessage::release, e -> { });
        Flux<Integer> seqs = messages > 0 ? Flux.range(0, messages) : Flux.range(0, Integer.MAX_VALUE);
        c.send(seqs.map(s -> TckPayload.message(s, ConnectionTck.faultSize(s)))).subscribe(null,
            e -> say("SEND " + i + " FAILED " + e.getClass().getSimpleName() + ": " + e.getMessage()),
            () -> say("SEND " + i + " COMPLETED " + messages));
    }

    private static void say(String line) {
        synchronized (System.out) {
            System.out.println(line.replace('\n', ' '));
            System.out.flush();
        }
    }
}
