//go:build linux

package acceptance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/childproc"
	"github.com/kbench/kbench/internal/testutil/silentbroker"
)

// TestE2EServeKilledTakesItsChildren: `kbench serve` is killed with SIGKILL
// in the middle of a run; the `kbench run` child (and its `kbench broker`
// grandchild) die with it instead of running on. On the embedded broker the
// run writes progress often, so a closed pipe would soon stop it anyway;
// waiting on a cluster that never answers it writes nothing, and without
// the parent-death signal it would wait out its 10-minute timeout.
func TestE2EServeKilledTakesItsChildren(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench")
	}
	sb := silentbroker.Listen(t)
	silent, dialed := sb.Addr(), sb.Conns
	for _, tc := range []struct {
		name     string
		run      map[string]any
		children []string    // what the run starts under it, by verb
		ready    func() bool // the run is where the test wants it
	}{
		{"embedded broker", map[string]any{"workload": "producer", "label": "orphan?",
			// Long enough to be killed mid-way: 5,000,000 records at 2,000 a second.
			"params": map[string]any{"num-records": 5000000, "throughput": 2000, "profile": "none"}},
			[]string{"broker"}, func() bool { return true }},
		{"silent cluster", map[string]any{"workload": "producer", "label": "orphan?",
			"target": map[string]any{"bootstrap_server": silent},
			"params": map[string]any{"num-records": 100, "profile": "none",
				"producer-props": map[string]any{"socket.connection.setup.timeout.ms": "600000"}}},
			nil, func() bool { return dialed() > 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e2eKillServeMidRun(t, silent, tc.run, tc.children, tc.ready)
		})
	}
}

// e2eKillServeMidRun starts `kbench serve` (allowing target), submits run,
// waits until it runs with its child processes and ready says so, kills
// the server with SIGKILL and expects the run's process and those under it
// gone.
func e2eKillServeMidRun(t *testing.T, target string, run map[string]any, under []string, ready func() bool) {
	bin := e2eKbench(t)
	s := &e2eServer{exited: make(chan struct{}), http: e2eHTTPClient()}
	s.cmd = exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--allow-target", target)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	var procs []e2eProc
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.exited
		for _, p := range procs {
			if p.alive() {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("kbench serve stderr:\n%s", e2eTail(s.stderr.String(), 6000))
		}
	})
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(e2eStepTimeout)
		for !ok() {
			select {
			case <-s.exited:
				t.Fatalf("%s: kbench serve exited: %v", what, s.waitErr)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, e2eStepTimeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("kbench serve's address", func() bool {
		m := e2eServingLine.FindStringSubmatch(s.stdout.String())
		if m != nil {
			s.URL = m[1]
		}
		return m != nil
	})

	id := s.createRun(t, run)
	waitFor("the run running", func() bool { return s.runStatus(t, id) == "running" })
	waitFor("the run's process and those under it", func() bool {
		p, ok := e2eChild(s.cmd.Process.Pid, "run")
		if !ok {
			return false
		}
		procs = []e2eProc{p}
		for _, verb := range under {
			c, ok := e2eChild(p.pid, verb)
			if !ok {
				return false
			}
			procs = append(procs, c)
		}
		return true
	})
	waitFor("the run at work", ready)
	for _, p := range procs {
		t.Logf("kbench %s: pid %d (parent %d)", p.args[1], p.pid, p.ppid)
	}

	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.exited
	killed := time.Now()
	deadline := killed.Add(20 * time.Second)
	for _, p := range procs {
		for p.alive() {
			if time.Now().After(deadline) {
				t.Fatalf("kbench %s (pid %d) still runs after kbench serve was killed", p.args[1], p.pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("children gone %v after kbench serve was reaped", time.Since(killed).Round(time.Microsecond))
}

// TestE2EOrphanedChildExits: kbench started as a child of a process that is
// no longer its parent (it died between the fork and the child's start)
// exits 1 before doing anything; its real parent's pid lets it run.
func TestE2EOrphanedChildExits(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench")
	}
	bin := e2eKbench(t)
	out := filepath.Join(t.TempDir(), "profile.pb.gz")
	// Without the check this broker would serve until killed: the context
	// bounds the test, never its verdict.
	ctx, cancel := context.WithTimeout(context.Background(), e2eStepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "broker", "--listen", "127.0.0.1:0", "--cpuprofile", out)
	cmd.Env = append(os.Environ(), childproc.ParentEnv+"="+strconv.Itoa(os.Getpid()+1))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("kbench broker under a wrong parent: %v, want exit status 1\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("the orphan started its broker: %q", stdout.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the orphan wrote its profile (%v)", err)
	}
	if want := "is gone"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not say %q", stderr.String(), want)
	}

	// With its real parent's pid it runs (--control: it exits as its
	// empty stdin closes).
	cmd = exec.CommandContext(ctx, bin, "broker", "--listen", "127.0.0.1:0", "--control")
	cmd.Env = append(os.Environ(), childproc.ParentEnv+"="+strconv.Itoa(os.Getpid()))
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.HasPrefix(stdout.String(), "kbench broker listening on ") {
		t.Fatalf("kbench broker under its real parent: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
}
