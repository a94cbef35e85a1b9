// Package kbenchbin gives tests the real kbench binary, built without the
// race detector, and `kbench broker` processes started from it.
//
// One binary serves every test process of a checkout: it is built into a
// directory of the user's cache named after the checkout, under an
// exclusive file lock held only while `go build` runs. go build leaves a
// binary whose build ID matches its sources alone, so every test process
// after the first pays about a second, not a link (15-20 s on a loaded
// 2-core machine). A process that runs the binary holds no lock: go build
// replaces a changed binary with a new file, never rewriting the one a
// process runs, so one test process never waits for another to end.
//
// The broker runs in a process of its own for the same reason kbench runs
// it so: under -race an in-process kfake is instrumented too, and a
// produce-then-consume test spent twice the CPU (20 s against 7 s for the
// test and 2.5 s for a separate broker, measured on 600,000 records).
package kbenchbin

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/tier"
)

const module = "github.com/kbench/kbench"

var built struct {
	once sync.Once
	path string
	err  error
}

// Path returns the kbench binary, built on first use in this process;
// it fails t when the build fails, and refuses under -short (see tier).
func Path(t testing.TB) string {
	t.Helper()
	tier.RefuseTest(t, "go build kbench")
	built.once.Do(func() { built.path, built.err = build() })
	if built.err != nil {
		t.Fatalf("kbenchbin: go build kbench: %v", built.err)
	}
	return built.path
}

// build builds the binary into the checkout's cache directory, or into a
// temporary one without a cache directory.
func build() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	goBuild := func(bin string) error {
		cmd := exec.Command("go", "build", "-o", bin, module)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w\n%s", err, out)
		}
		return nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		dir, err := os.MkdirTemp("", "kbench-test-bin")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, "kbench")
		return bin, goBuild(bin)
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "kbench-test-bin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	bin := filepath.Join(dir, "kbench")
	return bin, goBuild(bin)
}

// moduleRoot is the directory of kbench's go.mod, above the test's
// working directory (its package's).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(data), "module "+module+"\n") {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod of " + module + " above the working directory")
		}
		dir = up
	}
}

// Broker is a `kbench broker` process.
type Broker struct {
	addr string
	cmd  *exec.Cmd
	once sync.Once
}

// StartBroker starts `kbench broker --listen 127.0.0.1:0` with args (such
// as --brokers 3 or --produce-rate N) and returns it once it listens; t's
// cleanup stops it.
func StartBroker(t testing.TB, args ...string) *Broker {
	t.Helper()
	cmd := exec.Command(Path(t), append([]string{"broker", "--listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("kbenchbin: start kbench broker: %v", err)
	}
	b := &Broker{cmd: cmd}
	t.Cleanup(b.Close)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "kbench broker listening on "); ok {
				addr <- a
				break
			}
		}
		for sc.Scan() { // keep its pipe drained
		}
	}()
	select {
	case b.addr = <-addr:
	case <-time.After(30 * time.Second):
		b.Close()
		t.Fatalf("kbenchbin: kbench broker %q did not say where it listens in 30 s; stderr: %s", args, stderr.String())
	}
	return b
}

// Addr is the host:port of its first broker.
func (b *Broker) Addr() string { return b.addr }

// Close stops the broker (SIGKILL: a test that closes it mid-run wants
// it gone at once) and waits for it; more calls do nothing.
func (b *Broker) Close() {
	b.once.Do(func() {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
	})
}
