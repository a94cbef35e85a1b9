// Package wire encodes Kafka Produce requests the way a client's request
// builder lays them out in memory: as a list of buffers rather than one
// contiguous byte slice. kbench's write-path workload sends these buffers
// with different write strategies (one gathering writev, one write per
// buffer, a copy into one buffer) and compares the cost.
//
// A request of R records is R+2 buffers:
//
//	[0]      the size prefix, the request header (API key, version,
//	         correlation id, client id) and the Produce fields up to the
//	         record batch (transactional id, acks, timeout, the topic and
//	         partition, the batch's length)
//	[1]      the record batch header (61 bytes, magic 2, CRC-32C)
//	[2..R+1] one record each: its length, attributes, timestamp and
//	         offset deltas, a null key, the value and no headers
//
// Requests are Produce version 7 (Kafka 2.1 and later; still accepted by
// Kafka 4, which dropped only versions 0–2) with one uncompressed record
// batch v2 for one partition. The batch carries no producer id, so brokers
// accept it without idempotence or transactions.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// ProduceVersion is the Produce API version of the requests Encode builds
// and ParseProduceResponse reads by default.
const ProduceVersion = 7

// ProduceKey is the Produce API key.
const ProduceKey = 0

// BatchHeaderSize is the size of a record batch v2 header: the second
// buffer of every request.
const BatchHeaderSize = 61

// MaxFrameSize bounds the frames ReadFrame accepts: Kafka's default
// socket.request.max.bytes.
const MaxFrameSize = 100 << 20

// Offsets inside the record batch header.
const (
	batchLengthOff = 8
	crcOff         = 17
	attributesOff  = 21 // the CRC covers the batch from here to its end
	corrIDOff      = 8  // of the correlation id in buffer 0
)

// CorrelationIDOffset is where SetCorrelationID writes the id in the first
// buffer (after the size prefix, API key and version), for a sender that
// changes it itself (the write-path lab's Java program).
const CorrelationIDOffset = corrIDOff

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Produce describes one Produce request: Values become the records of one
// batch for Topic/Partition, all with the same timestamp and null keys.
type Produce struct {
	ClientID  string
	Topic     string
	Partition int32
	// Acks is -1 (all in-sync replicas) or 1 (the leader). 0 is allowed
	// by the protocol, but a broker answers no request sent with it.
	Acks      int16
	TimeoutMs int32
	// Timestamp is the records' create time, in milliseconds since the
	// Unix epoch.
	Timestamp int64
	Values    [][]byte
}

// Request is an encoded Produce request as a list of buffers.
type Request struct {
	bufs [][]byte
	size int
}

// Encode builds the request with correlation id 0; set the real one with
// SetCorrelationID before sending.
func Encode(p Produce) (*Request, error) {
	switch {
	case len(p.Values) == 0:
		return nil, errors.New("wire: a Produce request needs at least one record")
	case p.Topic == "" || len(p.Topic) > 249:
		return nil, fmt.Errorf("wire: topic name must be 1 to 249 bytes, got %d", len(p.Topic))
	case len(p.ClientID) > 1<<15-1:
		return nil, errors.New("wire: client id too long")
	}
	bufs := make([][]byte, 0, len(p.Values)+2)
	bufs = append(bufs, nil, nil) // filled in below
	recordsLen := 0
	for i, v := range p.Values {
		rec := appendRecord(nil, int32(i), 0, v)
		recordsLen += len(rec)
		bufs = append(bufs, rec)
	}
	batchLen := BatchHeaderSize + recordsLen
	if batchLen > MaxFrameSize {
		return nil, fmt.Errorf("wire: record batch of %d bytes exceeds %d", batchLen, MaxFrameSize)
	}

	bh := appendBatchHeader(make([]byte, 0, BatchHeaderSize), batchLen, 0, int32(len(p.Values)), p.Timestamp, p.Timestamp)
	crc := crc32.Update(0, castagnoli, bh[attributesOff:])
	for _, rec := range bufs[2:] {
		crc = crc32.Update(crc, castagnoli, rec)
	}
	binary.BigEndian.PutUint32(bh[crcOff:], crc)
	bufs[1] = bh

	h := make([]byte, 0, 40+len(p.ClientID)+len(p.Topic))
	h = binary.BigEndian.AppendUint32(h, 0) // size, below
	h = binary.BigEndian.AppendUint16(h, ProduceKey)
	h = binary.BigEndian.AppendUint16(h, ProduceVersion)
	h = binary.BigEndian.AppendUint32(h, 0) // correlation id
	h = appendString(h, p.ClientID)
	h = binary.BigEndian.AppendUint16(h, 0xffff) // transactional id: null
	h = binary.BigEndian.AppendUint16(h, uint16(p.Acks))
	h = binary.BigEndian.AppendUint32(h, uint32(p.TimeoutMs))
	h = binary.BigEndian.AppendUint32(h, 1) // one topic
	h = appendString(h, p.Topic)
	h = binary.BigEndian.AppendUint32(h, 1) // one partition
	h = binary.BigEndian.AppendUint32(h, uint32(p.Partition))
	h = binary.BigEndian.AppendUint32(h, uint32(batchLen)) // the records field's length
	size := len(h) + batchLen
	if size > MaxFrameSize {
		return nil, fmt.Errorf("wire: request of %d bytes exceeds %d", size, MaxFrameSize)
	}
	binary.BigEndian.PutUint32(h, uint32(size-4))
	bufs[0] = h
	return &Request{bufs: bufs, size: size}, nil
}

