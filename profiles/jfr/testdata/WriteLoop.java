import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Test data for kbench's JFR converter: writes 16 buffers of 256 bytes to
 * a loopback socket for the given milliseconds, either with one gathering
 * write per round (gather: SocketChannel.write(ByteBuffer[]), the JVM's
 * writev0) or with one write per buffer (per-buffer: write0), while a
 * reader thread drains the other end.
 *
 * Usage: java WriteLoop gather|per-buffer MILLIS
 */
public class WriteLoop {
    public static void main(String[] args) throws Exception {
        boolean gather;
        switch (args[0]) {
            case "gather": gather = true; break;
            case "per-buffer": gather = false; break;
            default: throw new IllegalArgumentException("mode " + args[0] + ": want gather or per-buffer");
        }
        long millis = Long.parseLong(args[1]);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            SocketChannel out = SocketChannel.open(server.getLocalAddress());
            SocketChannel in = server.accept();
            Thread reader = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(1 << 16);
                try {
                    while (in.read(b) >= 0) {
                        b.clear();
                    }
                } catch (java.io.IOException e) {
                    // The writer closed the socket: done.
                }
            }, "reader");
            reader.setDaemon(true);
            reader.start();
            ByteBuffer[] bufs = new ByteBuffer[16];
            for (int i = 0; i < bufs.length; i++) {
                bufs[i] = ByteBuffer.allocateDirect(256);
            }
            long rounds = 0;
            long end = System.nanoTime() + millis * 1_000_000L;
            while (System.nanoTime() < end) {
                for (ByteBuffer b : bufs) {
                    b.clear();
                }
                if (gather) {
                    while (bufs[bufs.length - 1].hasRemaining()) {
                        out.write(bufs);
                    }
                } else {
                    for (ByteBuffer b : bufs) {
                        while (b.hasRemaining()) {
                            out.write(b);
                        }
                    }
                }
                rounds++;
            }
            out.close();
            System.out.println(rounds + " rounds");
        }
    }
}
