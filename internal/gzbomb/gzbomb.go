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
	block := deflated(run)
	for left := n; left > 0; {
		if left >= int64(len(run)) {
			out.Write(block)
			crc = crc32.Update(crc, crc32.IEEETable, run)
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
