// Package gzbomb builds decompression bombs for tests: gzip files that
// expand a thousandfold, built in milliseconds rather than by compressing
// a gibibyte. Each is a single gzip member (one header, one deflate
// stream, one trailer with the right CRC-32 and size), as gzip -9 of the
// same content would be; only the deflate blocks differ.
package gzbomb

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
)

// chunkSize is about how much content one repeated run of blocks expands
// to.
const chunkSize = 1 << 20

// Repeat returns a gzip file of prefix followed by content repeated until
// it holds n bytes (content is cut at the end). The deflate stream is
// prefix compressed, then the compressed form of one 1 MiB run of content
// repeated: a run compressed by a fresh compressor refers to nothing
// before it, so its blocks decode the same wherever they stand.
func Repeat(prefix, content []byte, n int64) []byte {
	if len(content) == 0 {
		panic("gzbomb: empty content")
	}
	var out bytes.Buffer
	// The gzip header and the prefix, flushed to a byte boundary without
	// ending the deflate stream.
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write(prefix)
	zw.Flush()
	// gzip.Writer.Flush leaves the stream open; what follows is written
	// by hand, so the writer is dropped without Close.
	crc := crc32.ChecksumIEEE(prefix)
	size := uint64(len(prefix))

	// A whole number of contents, so every run starts where content does.
	run := bytes.Repeat(content, max(1, chunkSize/len(content)))
	block := deflatedRun(run)
	runCRC, shift := crc32.ChecksumIEEE(run), xPow8n(int64(len(run)))
	for left := n; left > 0; {
		if left >= int64(len(run)) {
			out.Write(block)
			// The checksum of crc's bytes followed by run's, without
			// reading a gibibyte of run again.
			crc = mulModP(shift, crc) ^ runCRC
			left -= int64(len(run))
			size += uint64(len(run))
			continue
		}
		tail := run[:left]
		out.Write(deflated(tail))
		crc = crc32.Update(crc, crc32.IEEETable, tail)
		size += uint64(left)
		left = 0
	}
	// The final block: empty and stored (BFINAL=1, BTYPE=00, LEN=0).
	out.Write([]byte{0x01, 0x00, 0x00, 0xff, 0xff})
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc)
	binary.LittleEndian.PutUint32(trailer[4:], uint32(size))
	out.Write(trailer[:])
	return out.Bytes()
}

// Zeros is a gzip file of prefix followed by n zero bytes.
func Zeros(prefix []byte, n int64) []byte {
	return Repeat(prefix, []byte{0}, n)
}

// runs caches the compressed runs: tests build many bombs of the same
// content, and compressing a mebibyte takes a while under the race
// detector.
var runs sync.Map // string(run) → []byte

func deflatedRun(run []byte) []byte {
	if b, ok := runs.Load(string(run)); ok {
		return b.([]byte)
	}
	b := deflated(run)
	runs.Store(string(run), b)
	return b
}

// deflated is b compressed by a fresh compressor and sync-flushed: non-final
// blocks ending on a byte boundary.
func deflated(b []byte) []byte {
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		panic(fmt.Sprintf("gzbomb: %v", err))
	}
	fw.Write(b)
	fw.Flush()
	return buf.Bytes()
}

// CRC-32 arithmetic: a CRC is a polynomial over GF(2) modulo P, and the
// CRC of A followed by B is CRC(A)·x^(8·len(B)) + CRC(B). Polynomials are
// bit-reflected, as the IEEE CRC-32 stores them: bit 31 is x⁰.
const poly = 0xedb88320

// mulModP is a·b mod P.
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8n is x^(8n) mod P, by squaring.
func xPow8n(n int64) uint32 {
	result := uint32(1) << 31 // x⁰
	sq := uint32(1) << 23     // x⁸
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			result = mulModP(result, sq)
		}
		sq = mulModP(sq, sq)
	}
	return result
}
