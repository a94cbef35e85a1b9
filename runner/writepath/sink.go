package writepath

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// SinkAPIs are the sink's API versions. The sink answers only what a producer needs: version
// negotiation, metadata, topic creation and Produce. Produce stops at v8,
// the last version without flexible encoding, which is all kafka-go and
// kbench's own encoder (v7) use.
var SinkAPIs = []struct{ Key, Min, Max int16 }{
	{0, 3, 8},  // Produce
	{3, 0, 8},  // Metadata
	{18, 0, 3}, // ApiVersions
	{19, 0, 4}, // CreateTopics
}

// Sink is the write-path sink's server: it reads size-prefixed Kafka
// requests and answers them at once: Produce with success and made-up
// offsets (nothing is stored or checked beyond framing), Metadata with
// itself as the leader of partition 0 of every topic asked for,
// ApiVersions with the versions above. `kbench broker --sink`
// (runner.ServeSink) serves it in a process of its own, so its CPU never
// appears in the client's profile; tests serve it in-process.
type Sink struct {
	ln   net.Listener
	host string
	port int32

	recMu  sync.Mutex
	record io.Writer

	mu      sync.Mutex
	topics  []string                   // every topic named so far, for "all topics" metadata
	offsets map[string]map[int32]int64 // next offset per topic and partition
	conns   map[net.Conn]bool
	closed  bool
	wg      sync.WaitGroup
}

// NewSink is a sink on ln that writes every request frame it reads, size
// prefix included, to record when it is not nil (for tests); ln may be
// nil to test the protocol alone.
func NewSink(ln net.Listener, record io.Writer) *Sink {
	s := &Sink{ln: ln, record: record, offsets: map[string]map[int32]int64{}, conns: map[net.Conn]bool{}}
	if ln != nil { // nil in tests of the protocol alone
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		p, _ := strconv.Atoi(port)
		s.host, s.port = host, int32(p)
	}
	return s
}

// Addr is the address the sink listens on.
func (s *Sink) Addr() string { return s.ln.Addr().String() }

// Serve accepts and answers connections until Close.
func (s *Sink) Serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			// handle returns only when the connection ends, always with why.
			err := s.handle(c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isConnReset(err) {
				fmt.Fprintf(os.Stderr, "kbench sink: %s: %v\n", c.RemoteAddr(), err)
			}
		}()
	}
}

func isConnReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// Close stops the sink and waits for its connections to end.
func (s *Sink) Close() {
	s.mu.Lock()
	s.closed = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// handle serves one connection: requests are answered in order, and the
// answers are flushed whenever no further complete request is already
// buffered, so a pipelining client gets its responses in few writes.
func (s *Sink) handle(c net.Conn) error {
	rd := bufio.NewReaderSize(c, 256<<10)
	wr := bufio.NewWriterSize(c, 64<<10)
	var frame, out []byte
	for {
		if !frameBuffered(rd) {
			if err := wr.Flush(); err != nil {
				return err
			}
		}
		var size [4]byte
		if _, err := io.ReadFull(rd, size[:]); err != nil {
			return err
		}
		n := int(int32(binary.BigEndian.Uint32(size[:])))
		if n < 8 || n > 100<<20 {
			return fmt.Errorf("request size %d out of range", n)
		}
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(rd, frame); err != nil {
			return err
		}
		if s.record != nil {
			s.recMu.Lock()
			s.record.Write(size[:])
			s.record.Write(frame)
			s.recMu.Unlock()
		}
		var err error
		out, err = s.answer(out[:0], frame)
		if err != nil {
			return err
		}
		if len(out) > 0 {
			if _, err := wr.Write(out); err != nil {
				return err
			}
		}
	}
}

// frameBuffered reports whether a whole request is already in rd's buffer.
func frameBuffered(rd *bufio.Reader) bool {
	if rd.Buffered() < 4 {
		return false
	}
	b, _ := rd.Peek(4)
	return int(binary.BigEndian.Uint32(b))+4 <= rd.Buffered()
}

// requestHeader is a Kafka request header (v1, or v2 for flexible requests).
type requestHeader struct {
	key, version int16
	correlation  int32
}

// parseRequestHeader splits a request frame into its header and body. It
// does not skip the tagged fields of flexible (header v2) requests: the
// caller knows whether the request is flexible.
func parseRequestHeader(frame []byte) (requestHeader, []byte, error) {
	if len(frame) < 10 {
		return requestHeader{}, nil, errors.New("request header too short")
	}
	h := requestHeader{
		key:         int16(binary.BigEndian.Uint16(frame)),
		version:     int16(binary.BigEndian.Uint16(frame[2:])),
		correlation: int32(binary.BigEndian.Uint32(frame[4:])),
	}
	clientLen := int(int16(binary.BigEndian.Uint16(frame[8:])))
	rest := frame[10:]
	if clientLen > 0 {
		if clientLen > len(rest) {
			return h, nil, errors.New("client id runs past the request")
		}
		rest = rest[clientLen:]
	}
	return h, rest, nil
}

// skipTags skips a tagged-fields section (KIP-482).
func skipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("bad tagged fields")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		if _, k = binary.Uvarint(b); k <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, errors.New("bad tag size")
		}
		b = b[k+int(size):]
	}
	return b, nil
}

