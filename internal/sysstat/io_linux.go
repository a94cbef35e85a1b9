//go:build linux

package sysstat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// procSelfIO is the process-wide (thread-group) accounting file. Note that
// /proc/thread-self/io would be per-thread.
const procSelfIO = "/proc/self/io"

// ReadIO returns the current /proc/self/io counters of the whole process
// (units as documented on [IO]).
//
// If the file does not exist or cannot be read (kernel without task I/O
// accounting, some sandboxes, restricted /proc), the error wraps
// [ErrUnsupported]; callers should then omit I/O metrics.
//
// ReadIO itself normally costs exactly one read(2) of a few hundred bytes
// (open and close are not counted), so a delta between two ReadIO calls
// includes Syscr+1 and a small Rchar from the first of them. It never adds to
// Syscw or Wchar.
func ReadIO() (IO, error) { return readIOFile(procSelfIO) }

// ReadThreadIO returns the I/O counters of one thread of another process,
// /proc/PID/task/TID/io: the kernel keeps them per thread, so they count
// that thread's system calls alone (the write-path lab's Java strategies
// read the JVM's sending thread this way, apart from the threads of the
// Flight Recorder and of kbench's own pipes).
func ReadThreadIO(pid, tid int) (IO, error) {
	return readIOFile(fmt.Sprintf("/proc/%d/task/%d/io", pid, tid))
}

func readIOFile(procSelfIO string) (IO, error) {
	f, err := os.Open(procSelfIO)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return IO{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return IO{}, fmt.Errorf("sysstat: %w", err)
	}
	defer f.Close()

	// The file is a seq_file generated in one piece, so a single read
	// with a buffer larger than its content (about 150 bytes) returns all
	// of it. Only fall back to reading until EOF if the buffer fills up.
	var buf [1024]byte
	n, err := f.Read(buf[:])
	switch {
	case err != nil && err != io.EOF:
		if errors.Is(err, fs.ErrPermission) {
			return IO{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return IO{}, fmt.Errorf("sysstat: reading %s: %w", procSelfIO, err)
	case n == len(buf):
		rest, err := io.ReadAll(f)
		if err != nil {
			return IO{}, fmt.Errorf("sysstat: reading %s: %w", procSelfIO, err)
		}
		return ParseIO(io.MultiReader(bytes.NewReader(buf[:n]), bytes.NewReader(rest)))
	}
	return ParseIO(bytes.NewReader(buf[:n]))
}
