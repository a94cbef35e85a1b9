package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbench/kbench/internal/embeddedbroker"
)

func values(n, size int) [][]byte {
	vs := make([][]byte, n)
	for i := range vs {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte('A' + (i+j)%26)
		}
		vs[i] = v
	}
	return vs
}

func mustEncode(t testing.TB, p Produce) *Request {
	t.Helper()
	r, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLayout checks the buffer layout the package documents: R+2 buffers,
// header, batch header, one record each, and a size prefix that matches.
func TestLayout(t *testing.T) {
	for _, tc := range []struct{ records, size int }{{1, 1}, {16, 256}, {4, 16384}, {1500, 10}} {
		vs := values(tc.records, tc.size)
		r := mustEncode(t, Produce{ClientID: "c", Topic: "t", Acks: -1, TimeoutMs: 30000, Timestamp: 1700000000000, Values: vs})
		if got, want := r.NumBuffers(), tc.records+2; got != want || len(r.Buffers()) != want {
			t.Errorf("%d records: %d buffers, want %d", tc.records, got, want)
		}
		flat := r.AppendTo(nil)
		if len(flat) != r.Len() {
			t.Errorf("AppendTo gives %d bytes, Len %d", len(flat), r.Len())
		}
		if got := int(binary.BigEndian.Uint32(flat)); got != r.Len()-4 {
			t.Errorf("size prefix %d, want %d", got, r.Len()-4)
		}
		if got := len(r.Buffers()[1]); got != BatchHeaderSize {
			t.Errorf("batch header %d bytes, want %d", got, BatchHeaderSize)
		}
		for i, b := range r.Buffers()[2:] {
			var rec kmsg.Record
			if err := rec.ReadFrom(b); err != nil {
				t.Fatalf("record buffer %d: %v", i, err)
			}
			if rec.Length != int32(len(b)-varintLen(int64(rec.Length))) {
				t.Errorf("record %d: length %d, buffer %d bytes", i, rec.Length, len(b))
			}
			if !bytes.Equal(rec.Value, vs[i]) || rec.Key != nil || rec.OffsetDelta != int32(i) || len(rec.Headers) != 0 {
				t.Fatalf("record %d decodes as %+v", i, rec)
			}
		}
		r.SetCorrelationID(0x01020304)
		if r.CorrelationID() != 0x01020304 {
			t.Errorf("correlation id %#x", r.CorrelationID())
		}
		changed := r.AppendTo(nil)
		diff := 0
		for i := range flat {
			if flat[i] != changed[i] {
				diff++
				if i < 8 || i >= 12 {
					t.Errorf("SetCorrelationID changed byte %d", i)
				}
			}
		}
		if diff == 0 {
			t.Error("SetCorrelationID changed nothing")
		}
	}
}

func varintLen(v int64) int { return len(binary.AppendVarint(nil, v)) }

// TestDecodesAsKafkaRequest parses an encoded request with franz-go's
// independent protocol implementation, field by field.
func TestDecodesAsKafkaRequest(t *testing.T) {
	vs := values(16, 256)
	r := mustEncode(t, Produce{ClientID: "kbench", Topic: "topic-a", Partition: 3, Acks: 1, TimeoutMs: 1234, Timestamp: 1700000000123, Values: vs})
	r.SetCorrelationID(42)
	frame := r.AppendTo(nil)[4:]
	if key, ver, corr := binary.BigEndian.Uint16(frame), binary.BigEndian.Uint16(frame[2:]), binary.BigEndian.Uint32(frame[4:]); key != 0 || ver != ProduceVersion || corr != 42 {
		t.Fatalf("header: key %d version %d correlation %d", key, ver, corr)
	}
	clientLen := int(binary.BigEndian.Uint16(frame[8:]))
	if got := string(frame[10 : 10+clientLen]); got != "kbench" {
		t.Fatalf("client id %q", got)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(ProduceVersion)
	if err := req.ReadFrom(frame[10+clientLen:]); err != nil {
		t.Fatal(err)
	}
	if req.TransactionID != nil || req.Acks != 1 || req.TimeoutMillis != 1234 || len(req.Topics) != 1 ||
		req.Topics[0].Topic != "topic-a" || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 3 {
		t.Fatalf("request decodes as %+v", req)
	}
	records := req.Topics[0].Partitions[0].Records
	var batch kmsg.RecordBatch
	if err := batch.ReadFrom(records); err != nil {
		t.Fatal(err)
	}
	if batch.Magic != 2 || batch.NumRecords != 16 || batch.LastOffsetDelta != 15 || batch.FirstTimestamp != 1700000000123 ||
		batch.ProducerID != -1 || batch.Attributes != 0 || int(batch.Length) != len(records)-12 {
		t.Fatalf("batch decodes as %+v", batch)
	}
	// CRC-32C of everything after the CRC field, checked with the
	// Castagnoli polynomial written out rather than the package's table.
	if want := int32(crcCastagnoli(records[21:])); batch.CRC != want {
		t.Fatalf("CRC %#x, want %#x", batch.CRC, want)
	}
}

// crcCastagnoli is a bitwise CRC-32C, independent of hash/crc32's tables.
func crcCastagnoli(b []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range b {
		crc ^= uint32(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// startBroker starts an embedded broker for one test, with a context that
// bounds the test's talk to it.
func startBroker(t *testing.T) (*embeddedbroker.Broker, context.Context) {
	t.Helper()
	b, err := embeddedbroker.Start(embeddedbroker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return b, ctx
}

// TestBrokerAcceptsAndConsumerReadsBack sends encoded requests to the
// embedded broker (kfake, which checks the CRC and every batch field) with
// one gathering write each, and reads the records back with kafka-go.
func TestBrokerAcceptsAndConsumerReadsBack(t *testing.T) {
	b, ctx := startBroker(t)
	const topic, requests, perRequest = "wire-roundtrip", 20, 16
	// Auto-create the topic and find its leader with kafka-go.
	lc, err := kafka.DialLeader(ctx, "tcp", b.Addr(), topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	leader := lc.RemoteAddr().String()
	lc.Close()

	conn, err := net.Dial("tcp", leader)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	var want [][]byte
	var buf []byte
	for i := 0; i < requests; i++ {
		vs := make([][]byte, perRequest)
		for j := range vs {
			vs[j] = fmt.Appendf(nil, "request %d record %d %s", i, j, bytes.Repeat([]byte{'x'}, i*j))
		}
		want = append(want, vs...)
		r := mustEncode(t, Produce{ClientID: "wire-test", Topic: topic, Acks: -1, TimeoutMs: 10000, Timestamp: time.Now().UnixMilli(), Values: vs})
		r.SetCorrelationID(int32(i + 100))
		vec := net.Buffers(append([][]byte(nil), r.Buffers()...))
		if _, err := vec.WriteTo(conn); err != nil {
			t.Fatal(err)
		}
		if buf, err = ReadFrame(rd, buf); err != nil {
			t.Fatal(err)
		}
		resp, err := ParseProduceResponse(buf, ProduceVersion)
		if err != nil {
			t.Fatal(err)
		}
		if resp.CorrelationID != int32(i+100) || resp.Partitions != 1 || resp.ErrorCode != 0 || resp.BaseOffset != int64(i*perRequest) {
			t.Fatalf("request %d: response %+v", i, resp)
		}
	}

	// A corrupted record must be refused: the broker checks the CRC.
	r := mustEncode(t, Produce{ClientID: "wire-test", Topic: topic, Acks: -1, TimeoutMs: 10000, Timestamp: time.Now().UnixMilli(), Values: values(2, 10)})
	bad := r.AppendTo(nil)
	bad[len(bad)-3] ^= 0xff
	if _, err := conn.Write(bad); err != nil {
		t.Fatal(err)
	}
	if buf, err = ReadFrame(rd, buf); err != nil {
		t.Fatal(err)
	}
	if resp, err := ParseProduceResponse(buf, ProduceVersion); err != nil || resp.ErrorCode != 2 || resp.ErrorTopic != topic {
		t.Fatalf("corrupted batch: response %+v, %v; want CORRUPT_MESSAGE (2)", resp, err)
	}

	rc, err := kafka.DialLeader(ctx, "tcp", b.Addr(), topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rc.SetReadDeadline(time.Now().Add(20 * time.Second))
	batch := rc.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 10 << 20})
	var got [][]byte
	for len(got) < len(want) {
		m, err := batch.ReadMessage()
		if err != nil {
			batch.Close()
			if len(got) == 0 {
				t.Fatal(err)
			}
			batch = rc.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 10 << 20})
			continue
		}
		if m.Offset != int64(len(got)) || m.Key != nil {
			t.Fatalf("record %d: offset %d key %q", len(got), m.Offset, m.Key)
		}
		got = append(got, m.Value)
	}
	batch.Close()
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	for name, p := range map[string]Produce{
		"no records": {Topic: "t"},
		"no topic":   {Values: values(1, 1)},
		"huge":       {Topic: "t", Values: [][]byte{make([]byte, MaxFrameSize)}},
	} {
		if _, err := Encode(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseProduceResponse(t *testing.T) {
	for v := int16(3); v <= 8; v++ {
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(v)
		resp.ThrottleMillis = 7
		tp := kmsg.NewProduceResponseTopic()
		tp.Topic = "a"
		p0 := kmsg.NewProduceResponseTopicPartition()
		p0.BaseOffset = 99
		p1 := kmsg.NewProduceResponseTopicPartition()
		p1.Partition, p1.ErrorCode = 5, 6
		tp.Partitions = append(tp.Partitions, p0, p1)
		resp.Topics = append(resp.Topics, tp)
		frame := binary.BigEndian.AppendUint32(nil, 77)
		frame = resp.AppendTo(frame)
		got, err := ParseProduceResponse(frame, v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		want := ProduceResponse{CorrelationID: 77, Partitions: 2, ErrorCode: 6, ErrorTopic: "a", ErrorPartition: 5, BaseOffset: 99, ThrottleMs: 7}
		if got != want {
			t.Errorf("v%d: got %+v, want %+v", v, got, want)
		}
		for n := 0; n < len(frame); n++ {
			if _, err := ParseProduceResponse(frame[:n], v); err == nil {
				t.Fatalf("v%d: %d of %d bytes parsed without error", v, n, len(frame))
			}
		}
	}
	if _, err := ParseProduceResponse(make([]byte, 12), 2); err == nil {
		t.Error("version 2 accepted")
	}
}

func TestReadFrame(t *testing.T) {
	in := append(binary.BigEndian.AppendUint32(nil, 5), "hello"...)
	got, err := ReadFrame(bytes.NewReader(in), make([]byte, 2))
	if err != nil || string(got) != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, bad := range [][]byte{
		binary.BigEndian.AppendUint32(nil, 3),                  // shorter than a correlation id
		binary.BigEndian.AppendUint32(nil, MaxFrameSize+1),     // too large
		append(binary.BigEndian.AppendUint32(nil, 9), "ab"...), // truncated
	} {
		if _, err := ReadFrame(bytes.NewReader(bad), nil); err == nil {
			t.Errorf("ReadFrame(%x) succeeded", bad)
		}
	}
}

// FuzzParseProduceResponse: responses come from the network; no input
// may panic or loop.
func FuzzParseProduceResponse(f *testing.F) {
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(7)
	tp := kmsg.NewProduceResponseTopic()
	tp.Topic = "t"
	tp.Partitions = append(tp.Partitions, kmsg.NewProduceResponseTopicPartition())
	resp.Topics = append(resp.Topics, tp)
	f.Add(resp.AppendTo(binary.BigEndian.AppendUint32(nil, 1)), int16(7))
	f.Add([]byte{0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}, int16(8))
	f.Fuzz(func(t *testing.T, frame []byte, version int16) {
		ParseProduceResponse(frame, version)
	})
}

func BenchmarkEncode(b *testing.B) {
	vs := values(16, 256)
	for b.Loop() {
		mustEncode(b, Produce{Topic: "t", Acks: -1, Values: vs})
	}
}
