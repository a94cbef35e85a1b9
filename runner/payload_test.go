package runner

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
)

// TestPayloadEntropy: entropy 0 makes every byte the same, entropy 1 bytes
// of all 256 values, and consecutive records differ; without the flag the
// payload is today's (Kafka's): one run of random uppercase letters sent as
// every record's value.
func TestPayloadEntropy(t *testing.T) {
	values := func(args ...string) [][]byte {
		t.Helper()
		spec := mustParse(t, rundoc.Producer, append([]string{"--record-size", "300"}, args...)...)
		r := &run{spec: spec}
		st, err := clientSettings(&spec)
		if err != nil {
			t.Fatal(err)
		}
		r.st = st
		shape, err := r.recordShape(1)
		if err != nil {
			t.Fatal(err)
		}
		g := shape.generator(0, 1)
		var out [][]byte
		for range 2000 {
			v, _, _ := g.next()
			out = append(out, v)
		}
		return out
	}
	def := values()
	for i, v := range def {
		if !bytes.Equal(v, def[0]) || len(v) != 300 {
			t.Fatalf("default record %d differs from the first: today's payload is one value for every record", i)
		}
	}
	for _, c := range def[0] {
		if c < 'A' || c > 'Z' {
			t.Fatalf("default payload byte %q is not an uppercase letter", c)
		}
	}
	for _, v := range values("--payload-entropy", "0") {
		if bytes.Count(v, v[:1]) != len(v) {
			t.Fatalf("entropy 0: %q has differing bytes", v)
		}
	}
	random := values("--payload-entropy", "1")
	seen := map[byte]bool{}
	for i, v := range random {
		for _, c := range v {
			seen[c] = true
		}
		if i > 0 && bytes.Equal(v, random[i-1]) {
			t.Fatalf("entropy 1: record %d repeats the one before", i)
		}
	}
	if len(seen) != 256 {
		t.Errorf("entropy 1: %d distinct byte values in 600 KB, want all 256", len(seen))
	}
	half := values("--payload-entropy", "0.5")
	seen = map[byte]bool{}
	for _, v := range half {
		for _, c := range v {
			seen[c] = true
		}
	}
	if len(seen) != 16 {
		t.Errorf("entropy 0.5: %d distinct byte values, want 16 (4 bits a byte)", len(seen))
	}
}

// TestCompressionRatioFollowsEntropy is KAFKA-12611's story: zstd on one
// repeated payload reports a tiny ratio, on random bytes a ratio near 1.
// Every producer result says what its batches were on the wire and how
// many bytes of keys, values and headers they carried; kafka-go's Writer
// reports no compressed sizes, so the writer mode says so instead.
func TestCompressionRatioFollowsEntropy(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const n = 8000
	for _, mode := range []string{rundoc.ModeRaw, rundoc.ModeClient, rundoc.ModeWriter} {
		for _, entropy := range []string{"0", "1"} {
			t.Run(mode+"-"+entropy, func(t *testing.T) {
				opts, _ := testOptions(t)
				res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "entropy-"+mode+"-"+entropy,
					"--mode", mode, "--num-records", fmt.Sprint(n), "--record-size", "500", "--payload-entropy", entropy, "--profile", "none",
					"--producer-props", "compression.type=zstd", "batch.size=65536"), opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := metric(t, res, "record-bytes"); got != n*500 {
					t.Errorf("record-bytes = %v, want %d × 500", got, n)
				}
				notes := strings.Join(res.Measurement.Notes, "\n")
				if !strings.Contains(notes, "--payload-entropy "+entropy) {
					t.Errorf("notes do not describe the payload: %q", res.Measurement.Notes)
				}
				if mode == rundoc.ModeWriter {
					for _, name := range []string{"compression-rate-avg", "bytes-on-wire"} {
						if _, ok := res.Metric(name); ok {
							t.Errorf("writer mode reports %s: kafka-go's Writer does not say", name)
						}
					}
					if !strings.Contains(notes, "compression-rate-avg") {
						t.Errorf("writer mode notes do not say why compression-rate-avg is missing: %q", res.Measurement.Notes)
					}
					return
				}
				ratio := metric(t, res, "compression-rate-avg")
				wireBytes := metric(t, res, "bytes-on-wire")
				t.Logf("zstd, entropy %s: compression-rate-avg %.4f, %v bytes on the wire", entropy, ratio, wireBytes)
				if entropy == "0" && ratio > 0.05 {
					t.Errorf("entropy 0: ratio %.4f, want a tiny one", ratio)
				}
				if entropy == "1" && (ratio < 0.9 || ratio > 1.1) {
					t.Errorf("entropy 1: ratio %.4f, want about 1 (random bytes do not compress)", ratio)
				}
				if per := metric(t, res, "wire-bytes-per-record-byte"); per != wireBytes/(n*500) {
					t.Errorf("wire-bytes-per-record-byte %v, want bytes-on-wire / record-bytes", per)
				}
			})
		}
	}
}

