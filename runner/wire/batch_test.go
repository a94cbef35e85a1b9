package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// compressor adapts a kafka-go codec, as the runner does; nil for none.
func compressor(c compress.Codec) *Compressor {
	if c == nil {
		return nil
	}
	return StreamCompressor(c.Code(), c.NewWriter)
}

// decodeBatch checks a finished batch field by field with franz-go's
// decoder and returns its records.
func decodeBatch(t *testing.T, raw []byte, codec compress.Codec) (kmsg.RecordBatch, []kmsg.Record) {
	t.Helper()
	var batch kmsg.RecordBatch
	if err := batch.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	if int(batch.Length) != len(raw)-12 || batch.Magic != 2 || batch.ProducerID != -1 || batch.ProducerEpoch != -1 || batch.FirstSequence != -1 {
		t.Fatalf("batch header %+v for %d bytes", batch, len(raw))
	}
	if want := int32(crcCastagnoli(raw[21:])); batch.CRC != want {
		t.Fatalf("CRC %#x, want %#x", batch.CRC, want)
	}
	records := batch.Records
	if codec != nil {
		if batch.Attributes&7 != int16(codec.Code()) {
			t.Fatalf("attributes %#x, want codec %d", batch.Attributes, codec.Code())
		}
		r := codec.NewReader(bytes.NewReader(records))
		var err error
		if records, err = io.ReadAll(r); err != nil {
			t.Fatalf("decompress: %v", err)
		}
		r.Close()
	} else if batch.Attributes != 0 {
		t.Fatalf("attributes %#x, want 0", batch.Attributes)
	}
	recs := make([]kmsg.Record, batch.NumRecords)
	for i := range recs {
		if err := recs[i].ReadFrom(records); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		records = records[int(recs[i].Length)+varintLen(int64(recs[i].Length)):]
	}
	if len(records) != 0 {
		t.Fatalf("%d bytes after the last record", len(records))
	}
	return batch, recs
}

// TestRecordBatch builds batches of several shapes, with and without each
// of kafka-go's codecs, and checks every field of what comes out.
func TestRecordBatch(t *testing.T) {
	const t0 = int64(1700000000000)
	codecs := []compress.Compression{0, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}
	for _, shape := range []struct{ records, size int }{{1, 0}, {1, 1}, {57, 256}, {4000, 256}, {3, 70000}} {
		for _, comp := range codecs {
			t.Run(fmt.Sprintf("%dx%d-%v", shape.records, shape.size, comp), func(t *testing.T) {
				codec := comp.Codec()
				vs := values(shape.records, shape.size)
				var b RecordBatch
				wantLen := BatchHeaderSize
				for i, v := range vs {
					b.Append(t0+int64(i%7), v) // timestamps need not be monotonic
					wantLen += len(appendRecord(nil, int32(i), int64(i%7), v))
				}
				if b.Count() != shape.records || b.Len() != wantLen {
					t.Fatalf("Count %d Len %d, want %d and %d", b.Count(), b.Len(), shape.records, wantLen)
				}
				raw, err := b.Finish(compressor(codec))
				if err != nil {
					t.Fatal(err)
				}
				batch, recs := decodeBatch(t, raw, codec)
				maxTS := t0 + int64(min(shape.records-1, 6))
				if batch.NumRecords != int32(shape.records) || batch.LastOffsetDelta != int32(shape.records-1) ||
					batch.FirstTimestamp != t0 || batch.MaxTimestamp != maxTS {
					t.Fatalf("batch %+v", batch)
				}
				for i, r := range recs {
					if !bytes.Equal(r.Value, vs[i]) || r.Key != nil || r.OffsetDelta != int32(i) || r.TimestampDelta64 != int64(i%7) || len(r.Headers) != 0 {
						t.Fatalf("record %d decodes as offset %d ts %d key %v, %d value bytes", i, r.OffsetDelta, r.TimestampDelta64, r.Key, len(r.Value))
					}
				}
			})
		}
	}
}

// TestRecordBatchReset reuses one batch: nothing of the first survives
// into the second.
func TestRecordBatchReset(t *testing.T) {
	var b RecordBatch
	for _, v := range values(100, 300) {
		b.Append(1000, v)
	}
	if _, err := b.Finish(compressor(compress.Gzip.Codec())); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if b.Count() != 0 || b.Len() != 0 {
		t.Fatalf("after Reset: Count %d Len %d", b.Count(), b.Len())
	}
	b.Append(5000, []byte("only"))
	raw, err := b.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	batch, recs := decodeBatch(t, raw, nil)
	if batch.NumRecords != 1 || batch.FirstTimestamp != 5000 || string(recs[0].Value) != "only" {
		t.Fatalf("second batch %+v, records %+v", batch, recs)
	}
}

func TestRecordBatchRejects(t *testing.T) {
	var b RecordBatch
	if _, err := b.Finish(nil); !errors.Is(err, ErrEmptyBatch) {
		t.Errorf("empty batch: %v, want ErrEmptyBatch", err)
	}
	b.Append(1, []byte("x"))
	if _, err := b.Finish(&Compressor{Codec: 9, Append: func(dst, src []byte) ([]byte, error) { return dst, nil }}); err == nil {
		t.Error("codec 9: no error")
	}
	failing := errors.New("no space")
	if _, err := b.Finish(&Compressor{Codec: 1, Append: func(dst, src []byte) ([]byte, error) { return nil, failing }}); !errors.Is(err, failing) {
		t.Errorf("failing compressor: %v", err)
	}
}

