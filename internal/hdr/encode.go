package hdr

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// HdrHistogram's V2 encoding, which its Java, Go and JavaScript libraries
// and its log files (.hlog) share: a 40-byte big-endian header (cookie,
// payload length, normalizing index offset, significant digits, lowest
// and highest trackable values, integer-to-double conversion ratio), then
// the counters from the first to the one holding the largest value, each
// a ZigZag LEB128 number, a run of n > 1 empty counters written as −n.
// The compressed form is a cookie, the length of what follows, and the
// zlib stream of that whole V2 encoding.
const (
	cookieV2           = 0x1c849313
	cookieV2Compressed = 0x1c849314
	v2HeaderBytes      = 40
)

// Limits of Decode, for encodings that come from outside.
const (
	// MaxEncodedLen is the longest base64 text Decode reads: a histogram
	// of kbench's layout with every counter in use takes about 40 kB.
	MaxEncodedLen = 1 << 20
	// MaxDecodedBytes bounds the inflated V2 encoding, so a small zlib
	// bomb cannot take the memory.
	MaxDecodedBytes = 1 << 20
	// MaxCounters bounds the layout a decoded header may ask for.
	MaxCounters = 1 << 20
)

// Encode returns h in HdrHistogram's compressed V2 encoding, base64 with
// padding.
func (h *Histogram) Encode() string {
	// The counters up to the one holding the largest value (one for an
	// empty histogram).
	limit := 1
	for i := len(h.counts) - 1; i >= 0; i-- {
		if h.counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	var payload []byte
	for i := 0; i < limit; {
		c := h.counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && h.counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				payload = appendZigZag(payload, -zeros)
				continue
			}
		}
		payload = appendZigZag(payload, c)
	}
	raw := make([]byte, v2HeaderBytes, v2HeaderBytes+len(payload))
	binary.BigEndian.PutUint32(raw[0:], cookieV2)
	binary.BigEndian.PutUint32(raw[4:], uint32(len(payload)))
	binary.BigEndian.PutUint32(raw[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(raw[12:], uint32(h.digits))
	binary.BigEndian.PutUint64(raw[16:], uint64(h.lowest))
	binary.BigEndian.PutUint64(raw[24:], uint64(h.highest))
	binary.BigEndian.PutUint64(raw[32:], math.Float64bits(1))
	raw = append(raw, payload...)

	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw) // a bytes.Buffer does not fail
	zw.Close()
	out := make([]byte, 8, 8+z.Len())
	binary.BigEndian.PutUint32(out[0:], cookieV2Compressed)
	binary.BigEndian.PutUint32(out[4:], uint32(z.Len()))
	out = append(out, z.Bytes()...)
	return base64.StdEncoding.EncodeToString(out)
}

// ErrEncoding is wrapped by every error of Decode.
var ErrEncoding = errors.New("hdr: not an HdrHistogram compressed V2 encoding")