// TestKeysAndHeaders: --key-size and --headers put keys and headers on
// every record in every mode; kafka-go's Reader reads them back, keyed
// records land on their key's partition (murmur2, as Kafka's default
// partitioner), and record-bytes counts them. Without compression a batch
// is on the wire as it is uncompressed: a ratio of exactly 1.
func TestKeysAndHeaders(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	const n, size, keySize, headers = 3000, 120, 12, 3
	for _, mode := range []string{rundoc.ModeRaw, rundoc.ModeClient, rundoc.ModeWriter} {
		t.Run(mode, func(t *testing.T) {
			topic := "keys-" + mode
			opts, _ := testOptions(t)
			res, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", topic, "--partitions", "3",
				"--mode", mode, "--num-records", fmt.Sprint(n), "--record-size", fmt.Sprint(size), "--key-size", fmt.Sprint(keySize),
				"--headers", fmt.Sprint(headers), "--profile", "none"), opts)
			if err != nil {
				t.Fatal(err)
			}
			// Each header: a 10-byte key and a 16-byte value.
			if got, want := metric(t, res, "record-bytes"), float64(n*(size+keySize+headers*26)); got != want {
				t.Errorf("record-bytes = %v, want %v", got, want)
			}
			if mode != rundoc.ModeWriter {
				if r := metric(t, res, "compression-rate-avg"); r != 1 {
					t.Errorf("compression-rate-avg = %v without compression, want 1", r)
				}
				if w := metric(t, res, "bytes-on-wire"); w <= metric(t, res, "record-bytes") {
					t.Errorf("bytes-on-wire %v not above record-bytes %v: batches add headers and framing", w, metric(t, res, "record-bytes"))
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr()}, Topic: topic, GroupID: "keys-check-" + mode,
				MaxWait: 100 * time.Millisecond, StartOffset: kafka.FirstOffset})
			defer r.Close()
			keys := map[string]bool{}
			for i := range n {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if len(m.Key) != keySize || len(m.Value) != size || len(m.Headers) != headers {
					t.Fatalf("record %d: %d key bytes, %d value bytes, %d headers", i, len(m.Key), len(m.Value), len(m.Headers))
				}
				for j, h := range m.Headers {
					if h.Key != fmt.Sprintf("header-%03d", j) || len(h.Value) != 16 {
						t.Fatalf("record %d header %d: %q=%q", i, j, h.Key, h.Value)
					}
				}
				if want := (kafka.Murmur2Balancer{}).Balance(kafka.Message{Key: m.Key}, 0, 1, 2); m.Partition != want {
					t.Fatalf("record %d with key %q on partition %d, want %d (murmur2)", i, m.Key, m.Partition, want)
				}
				keys[string(m.Key)] = true
			}
			if len(keys) < 100 {
				t.Errorf("%d distinct keys in %d records, want many", len(keys), n)
			}
		})
	}
}
