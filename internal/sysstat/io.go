package sysstat

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// IO holds the counters of /proc/<pid>/io (see proc(5)) for the whole
// process, i.e. summed over all its threads, including threads that have
// already exited. All counters are cumulative since process start; use
// [IO.Sub] to get the activity of a window.
type IO struct {
	// Rchar is the number of bytes returned by read-type system calls
	// (read, readv, pread, ...), including those served from the page
	// cache or from sockets and pipes. Unit: bytes.
	Rchar int64
	// Wchar is the number of bytes passed successfully to write-type
	// system calls (write, writev, pwrite, ...), including writes to
	// sockets and pipes. Unit: bytes.
	Wchar int64
	// Syscr is the number of read-type system calls (read, readv, pread,
	// ...). One call counts once however many buffers it carries.
	// Unit: calls.
	Syscr int64
	// Syscw is the number of write-type system calls that go through the
	// VFS write path (write, writev, pwrite, pwritev). One writev of 16
	// buffers counts 1; 16 writes count 16. Note: on the kernels observed
	// while writing this package, send(2), sendto(2) and sendmsg(2) on a
	// socket are NOT counted, because they bypass the VFS write path.
	// Go's net package uses write and writev for TCP, so Go clients are
	// fully counted. Unit: calls.
	Syscw int64
	// ReadBytes is the number of bytes this process caused to be fetched
	// from the storage layer (block devices); page-cache hits and socket
	// traffic are not included. Unit: bytes.
	ReadBytes int64
	// WriteBytes is the number of bytes this process caused to be sent to
	// the storage layer (block devices). Unit: bytes.
	WriteBytes int64
	// CancelledWriteBytes is the number of bytes whose write-back was
	// cancelled, e.g. by truncating dirty page cache. Unit: bytes.
	CancelledWriteBytes int64
}

// Sub returns a - b field by field. Pass the later snapshot as the
// receiver and the earlier one as the argument to get the activity between
// them. Units are those of the fields.
func (a IO) Sub(b IO) IO {
	return IO{
		Rchar:               a.Rchar - b.Rchar,
		Wchar:               a.Wchar - b.Wchar,
		Syscr:               a.Syscr - b.Syscr,
		Syscw:               a.Syscw - b.Syscw,
		ReadBytes:           a.ReadBytes - b.ReadBytes,
		WriteBytes:          a.WriteBytes - b.WriteBytes,
		CancelledWriteBytes: a.CancelledWriteBytes - b.CancelledWriteBytes,
	}
}

// ioFields maps the key names used in /proc/<pid>/io to the IO fields.
var ioFields = [...]struct {
	key string
	ptr func(*IO) *int64
}{
	{"rchar", func(v *IO) *int64 { return &v.Rchar }},
	{"wchar", func(v *IO) *int64 { return &v.Wchar }},
	{"syscr", func(v *IO) *int64 { return &v.Syscr }},
	{"syscw", func(v *IO) *int64 { return &v.Syscw }},
	{"read_bytes", func(v *IO) *int64 { return &v.ReadBytes }},
	{"write_bytes", func(v *IO) *int64 { return &v.WriteBytes }},
	{"cancelled_write_bytes", func(v *IO) *int64 { return &v.CancelledWriteBytes }},
}

// ParseIO parses text in the format of /proc/<pid>/io: one "key: value"
// line per counter, values being non-negative decimal integers. Counters
// are in the units documented on [IO].
//
// The parser is strict where leniency could hide a wrong number: all seven
// known keys must be present exactly once, their values must be plain
// decimal integers fitting in an int64, and every non-blank line must have
// the "key: value" shape. Lines with unknown keys are accepted and ignored,
// so that a kernel adding a counter does not break callers.
func ParseIO(r io.Reader) (IO, error) {
	var (
		v    IO
		seen [len(ioFields)]bool
	)
	sc := bufio.NewScanner(r)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return IO{}, fmt.Errorf("sysstat: io line %d: missing ':' in %q", lineNo, truncate(line))
		}
		if len(key) == 0 || bytes.ContainsAny(key, " \t\r\v\f") {
			return IO{}, fmt.Errorf("sysstat: io line %d: malformed key in %q", lineNo, truncate(line))
		}
		idx := -1
		for i := range ioFields {
			if ioFields[i].key == string(key) {
				idx = i
				break
			}
		}
		if idx < 0 {
			continue // unknown counter: ignore
		}
		if seen[idx] {
			return IO{}, fmt.Errorf("sysstat: io line %d: duplicate key %q", lineNo, key)
		}
		// ParseUint with bitSize 63 rejects signs, spaces inside the
		// number, and values that do not fit in an int64.
		n, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 63)
		if err != nil {
			return IO{}, fmt.Errorf("sysstat: io line %d: bad value for %q: %w", lineNo, key, err)
		}
		*ioFields[idx].ptr(&v) = int64(n)
		seen[idx] = true
	}
	if err := sc.Err(); err != nil {
		return IO{}, fmt.Errorf("sysstat: reading io counters: %w", err)
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, ioFields[i].key)
		}
	}
	if len(missing) > 0 {
		return IO{}, fmt.Errorf("sysstat: io counters missing: %s", strings.Join(missing, ", "))
	}
	return v, nil
}

// truncate shortens b for inclusion in an error message.
func truncate(b []byte) []byte {
	const limit = 64
	if len(b) > limit {
		return b[:limit]
	}
	return b
}