// TestRawProduceRoundTrip sends batches through kafka-go's
// Client.RawProduce to the embedded broker (which checks CRCs and batch
// fields), compressed and not, and reads every record back with kafka-go.
func TestRawProduceRoundTrip(t *testing.T) {
	b, ctx := startBroker(t)
	const topic = "wire-raw"
	client := &kafka.Client{Addr: kafka.TCP(b.Addr()), Timeout: 10 * time.Second}
	if _, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}}}); err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	var batch RecordBatch
	for i, comp := range []compress.Compression{0, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd} {
		batch.Reset()
		for j := 0; j < 50; j++ {
			v := fmt.Appendf(nil, "batch %d record %d %s", i, j, bytes.Repeat([]byte{'y'}, j*3))
			want = append(want, v)
			batch.Append(time.Now().UnixMilli(), v)
		}
		raw, err := batch.Finish(compressor(comp.Codec()))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.RawProduce(ctx, &kafka.RawProduceRequest{Topic: topic, RequiredAcks: kafka.RequireAll,
			RawRecords: protocol.RawRecordSet{Reader: NewRecordsField(raw)}})
		if err != nil || resp.Error != nil {
			t.Fatalf("batch %d (%v): %v %v", i, comp, err, resp)
		}
		if resp.BaseOffset != int64(i*50) {
			t.Fatalf("batch %d: base offset %d, want %d", i, resp.BaseOffset, i*50)
		}
	}

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr()}, Topic: topic, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for i, w := range want {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if m.Offset != int64(i) || !bytes.Equal(m.Value, w) || m.Key != nil {
			t.Fatalf("record %d: offset %d value %q key %q, want %q", i, m.Offset, m.Value, m.Key, w)
		}
	}
}

// BenchmarkRecordBatch encodes the same 4,000-record batch of 256 B values
// (a 1 MiB batch.size) with kbench's builder and with kafka-go's record
// encoder (what Client.Produce and the Writer use), in one run, so their
// ratio is what to read.
func BenchmarkRecordBatch(b *testing.B) {
	vs := values(4000, 256)
	b.Run("wire", func(b *testing.B) {
		var batch RecordBatch
		b.SetBytes(4000 * 256)
		b.ReportAllocs()
		for b.Loop() {
			batch.Reset()
			for _, v := range vs {
				batch.Append(1700000000000, v)
			}
			if _, err := batch.Finish(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kafka-go", func(b *testing.B) {
		recs := make([]kafka.Record, len(vs))
		var out bytes.Buffer
		b.SetBytes(4000 * 256)
		b.ReportAllocs()
		for b.Loop() {
			for i, v := range vs {
				recs[i] = kafka.Record{Time: time.UnixMilli(1700000000000), Value: kafka.NewBytes(v)}
			}
			rs := protocol.RecordSet{Version: 2, Records: kafka.NewRecordReader(recs...)}
			out.Reset()
			if _, err := rs.WriteTo(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRecordsField reads the field with small reads, with io.Copy's
// WriterTo path, and checks both give the length and then the batch.
func TestRecordsField(t *testing.T) {
	batch := bytes.Repeat([]byte("0123456789"), 30)
	want := append([]byte{0, 0, 1, 44}, batch...)
	for _, chunk := range []int{1, 3, 4, 5, 64, 1000} {
		f := NewRecordsField(batch)
		var got []byte
		buf := make([]byte, chunk)
		for {
			n, err := f.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil || n == 0 {
				t.Fatalf("chunk %d: Read gave %d, %v", chunk, n, err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("chunk %d: read %d bytes, want %d", chunk, len(got), len(want))
		}
	}
	var out bytes.Buffer
	if n, err := io.Copy(&out, NewRecordsField(batch)); err != nil || n != int64(len(want)) || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("io.Copy: %d, %v", n, err)
	}
}

// FuzzRecordBatch: whatever values and timestamps go in, franz-go's
// decoder reads the same records back and the CRC holds.
func FuzzRecordBatch(f *testing.F) {
	f.Add([]byte("a\x00bc\x00"), int64(1700000000000), uint8(3))
	f.Add([]byte{}, int64(0), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 300), int64(-5), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, base int64, step uint8) {
		vs := bytes.Split(data, []byte{0})
		var b RecordBatch
		for i, v := range vs {
			b.Append(base+int64(i)*int64(step), v)
		}
		raw, err := b.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		batch, recs := decodeBatch(t, raw, nil)
		if int(batch.NumRecords) != len(vs) || batch.FirstTimestamp != base {
			t.Fatalf("batch %+v for %d values", batch, len(vs))
		}
		for i, r := range recs {
			if !bytes.Equal(r.Value, vs[i]) || r.OffsetDelta != int32(i) || r.TimestampDelta64 != int64(i)*int64(step) {
				t.Fatalf("record %d: %+v, want value %q", i, r, vs[i])
			}
		}
	})
}