// appendBatchHeader appends a record batch v2 header for count records
// whose batch (header included) is batchLen bytes, with the CRC left zero:
// the caller computes it over everything from the attributes on. The batch
// carries no producer id, epoch or sequence, so brokers accept it without
// idempotence or transactions.
func appendBatchHeader(dst []byte, batchLen int, attributes int16, count int32, baseTimestamp, maxTimestamp int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, 0)                     // base offset
	dst = binary.BigEndian.AppendUint32(dst, uint32(batchLen-12))   // batch length: after this field
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)            // partition leader epoch -1
	dst = append(dst, 2)                                            // magic
	dst = binary.BigEndian.AppendUint32(dst, 0)                     // CRC
	dst = binary.BigEndian.AppendUint16(dst, uint16(attributes))    // compression codec, create time
	dst = binary.BigEndian.AppendUint32(dst, uint32(count-1))       // last offset delta
	dst = binary.BigEndian.AppendUint64(dst, uint64(baseTimestamp)) // base timestamp
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxTimestamp))  // max timestamp
	dst = binary.BigEndian.AppendUint64(dst, 0xffffffffffffffff)    // producer id -1
	dst = binary.BigEndian.AppendUint16(dst, 0xffff)                // producer epoch -1
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)            // base sequence -1
	return binary.BigEndian.AppendUint32(dst, uint32(count))        // record count
}

// appendRecord appends one record v2 with a null key and no headers.
func appendRecord(dst []byte, offsetDelta int32, timestampDelta int64, value []byte) []byte {
	return appendRecordKV(dst, offsetDelta, timestampDelta, nil, value, Headers{})
}

// appendRecordKV appends one record v2: its length, attributes, the
// timestamp and offset deltas, the key (nil: null), the value and the
// headers, all lengths as zigzag varints (the record batch v2 format).
func appendRecordKV(dst []byte, offsetDelta int32, timestampDelta int64, key, value []byte, h Headers) []byte {
	var body [48]byte
	b := body[:0]
	b = append(b, 0)                               // attributes
	b = binary.AppendVarint(b, timestampDelta)     // timestamp delta
	b = binary.AppendVarint(b, int64(offsetDelta)) // offset delta
	if key == nil && h.count == 0 {
		// Kafka's perf tool's records, the common case: one copy of the
		// fields before the value.
		b = append(b, 1)                              // key length: null (-1)
		b = binary.AppendVarint(b, int64(len(value))) // value length
		dst = binary.AppendVarint(dst, int64(len(b)+len(value)+1))
		dst = append(dst, b...)
		dst = append(dst, value...)
		return append(dst, 0) // headers count
	}
	if key == nil {
		b = append(b, 1) // key length: null (-1)
	} else {
		b = binary.AppendVarint(b, int64(len(key)))
	}
	keyEnd := len(b)
	b = binary.AppendVarint(b, int64(len(value))) // value length
	valueEnd := len(b)
	b = binary.AppendVarint(b, int64(h.count)) // headers count
	dst = binary.AppendVarint(dst, int64(len(b)+len(key)+len(value)+len(h.enc)))
	dst = append(dst, b[:keyEnd]...)
	dst = append(dst, key...)
	dst = append(dst, b[keyEnd:valueEnd]...)
	dst = append(dst, value...)
	dst = append(dst, b[valueEnd:]...)
	return append(dst, h.enc...)
}