// answer appends the response to one request frame (none for acks=0
// Produce requests).
func (s *Sink) answer(out, frame []byte) ([]byte, error) {
	h, body, err := parseRequestHeader(frame)
	if err != nil {
		return out, err
	}
	supported := false
	for _, a := range SinkAPIs {
		if a.Key == h.key && h.version >= a.Min && h.version <= a.Max {
			supported = true
		}
	}
	if h.key == 0 && supported {
		return s.answerProduce(out, h, body)
	}
	if h.key == 18 && !supported {
		// As Kafka does: answer an ApiVersions request of a version it
		// does not know with version 0 and UNSUPPORTED_VERSION, listing
		// what it supports, so the client can retry with one of those.
		resp := s.apiVersions(0)
		resp.ErrorCode = 35
		return appendResponse(out, h.correlation, false, resp), nil
	}
	if !supported {
		return out, fmt.Errorf("API key %d version %d not supported by the sink", h.key, h.version)
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if req.IsFlexible() {
		if body, err = skipTags(body); err != nil {
			return out, err
		}
	}
	if err := req.ReadFrom(body); err != nil {
		return out, fmt.Errorf("API key %d v%d: %w", h.key, h.version, err)
	}
	var resp kmsg.Response
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		resp = s.apiVersions(h.version)
	case *kmsg.MetadataRequest:
		resp = s.metadata(req)
	case *kmsg.CreateTopicsRequest:
		r := kmsg.NewPtrCreateTopicsResponse()
		r.SetVersion(h.version)
		for _, t := range req.Topics {
			s.sawTopic(t.Topic)
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic = t.Topic
			rt.NumPartitions, rt.ReplicationFactor = 1, 1
			r.Topics = append(r.Topics, rt)
		}
		resp = r
	}
	flexible := resp.IsFlexible() && h.key != 18 // ApiVersions answers with header v0, always
	return appendResponse(out, h.correlation, flexible, resp), nil
}

func appendResponse(out []byte, correlation int32, flexibleHeader bool, resp kmsg.Response) []byte {
	start := len(out)
	out = binary.BigEndian.AppendUint32(out, 0)
	out = binary.BigEndian.AppendUint32(out, uint32(correlation))
	if flexibleHeader {
		out = append(out, 0) // no tagged fields
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out[start:], uint32(len(out)-start-4))
	return out
}

