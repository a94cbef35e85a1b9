package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Compressor compresses the records of a batch. Codec is the codec id the
// batch's attributes carry (1 gzip, 2 snappy, 3 lz4, 4 zstd); Append
// appends src, compressed, to dst. The codecs themselves come from the
// caller (kbench uses kafka-go's), so this package stays free of them.
type Compressor struct {
	Codec  int8
	Append func(dst, src []byte) ([]byte, error)
}

// StreamCompressor adapts a streaming codec, such as kafka-go's
// compress.Codec (pass its Code() and NewWriter), to a Compressor.
func StreamCompressor(codec int8, newWriter func(io.Writer) io.WriteCloser) *Compressor {
	return &Compressor{Codec: codec, Append: func(dst, src []byte) ([]byte, error) {
		buf := bytes.NewBuffer(dst)
		w := newWriter(buf)
		if _, err := w.Write(src); err != nil {
			w.Close()
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}}
}

// RecordBatch builds one record batch v2 as records arrive, in a single
// contiguous buffer: header space first, then each record as it is
// appended. Unlike Encode, which lays a request out as many buffers for the
// write-path lab, this is the layout a producer wants when it hands a
// finished batch to a transport (kafka-go's Client.RawProduce): nothing is
// encoded twice and no per-record object is kept.
//
// Records carry a key (or a null one) and headers as the caller gives
// them. The zero value is an empty batch; reuse one with Reset, and size
// its buffer once with Reserve.
type RecordBatch struct {
	buf   []byte // BatchHeaderSize bytes of header space, then the records
	out   []byte // the finished batch when compressed
	count int32
	base  int64 // timestamp of the first record, ms since the epoch
	max   int64
}

// Reset empties the batch and keeps its memory.
func (b *RecordBatch) Reset() {
	b.buf, b.out = b.buf[:0], b.out[:0]
	b.count, b.base, b.max = 0, 0, 0
}

// Reserve makes room for a batch of n bytes, header included, so that
// appending up to n bytes of records allocates nothing. A producer sizes
// each batch's buffer to batch.size once, as Kafka's BufferPool does,
// instead of letting every buffer grow by doubling.
func (b *RecordBatch) Reserve(n int) {
	if cap(b.buf) < n {
		b.buf = append(make([]byte, 0, n), b.buf...)
	}
}

// Append adds a record created at timestampMs (milliseconds since the
// Unix epoch) with the given value, a null key and no headers.
func (b *RecordBatch) Append(timestampMs int64, value []byte) {
	b.AppendRecord(timestampMs, nil, value, Headers{})
}

// AppendRecord adds a record created at timestampMs (milliseconds since
// the Unix epoch) with key (nil for a null key), value and headers.
func (b *RecordBatch) AppendRecord(timestampMs int64, key, value []byte, h Headers) {
	if b.count == 0 {
		if cap(b.buf) < BatchHeaderSize {
			b.buf = make([]byte, 0, 64<<10)
		}
		b.buf = b.buf[:BatchHeaderSize]
		b.base, b.max = timestampMs, timestampMs
	}
	b.max = max(b.max, timestampMs)
	b.buf = appendRecordKV(b.buf, b.count, timestampMs-b.base, key, value, h)
	b.count++
}

// Count is the number of records appended since the last Reset.
func (b *RecordBatch) Count() int { return int(b.count) }

// Len is the batch's uncompressed size in bytes, header included, or 0 for
// an empty batch: what Kafka's batch.size limits.
func (b *RecordBatch) Len() int {
	if b.count == 0 {
		return 0
	}
	return len(b.buf)
}

// ErrEmptyBatch is returned by Finish for a batch without records, which
// no broker accepts.
var ErrEmptyBatch = errors.New("wire: a record batch needs at least one record")

// Finish completes the batch (lengths, attributes, CRC-32C) and returns
// its bytes, compressing the records with c unless c is nil. The bytes
// belong to the batch: they stay valid until the next Reset or Append.
func (b *RecordBatch) Finish(c *Compressor) ([]byte, error) {
	if b.count == 0 {
		return nil, ErrEmptyBatch
	}
	out := b.buf
	var attributes int16
	if c != nil {
		if c.Codec < 1 || c.Codec > 4 {
			return nil, fmt.Errorf("wire: compression codec %d is not one of 1 to 4", c.Codec)
		}
		var err error
		out, err = c.Append(append(b.out[:0], make([]byte, BatchHeaderSize)...), b.buf[BatchHeaderSize:])
		if err != nil {
			return nil, fmt.Errorf("wire: compress record batch: %w", err)
		}
		b.out = out
		attributes = int16(c.Codec)
	}
	if len(out) > MaxFrameSize {
		return nil, fmt.Errorf("wire: record batch of %d bytes exceeds %d", len(out), MaxFrameSize)
	}
	appendBatchHeader(out[:0], len(out), attributes, b.count, b.base, b.max)
	binary.BigEndian.PutUint32(out[crcOff:], crc32.Checksum(out[attributesOff:], castagnoli))
	return out, nil
}

// RecordsField reads a finished batch as the records field of a Produce
// request carries it: an int32 length, then the batch. kafka-go's
// protocol.RawRecordSet copies its Reader into the request verbatim, so
// the length must be part of what it reads.
type RecordsField struct {
	size  [4]byte
	batch []byte
	off   int // bytes of size+batch already read
}

// NewRecordsField returns a reader of batch as a records field. batch must
// not change until the field has been read.
func NewRecordsField(batch []byte) *RecordsField {
	f := &RecordsField{batch: batch}
	binary.BigEndian.PutUint32(f.size[:], uint32(len(batch)))
	return f
}

// Read implements io.Reader.
func (f *RecordsField) Read(p []byte) (int, error) {
	n := 0
	if f.off < len(f.size) {
		n = copy(p, f.size[f.off:])
		f.off += n
		p = p[n:]
	}
	if f.off >= len(f.size) {
		k := copy(p, f.batch[f.off-len(f.size):])
		f.off += k
		n += k
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo implements io.WriterTo, so io.Copy hands the batch to w in two
// writes instead of through a copy buffer.
func (f *RecordsField) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for f.off < len(f.size)+len(f.batch) {
		var chunk []byte
		if f.off < len(f.size) {
			chunk = f.size[f.off:]
		} else {
			chunk = f.batch[f.off-len(f.size):]
		}
		n, err := w.Write(chunk)
		f.off += n
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
