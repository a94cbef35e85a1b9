package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/dirlock"
	"github.com/kbench/kbench/server"
)

// TestServeRefusesLockedDataDir: while another holder has the data
// directory's lock (taken here, as a server would), serve exits 1 naming
// it, before opening the store; an SQLite --database outside the data
// directory is locked too.
func TestServeRefusesLockedDataDir(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Acquire(dirlock.In(dir), "kbench serve")
	if err != nil {
		t.Fatal(err)
	}
	// Were the lock not checked, serve would serve: the context ends it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	set := serveSettings{Listen: "127.0.0.1:0", Config: server.Config{DataDir: dir, Concurrency: 1, Loopback: true, RunTimeout: time.Minute}}
	if code := serve(ctx, set, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr.String())
	}
	msg := stderr.String()
	for _, want := range []string{"the data directory " + dir + " is in use by kbench serve (pid " + strconv.Itoa(os.Getpid()), "started ", "choose another --data"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q lacks %q", msg, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kbench.db")); !os.IsNotExist(err) {
		t.Errorf("the refused server opened the store: %v", err)
	}
	l.Release()

	// An SQLite file elsewhere: its FILE.lock.
	db := filepath.Join(t.TempDir(), "shared.db")
	l, err = dirlock.Acquire(db+".lock", "kbench serve")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	stderr.Reset()
	set.Database = db
	if code := serve(ctx, set, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "the database "+db+" is in use by kbench serve (pid ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestServeTwoProcessesOneDataDir: a second `kbench serve` on the data
// directory of a running one refuses to start, naming the first's pid;
// once the first has stopped, it starts.
func TestServeTwoProcessesOneDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve twice")
	}
	bin := e2eKbench(t)
	data := t.TempDir()
	start := func() (*exec.Cmd, *e2eBuffer, *e2eBuffer, chan error) {
		cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KBENCH_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		var out, errb e2eBuffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd, &out, &errb, done
	}
	waitServing := func(out, errb *e2eBuffer, done chan error) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !e2eServingLine.MatchString(out.String()); {
			select {
			case err := <-done:
				t.Fatalf("kbench serve exited (%v): %s", err, errb.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("kbench serve did not start: %s", errb.String())
			}
		}
	}
	first, out1, err1, done1 := start()
	waitServing(out1, err1, done1)

	_, out2, err2, done2 := start()
	select {
	case err := <-done2:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("second serve: %v, want exit status 1", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the second kbench serve on %s is still running: %s", data, out2.String())
	}
	if msg := err2.String(); !strings.Contains(msg, "is in use by kbench serve (pid "+strconv.Itoa(first.Process.Pid)) || !strings.Contains(msg, "started ") {
		t.Errorf("second serve's message %q does not name the first (pid %d)", msg, first.Process.Pid)
	}
	if e2eServingLine.MatchString(out2.String()) {
		t.Errorf("the second serve served: %s", out2.String())
	}

	if err := first.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-done1; err != nil {
		t.Fatalf("first serve after SIGINT: %v", err)
	}
	third, out3, err3, done3 := start()
	waitServing(out3, err3, done3)
	_ = third.Process.Signal(os.Interrupt)
	<-done3
}