func (s *Sink) apiVersions(version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(version)
	for _, a := range SinkAPIs {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.Key, a.Min, a.Max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

func (s *Sink) metadata(req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(req.Version)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = 0, s.host, s.port
	resp.Brokers = append(resp.Brokers, b)
	cluster := "kbench-sink"
	resp.ClusterID = &cluster
	var names []string
	if req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0) {
		s.mu.Lock()
		names = append(names, s.topics...)
		s.mu.Unlock()
	}
	for _, t := range req.Topics {
		if t.Topic != nil {
			s.sawTopic(*t.Topic)
			names = append(names, *t.Topic)
		}
	}
	for _, name := range names {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(name)
		p := kmsg.NewMetadataResponseTopicPartition()
		p.Partition, p.Leader, p.LeaderEpoch = 0, 0, 0
		p.Replicas, p.ISR = []int32{0}, []int32{0}
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func (s *Sink) sawTopic(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.offsets[name]; !ok {
		s.offsets[name] = map[int32]int64{}
		s.topics = append(s.topics, name)
	}
}

// answerProduce parses a Produce request of version 3 to 8 by hand and
// answers every partition with success. It is the sink's hot path: it
// allocates nothing once a topic is known.
func (s *Sink) answerProduce(out []byte, h requestHeader, body []byte) ([]byte, error) {
	d := sinkDecoder{b: body}
	d.str() // transactional id
	acks := d.i16()
	d.i32() // timeout
	start := len(out)
	out = binary.BigEndian.AppendUint32(out, 0) // size, below
	out = binary.BigEndian.AppendUint32(out, uint32(h.correlation))
	topics := d.count()
	out = binary.BigEndian.AppendUint32(out, uint32(topics))
	for t := 0; t < topics && d.err == nil; t++ {
		name := d.str()
		out = binary.BigEndian.AppendUint16(out, uint16(len(name)))
		out = append(out, name...)
		parts := d.count()
		out = binary.BigEndian.AppendUint32(out, uint32(parts))
		for p := 0; p < parts && d.err == nil; p++ {
			index := d.i32()
			records := d.bytes()
			n := int64(1)
			if len(records) >= 61 && records[16] == 2 {
				n = int64(int32(binary.BigEndian.Uint32(records[57:])))
			}
			out = binary.BigEndian.AppendUint32(out, uint32(index))
			out = binary.BigEndian.AppendUint16(out, 0) // no error
			out = binary.BigEndian.AppendUint64(out, uint64(s.advance(name, index, n)))
			out = binary.BigEndian.AppendUint64(out, 0xffffffffffffffff) // log append time: none
			if h.version >= 5 {
				out = binary.BigEndian.AppendUint64(out, 0) // log start offset
			}
			if h.version >= 8 {
				out = binary.BigEndian.AppendUint32(out, 0)      // no record errors
				out = binary.BigEndian.AppendUint16(out, 0xffff) // error message: null
			}
		}
	}
	out = binary.BigEndian.AppendUint32(out, 0) // throttle time
	if d.err != nil {
		return out[:start], fmt.Errorf("malformed Produce v%d request: %w", h.version, d.err)
	}
	if acks == 0 {
		return out[:start], nil // a broker does not answer acks=0
	}
	binary.BigEndian.PutUint32(out[start:], uint32(len(out)-start-4))
	return out, nil
}

// advance hands out n offsets of a topic partition.
func (s *Sink) advance(topic []byte, partition int32, n int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts, ok := s.offsets[string(topic)]
	if !ok {
		name := string(topic)
		parts = map[int32]int64{}
		s.offsets[name] = parts
		s.topics = append(s.topics, name)
	}
	base := parts[partition]
	parts[partition] = base + n
	return base
}

type sinkDecoder struct {
	b   []byte
	err error
}

func (d *sinkDecoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = errors.New("request too short")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *sinkDecoder) i16() int16 {
	if v := d.take(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (d *sinkDecoder) i32() int32 {
	if v := d.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (d *sinkDecoder) count() int {
	n := d.i32()
	if n < 0 || int(n) > len(d.b) {
		if d.err == nil {
			d.err = fmt.Errorf("array length %d", n)
		}
		return 0
	}
	return int(n)
}

func (d *sinkDecoder) str() []byte {
	n := d.i16()
	if n < 0 {
		return nil
	}
	return d.take(int(n))
}

func (d *sinkDecoder) bytes() []byte {
	n := d.i32()
	if n < 0 {
		return nil
	}
	return d.take(int(n))
}
