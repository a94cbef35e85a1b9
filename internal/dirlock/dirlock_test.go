package dirlock

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAcquireInProcess: a second Acquire of a held directory fails at
// once naming the holder; after Release it succeeds.
func TestAcquireInProcess(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(In(dir), "kbench serve")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(In(dir), "kbench serve")
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("second Acquire: %v, want a HeldError", err)
	}
	host, _ := os.Hostname()
	if held.Holder.PID != os.Getpid() || held.Holder.Host != host || held.Holder.Command != "kbench serve" || time.Since(held.Holder.Started) > time.Hour {
		t.Errorf("holder %+v", held.Holder)
	}
	msg := err.Error()
	for _, want := range []string{dir, "kbench serve", "pid " + strconv.Itoa(os.Getpid()), "started "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(In(dir), "kbench serve")
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	l2.Release()
}

// TestAcquireHeldByOtherProcess: a child process holds the lock; Acquire
// here names its pid, and once the child is killed (no Release) the lock
// is free.
func TestAcquireHeldByOtherProcess(t *testing.T) {
	if os.Getenv("DIRLOCK_TEST_HOLD") != "" {
		return // the child's side runs in TestMain
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DIRLOCK_TEST_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	_, err = Acquire(In(dir), "kbench serve")
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.PID != cmd.Process.Pid || held.Holder.Command != "holder" {
		t.Fatalf("Acquire while the child holds it: %v (%+v), child pid %d", err, held, cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("message %q does not name the child", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	l, err := Acquire(In(dir), "kbench serve")
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	l.Release()
}

// TestMain lets the test binary be the child that holds a lock.
func TestMain(m *testing.M) {
	if dir := os.Getenv("DIRLOCK_TEST_HOLD"); dir != "" {
		if _, err := Acquire(In(dir), "holder"); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute) // killed by the test
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseHolder(t *testing.T) {
	h := parseHolder("pid=42\nhost=h1\ncommand=kbench serve\nstarted=2026-12-04T13:40:05Z\n")
	if h.PID != 42 || h.Host != "h1" || h.Command != "kbench serve" || !h.Started.Equal(time.Date(2026, 12, 4, 13, 40, 5, 0, time.UTC)) {
		t.Errorf("%+v", h)
	}
	if got := h.String(); got != "kbench serve (pid 42 on h1, started 2026-12-04 13:40:05 UTC)" {
		t.Errorf("String() = %q", got)
	}
	if got := parseHolder("garbage").String(); got != "another process (which did not say who it is)" {
		t.Errorf("String() = %q", got)
	}
}

// FuzzParseHolder: any lock file's text parses without panicking.
func FuzzParseHolder(f *testing.F) {
	f.Add("pid=1\nhost=h\ncommand=c\nstarted=2026-01-01T00:00:00Z\n")
	f.Add("pid=x\n=\nstarted=")
	f.Fuzz(func(t *testing.T, s string) { _ = parseHolder(s).String() })
}

// TestReleaseRemovesFile: a released lock leaves no file behind, and a
// file replaced under its open descriptor is told apart from the one the
// path names (what Acquire checks after locking, so the removal cannot
// let two processes each hold a lock on a different file).
func TestReleaseRemovesFile(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(In(dir), "kbench serve")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(In(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Release the lock file is still there (stat: %v)", err)
	}

	f, err := os.OpenFile(In(dir), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if same, err := namesFile(In(dir), f); err != nil || !same {
		t.Fatalf("namesFile of the file itself: %v, %v; want true", same, err)
	}
	if err := os.Remove(In(dir)); err != nil {
		t.Fatal(err)
	}
	if same, err := namesFile(In(dir), f); err != nil || same {
		t.Fatalf("namesFile of a removed file: %v, %v; want false", same, err)
	}
	if err := os.WriteFile(In(dir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if same, err := namesFile(In(dir), f); err != nil || same {
		t.Fatalf("namesFile of a replaced file: %v, %v; want false", same, err)
	}
	// The stale descriptor's flock does not keep the new file from being
	// locked: Acquire takes the file the path names now.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(In(dir), "kbench serve")
	if err != nil {
		t.Fatalf("Acquire of the new file: %v", err)
	}
	l2.Release()
}
