package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrShort means a response ended before its last field.
var ErrShort = errors.New("wire: response too short")

// ReadFrame reads one size-prefixed Kafka frame from r and returns its
// bytes without the size prefix. It reads into buf when buf is large
// enough, so a caller that passes the previous frame back allocates only
// when a frame is larger than any before.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > MaxFrameSize {
		return nil, fmt.Errorf("wire: frame size %d out of range [4, %d]", n, MaxFrameSize)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// ProduceResponse is what a client needs from a Produce response: which
// request it answers and whether every partition succeeded.
type ProduceResponse struct {
	CorrelationID int32
	// Partitions is the number of partitions answered.
	Partitions int
	// ErrorCode is the first non-zero partition error code, 0 when none;
	// ErrorTopic and ErrorPartition say where it was.
	ErrorCode      int16
	ErrorTopic     string
	ErrorPartition int32
	// BaseOffset is the offset the broker gave the first partition's batch.
	BaseOffset int64
	ThrottleMs int32
}

// ParseProduceResponse parses a Produce response frame (as ReadFrame
// returns it: correlation id first) of the given version, 3 to 8. It
// allocates only when a partition failed (the topic name).
func ParseProduceResponse(frame []byte, version int16) (ProduceResponse, error) {
	var resp ProduceResponse
	if version < 3 || version > 8 {
		return resp, fmt.Errorf("wire: Produce response version %d not supported (3 to 8)", version)
	}
	d := decoder{b: frame}
	resp.CorrelationID = d.int32()
	topics := d.arrayLen()
	for t := 0; t < topics && d.err == nil; t++ {
		name := d.bytes16()
		parts := d.arrayLen()
		for p := 0; p < parts && d.err == nil; p++ {
			index := d.int32()
			code := d.int16()
			base := d.int64()
			d.int64() // log append time
			if version >= 5 {
				d.int64() // log start offset
			}
			if version >= 8 {
				errs := d.arrayLen() // record errors
				for i := 0; i < errs && d.err == nil; i++ {
					d.int32()   // batch index
					d.bytes16() // message
				}
				d.bytes16() // error message
			}
			if d.err != nil {
				break
			}
			if resp.Partitions == 0 {
				resp.BaseOffset = base
			}
			resp.Partitions++
			if code != 0 && resp.ErrorCode == 0 {
				resp.ErrorCode, resp.ErrorTopic, resp.ErrorPartition = code, string(name), index
			}
		}
	}
	resp.ThrottleMs = d.int32()
	if d.err != nil {
		return resp, d.err
	}
	if len(d.b) != 0 {
		return resp, fmt.Errorf("wire: %d bytes after the end of a Produce v%d response", len(d.b), version)
	}
	return resp, nil
}

// decoder reads big-endian fields; the first short read sets err and
// makes every later read return zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.err = ErrShort
		d.b = nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) int16() int16 {
	if v := d.take(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (d *decoder) int32() int32 {
	if v := d.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (d *decoder) int64() int64 {
	if v := d.take(8); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// arrayLen reads an int32 array length; -1 (null) reads as 0. A length
// larger than the bytes left cannot be right and is an error, so garbage
// never makes a caller loop for long.
func (d *decoder) arrayLen() int {
	n := d.int32()
	switch {
	case d.err != nil || n == -1:
		return 0
	case n < -1 || int(n) > len(d.b):
		d.err = fmt.Errorf("wire: array length %d with %d bytes left", n, len(d.b))
		return 0
	}
	return int(n)
}

// bytes16 reads an int16-length (nullable) string.
func (d *decoder) bytes16() []byte {
	n := d.int16()
	if d.err != nil || n == -1 {
		return nil
	}
	if n < -1 {
		d.err = fmt.Errorf("wire: string length %d", n)
		return nil
	}
	return d.take(int(n))
}
