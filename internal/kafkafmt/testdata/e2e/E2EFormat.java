import java.util.*;
import java.io.*;
// Generates the golden files of e2e_test.go (see there): reads round-trip
// times in nanoseconds, one a line, and prints them with the arithmetic and
// formatting of Kafka's EndToEndLatency tool (progress for every record when
// given an argument).
public class E2EFormat {
    public static void main(String[] a) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        List<Long> xs = new ArrayList<>();
        for (String l; (l = r.readLine()) != null;) if (!l.isEmpty()) xs.add(Long.parseLong(l.trim()));
        int n = xs.size();
        double total = 0.0;
        long[] lat = new long[n];
        for (int i = 0; i < n; i++) {
            long elapsed = xs.get(i);
            if (i % 1000 == 0 || a.length > 0) System.out.println(i + "\t" + elapsed / 1000.0 / 1000.0);
            total += elapsed;
            lat[i] = elapsed / 1000 / 1000;
        }
        System.out.printf("Avg latency: %.4f ms%n", total / n / 1000.0 / 1000.0);
        Arrays.sort(lat);
        int p50 = (int) lat[(int) (lat.length * 0.5)];
        int p99 = (int) lat[(int) (lat.length * 0.99)];
        int p999 = (int) lat[(int) (lat.length * 0.999)];
        System.out.printf("Percentiles: 50th = %d, 99th = %d, 99.9th = %d%n", p50, p99, p999);
    }
}