// Decode reads a histogram from HdrHistogram's compressed V2 encoding,
// base64 with padding, as Encode writes it and HdrHistogram's libraries
// do. Its layout is the header's. Input over the limits (MaxEncodedLen,
// MaxDecodedBytes, MaxCounters), another encoding (V0, V1, uncompressed)
// or a counter past the layout's end is an error wrapping ErrEncoding.
func Decode(text string) (*Histogram, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrEncoding, fmt.Sprintf(format, args...))
	}
	if len(text) > MaxEncodedLen {
		return nil, bad("%d bytes of base64, more than %d", len(text), MaxEncodedLen)
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, bad("base64: %v", err)
	}
	if len(data) < 8 {
		return nil, bad("%d bytes, shorter than its 8-byte header", len(data))
	}
	switch cookie := binary.BigEndian.Uint32(data); cookie {
	case cookieV2Compressed:
	case cookieV2:
		return nil, bad("an uncompressed V2 encoding (cookie %#x): want the compressed one (%#x)", cookie, uint32(cookieV2Compressed))
	default:
		return nil, bad("cookie %#x: want %#x (compressed V2)", cookie, uint32(cookieV2Compressed))
	}
	if n := binary.BigEndian.Uint32(data[4:]); int64(n) != int64(len(data)-8) {
		return nil, bad("the header says %d compressed bytes, %d follow", n, len(data)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(data[8:]))
	if err != nil {
		return nil, bad("zlib: %v", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxDecodedBytes+1))
	if err != nil {
		return nil, bad("zlib: %v", err)
	}
	if len(raw) > MaxDecodedBytes {
		return nil, bad("more than %d bytes once inflated", MaxDecodedBytes)
	}
	if len(raw) < v2HeaderBytes {
		return nil, bad("%d bytes inflated, shorter than the 40-byte V2 header", len(raw))
	}
	if c := binary.BigEndian.Uint32(raw); c != cookieV2 {
		return nil, bad("inner cookie %#x: want %#x (V2)", c, uint32(cookieV2))
	}
	payloadLen := int64(binary.BigEndian.Uint32(raw[4:]))
	digits := int32(binary.BigEndian.Uint32(raw[12:]))
	lowest := int64(binary.BigEndian.Uint64(raw[16:]))
	highest := int64(binary.BigEndian.Uint64(raw[24:]))
	ratio := math.Float64frombits(binary.BigEndian.Uint64(raw[32:]))
	// Bytes 8–11, the normalizing index offset, are not read: they
	// describe the writer's memory, and the counts come in value order
	// whatever they say (Java's shifted histograms; hdrhistogram-go before
	// v1.3 wrote 1). A lowest value of 0 (hdrhistogram-go v1.0) means 1.
	lowest = max(lowest, 1)
	switch {
	case payloadLen != int64(len(raw)-v2HeaderBytes):
		return nil, bad("the header says %d bytes of counts, %d follow", payloadLen, len(raw)-v2HeaderBytes)
	case digits < 1 || digits > 5:
		return nil, bad("%d significant digits: want 1 to 5", digits)
	case lowest < 1 || highest < 2*lowest || highest > math.MaxInt64/2:
		return nil, bad("trackable range %d to %d: want 1 ≤ lowest and 2 × lowest ≤ highest ≤ 2^62", lowest, highest)
	case !(ratio > 0) || math.IsInf(ratio, 0):
		return nil, bad("conversion ratio %v: want a positive number", ratio)
	}
	// The layout's size, before it is made: a header may ask for any.
	if n := New(lowest, 2*lowest, int(digits)).countersTo(highest); n > MaxCounters {
		return nil, bad("a layout of %d counters, more than %d", n, MaxCounters)
	}
	h := New(lowest, highest, int(digits))
	p := raw[v2HeaderBytes:]
	i := 0
	top := -1
	for len(p) > 0 {
		v, n := readZigZag(p)
		if n == 0 {
			return nil, bad("a count cut short at byte %d of the counts", len(raw)-v2HeaderBytes-len(p))
		}
		p = p[n:]
		if v < 0 {
			if v == math.MinInt64 || -v > int64(len(h.counts)-i) {
				return nil, bad("a run of %d empty counters past the layout's %d", -v, len(h.counts))
			}
			i += int(-v)
			continue
		}
		if i >= len(h.counts) {
			return nil, bad("more counters than the layout's %d", len(h.counts))
		}
		if v > 0 {
			if h.total > math.MaxInt64-v {
				return nil, bad("counts add up past 2^63")
			}
			h.counts[i] = v
			h.total += v
			top = i
		}
		i++
	}
	if top >= 0 {
		h.max = h.valueAt(top)
	}
	return h, nil
}

// appendZigZag appends v as HdrHistogram writes a count: ZigZag, then
// LEB128 of at most 9 bytes (the ninth holds the last 8 bits whole).
func appendZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u < 0x80 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// readZigZag reads one count appendZigZag wrote; n is 0 when p ends
// inside it.
func readZigZag(p []byte) (v int64, n int) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i >= len(p) {
			return 0, 0
		}
		c := p[i]
		if i == 8 {
			u |= uint64(c) << 56
			n = 9
			break
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			n = i + 1
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), n
}