// RecordSize is the exact encoded size of one record v2, its length
// varint included: what appendRecordKV appends for the same arguments.
func RecordSize(offsetDelta int32, timestampDelta int64, key, value []byte, h Headers) int {
	keyLen := -1
	if key != nil {
		keyLen = len(key)
	}
	return RecordSizeOf(offsetDelta, timestampDelta, keyLen, len(value), h)
}

// RecordSizeOf is RecordSize from the lengths alone; keyLen -1 is a null
// key.
func RecordSizeOf(offsetDelta int32, timestampDelta int64, keyLen, valueLen int, h Headers) int {
	n := 1 + zigzagLen(timestampDelta) + zigzagLen(int64(offsetDelta)) +
		zigzagLen(int64(valueLen)) + valueLen + zigzagLen(int64(h.count)) + len(h.enc)
	if keyLen < 0 {
		n += zigzagLen(-1)
	} else {
		n += zigzagLen(int64(keyLen)) + keyLen
	}
	return zigzagLen(int64(n)) + n
}

// zigzagLen is the size of v as a zigzag varint.
func zigzagLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// Header is one record header: a string key and a value (nil: null).
type Header struct {
	Key   string
	Value []byte
}

// Headers are record headers encoded once (each key and value with its
// varint length), to be appended to any number of records as they are.
// The zero value is no headers.
type Headers struct {
	enc   []byte
	count int
}

// EncodeHeaders encodes hs for RecordBatch.AppendRecord.
func EncodeHeaders(hs []Header) Headers {
	var h Headers
	for _, x := range hs {
		h.enc = binary.AppendVarint(h.enc, int64(len(x.Key)))
		h.enc = append(h.enc, x.Key...)
		if x.Value == nil {
			h.enc = binary.AppendVarint(h.enc, -1)
		} else {
			h.enc = binary.AppendVarint(h.enc, int64(len(x.Value)))
			h.enc = append(h.enc, x.Value...)
		}
	}
	h.count = len(hs)
	return h
}

// Count is the number of headers.
func (h Headers) Count() int { return h.count }

// Len is the headers' encoded size in a record, their count excluded.
func (h Headers) Len() int { return len(h.enc) }

func appendString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// SetCorrelationID sets the correlation id the broker echoes in its
// response. It changes 4 bytes of buffer 0 and nothing else.
func (r *Request) SetCorrelationID(id int32) {
	binary.BigEndian.PutUint32(r.bufs[0][corrIDOff:], uint32(id))
}

// CorrelationID is the request's correlation id.
func (r *Request) CorrelationID() int32 {
	return int32(binary.BigEndian.Uint32(r.bufs[0][corrIDOff:]))
}

// Buffers are the request's buffers in order (see the package comment).
// They are the request's own memory: callers must not modify them, and
// must copy the slice before handing it to net.Buffers.WriteTo, which
// consumes what it is given.
func (r *Request) Buffers() [][]byte { return r.bufs }

// NumBuffers is len(Buffers()): the number of records plus 2.
func (r *Request) NumBuffers() int { return len(r.bufs) }

// Len is the request's size in bytes on the wire, size prefix included.
func (r *Request) Len() int { return r.size }

// AppendTo appends the request's bytes to dst.
func (r *Request) AppendTo(dst []byte) []byte {
	for _, b := range r.bufs {
		dst = append(dst, b...)
	}
	return dst
}
