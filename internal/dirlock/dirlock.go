// Package dirlock keeps two processes from using one directory: a lock
// file in it, held (flock) for the life of the process that took it and
// released by the kernel when that process ends, however it ends. The
// file says who holds it (pid, host, command, start time), so the one
// refused can name the other. kbench serve takes it on an SQLite store's
// data directory, where two servers would both run the queued runs and
// each mark the other's running runs interrupted.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FileName is the lock file's name in a directory (see In).
const FileName = "kbench.lock"

// In is the lock file of directory dir.
func In(dir string) string { return filepath.Join(dir, FileName) }

// Lock is a held lock; Release lets it go (the end of the process does
// too).
type Lock struct{ f *os.File }

// Holder is what a lock file says about the process holding it; zero
// fields were not recorded (a holder that had not finished writing).
type Holder struct {
	PID     int
	Host    string
	Command string
	Started time.Time
}

// String names the holder for a message: "kbench serve (pid 1234 on
// host-a, started 2026-12-04 13:40:05 UTC)".
func (h Holder) String() string {
	var parts []string
	if h.PID > 0 {
		p := "pid " + strconv.Itoa(h.PID)
		if h.Host != "" {
			p += " on " + h.Host
		}
		parts = append(parts, p)
	}
	if !h.Started.IsZero() {
		parts = append(parts, "started "+h.Started.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	name := h.Command
	if name == "" {
		name = "another process"
	}
	if len(parts) == 0 {
		return name + " (which did not say who it is)"
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
}

// HeldError is Acquire's error when another process holds the lock.
type HeldError struct {
	Path   string // the lock file
	Holder Holder
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is held by %s", e.Path, e.Holder)
}

// ErrHeld matches a *HeldError with errors.Is.
var ErrHeld = errors.New("directory in use by another process")

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Acquire takes the lock file at path (In(dir) for a directory, which
// must exist) for command (such as "kbench serve"), writing this
// process's pid, host, command and start time into it. It fails at once
// with a *HeldError naming the holder when another process (or another
// Acquire of this one) holds it. The file is opened close-on-exec, so the
// processes this one starts never hold it.
func Acquire(path, command string) (*Lock, error) {
	var f *os.File
	// A lock file is removed when its holder releases it, so the one this
	// process opened may be unlinked between the open and the flock: a
	// lock on it would guard nothing. Lock, then check that the path
	// still names the file locked; if not, start again with the new one.
	for try := 0; ; try++ {
		var err error
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			defer f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &HeldError{Path: path, Holder: readHolder(f)}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if same, err := namesFile(path, f); err != nil || same {
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("lock %s: %w", path, err)
			}
			break
		}
		f.Close()
		if try == 10 {
			return nil, fmt.Errorf("lock %s: the file kept being replaced while it was being locked", path)
		}
	}
	host, _ := os.Hostname()
	text := fmt.Sprintf("pid=%d\nhost=%s\ncommand=%s\nstarted=%s\n", os.Getpid(), host, command, time.Now().UTC().Format(time.RFC3339))
	err := f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(text), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// readHolder reads what the holder wrote; a holder that has not written
// yet (it writes right after taking the lock) gets a few short retries.
func readHolder(f *os.File) Holder {
	var h Holder
	for try := 0; try < 5; try++ {
		buf := make([]byte, 4<<10)
		n, _ := f.ReadAt(buf, 0)
		h = parseHolder(string(buf[:n]))
		if h.PID > 0 && !h.Started.IsZero() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return h
}

// parseHolder reads the lines KEY=VALUE of a lock file.
func parseHolder(text string) Holder {
	var h Holder
	for _, line := range strings.Split(text, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "pid":
			h.PID, _ = strconv.Atoi(v)
		case "host":
			h.Host = v
		case "command":
			h.Command = v
		case "started":
			h.Started, _ = time.Parse(time.RFC3339, v)
		}
	}
	return h
}

// Release lets the lock go and removes the lock file, so a directory
// holds no trace of a process that has ended cleanly (one that dies
// leaves the file, unlocked, for the next Acquire to take). Removing it
// while still holding the lock is safe because Acquire checks, once
// locked, that the path still names the file it locked.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	rmErr := os.Remove(l.f.Name())
	if errors.Is(rmErr, os.ErrNotExist) {
		rmErr = nil
	}
	err := l.f.Close() // closing the only descriptor drops the flock
	l.f = nil
	return errors.Join(rmErr, err)
}

// namesFile reports whether path is, right now, the file f has open.
func namesFile(path string, f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}
