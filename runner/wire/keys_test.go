package wire

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
)

func testHeaders(n int) []Header {
	hs := make([]Header, n)
	for i := range hs {
		hs[i] = Header{Key: fmt.Sprintf("header-%03d", i), Value: []byte(fmt.Sprintf("value-%010d", i))}
	}
	return hs
}

// TestRecordBatchKeysAndHeaders: records with keys (null, empty, short,
// long) and headers (none, one, many, a null value) decode with franz-go's
// kmsg field by field, compressed or not, and RecordSize predicts every
// record's encoded size exactly.
func TestRecordBatchKeysAndHeaders(t *testing.T) {
	keys := [][]byte{nil, {}, []byte("k"), bytes.Repeat([]byte("K"), 200)}
	headerSets := [][]Header{nil, testHeaders(1), testHeaders(40), {{Key: "null-value", Value: nil}, {Key: "", Value: []byte{}}}}
	for _, comp := range []compress.Compression{0, compress.Zstd} {
		for hi, hs := range headerSets {
			t.Run(fmt.Sprintf("%v-headers%d", comp, hi), func(t *testing.T) {
				h := EncodeHeaders(hs)
				if h.Count() != len(hs) {
					t.Fatalf("Count = %d, want %d", h.Count(), len(hs))
				}
				var b RecordBatch
				b.Reserve(1 << 16)
				want := BatchHeaderSize
				vs := values(50, 100)
				for i, v := range vs {
					k := keys[i%len(keys)]
					b.AppendRecord(1700000000000+int64(i), k, v, h)
					want += RecordSize(int32(i), int64(i), k, v, h)
				}
				if b.Len() != want {
					t.Fatalf("Len %d, RecordSize sums to %d", b.Len(), want)
				}
				raw, err := b.Finish(compressor(comp.Codec()))
				if err != nil {
					t.Fatal(err)
				}
				_, recs := decodeBatch(t, raw, comp.Codec())
				for i, r := range recs {
					k := keys[i%len(keys)]
					if (k == nil) != (r.Key == nil) || !bytes.Equal(r.Key, k) || !bytes.Equal(r.Value, vs[i]) {
						t.Fatalf("record %d: key %q value %d bytes, want key %q (null %v)", i, r.Key, len(r.Value), k, k == nil)
					}
					if len(r.Headers) != len(hs) {
						t.Fatalf("record %d: %d headers, want %d", i, len(r.Headers), len(hs))
					}
					for j, got := range r.Headers {
						if got.Key != hs[j].Key || !bytes.Equal(got.Value, hs[j].Value) || (got.Value == nil) != (hs[j].Value == nil) {
							t.Fatalf("record %d header %d: %q=%q, want %q=%q", i, j, got.Key, got.Value, hs[j].Key, hs[j].Value)
						}
					}
				}
			})
		}
	}
}

// TestRecordSizeMatchesKafkaGo: kafka-go's record encoder (what the client
// and writer modes use) lays out records with keys and headers in exactly
// the bytes RecordSize predicts, so kbench can count a client-mode batch's
// uncompressed size without encoding it twice.
func TestRecordSizeMatchesKafkaGo(t *testing.T) {
	hs := testHeaders(3)
	h := EncodeHeaders(hs)
	kh := make([]kafka.Header, len(hs))
	for i, x := range hs {
		kh[i] = kafka.Header{Key: x.Key, Value: x.Value}
	}
	var recs []kafka.Record
	want := BatchHeaderSize
	for i, v := range values(30, 77) {
		var key []byte
		if i%2 == 1 {
			key = fmt.Appendf(nil, "key-%d", i)
		}
		ts := int64(1700000000000 + 3*i)
		r := kafka.Record{Time: time.UnixMilli(ts), Value: kafka.NewBytes(v), Headers: kh}
		if key != nil {
			r.Key = kafka.NewBytes(key)
		}
		recs = append(recs, r)
		want += RecordSize(int32(i), ts-1700000000000, key, v, h)
	}
	var out bytes.Buffer
	rs := protocol.RecordSet{Version: 2, Records: kafka.NewRecordReader(recs...)}
	if _, err := rs.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if got := out.Len() - 4; got != want { // WriteTo puts the field's int32 length first
		t.Fatalf("kafka-go encoded %d bytes, RecordSize predicts %d", got, want)
	}
}

// TestRawProduceKeysAndHeaders sends batches with keys and headers through
// kafka-go's Client.RawProduce to the embedded broker and reads them back
// with kafka-go's Reader.
func TestRawProduceKeysAndHeaders(t *testing.T) {
	b, ctx := startBroker(t)
	const topic = "wire-keys"
	client := &kafka.Client{Addr: kafka.TCP(b.Addr()), Timeout: 10 * time.Second}
	if _, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}}}); err != nil {
		t.Fatal(err)
	}
	hs := testHeaders(2)
	h := EncodeHeaders(hs)
	var batch RecordBatch
	var keys [][]byte
	vs := values(20, 64)
	for i, v := range vs {
		var k []byte
		if i%3 != 0 {
			k = fmt.Appendf(nil, "key-%02d", i)
		}
		keys = append(keys, k)
		batch.AppendRecord(time.Now().UnixMilli(), k, v, h)
	}
	raw, err := batch.Finish(compressor(compress.Snappy.Codec()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.RawProduce(ctx, &kafka.RawProduceRequest{Topic: topic, RequiredAcks: kafka.RequireAll,
		RawRecords: protocol.RawRecordSet{Reader: NewRecordsField(raw)}})
	if err != nil || resp.Error != nil {
		t.Fatalf("produce: %v %v", err, resp)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr()}, Topic: topic, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for i := range vs {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(m.Key, keys[i]) || !bytes.Equal(m.Value, vs[i]) || len(m.Headers) != len(hs) {
			t.Fatalf("record %d: key %q, %d value bytes, %d headers", i, m.Key, len(m.Value), len(m.Headers))
		}
		for j, got := range m.Headers {
			if got.Key != hs[j].Key || !bytes.Equal(got.Value, hs[j].Value) {
				t.Fatalf("record %d header %d: %q=%q", i, j, got.Key, got.Value)
			}
		}
	}
}
