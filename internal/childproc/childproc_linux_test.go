//go:build linux

package childproc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/tier"
)

// roleEnv makes the test binary play a part instead of running the tests:
// a comma-separated chain of roles, the first for this process, the rest
// for the child it starts.
const roleEnv = "CHILDPROC_TEST_ROLES"

func TestMain(m *testing.M) {
	if roles, ok := os.LookupEnv(roleEnv); ok {
		os.Unsetenv(roleEnv)
		play(roles)
		return
	}
	os.Exit(m.Run())
}

// play is a helper process's life:
//
//	parent  start the rest of the chain through Start, say "child PID", live on
//	sleep   say "ready PID" and live on, depending on no pipe or parent
//	echo    say "ready PID", then answer each stdin line with "ok LINE"
//	env     print ParentEnv as this process sees it after ExitIfOrphaned
//
// Every role but env calls ExitIfOrphaned first, as kbench's main does.
func play(roles string) {
	role, rest, _ := strings.Cut(roles, ",")
	if role != "env" {
		ExitIfOrphaned()
	}
	switch role {
	case "parent":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"="+rest)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := Start(cmd); err != nil {
			fmt.Fprintln(os.Stderr, "start child:", err)
			os.Exit(3)
		}
		fmt.Printf("child %d\n", cmd.Process.Pid)
		liveOn()
	case "sleep":
		fmt.Printf("ready %d\n", os.Getpid())
		liveOn()
	case "echo":
		fmt.Printf("ready %d\n", os.Getpid())
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Printf("ok %s\n", sc.Text())
		}
	case "env":
		ExitIfOrphaned()
		fmt.Printf("%s=%q\n", ParentEnv, os.Getenv(ParentEnv))
	default:
		fmt.Fprintf(os.Stderr, "unknown role %q\n", role)
		os.Exit(3)
	}
}

// liveOn sleeps for ever (a sleeping goroutine, unlike select{}, is no
// deadlock to the runtime).
func liveOn() {
	for {
		time.Sleep(time.Hour)
	}
}

// helper returns the test binary set to play roles.
func helper(roles string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+roles)
	return cmd
}

// procStat is what /proc/PID/stat says of a process: its state letter, its
// process group and its start time (which tells a reused pid apart).
type procStat struct {
	state byte
	pgrp  int
	start uint64
}

func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold spaces: the fields
	// after its closing parenthesis are state, ppid, pgrp, … starttime (22nd).
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procStat{state: f[0][0], pgrp: pgrp, start: start}, true
}

// watched is a process the test expects to die (or not): its pid and its
// start time.
type watched struct {
	pid   int
	start uint64
}

func watch(t *testing.T, pid int) watched {
	t.Helper()
	st, ok := readStat(pid)
	if !ok {
		t.Fatalf("process %d is not running", pid)
	}
	w := watched{pid: pid, start: st.start}
	// Whatever the test's outcome, leave nothing running.
	t.Cleanup(func() {
		if w.alive() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return w
}

// alive: the process exists and is not a zombie (a killed orphan may wait
// as a zombie for a reaper that never comes in a container).
func (w watched) alive() bool {
	st, ok := readStat(w.pid)
	return ok && st.start == w.start && st.state != 'Z' && st.state != 'X'
}

// waitGone waits up to a generous deadline for the processes to die.
func waitGone(t *testing.T, what string, ws ...watched) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, w := range ws {
		for w.alive() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: process %d still runs after its parent was killed", what, w.pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// expectLine reads one line and parses "word PID".
func expectLine(t *testing.T, r *bufio.Reader, word string) int {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("want %q line: %v (read %q)", word, err, line)
	}
	var pid int
	if _, err := fmt.Sscanf(line, word+" %d\n", &pid); err != nil {
		t.Fatalf("line %q, want %q PID: %v", line, word, err)
	}
	return pid
}

// TestChildrenDieWithParent: a parent that starts a child through Start,
// which starts a grandchild the same way, is killed with SIGKILL; the child
// and the grandchild (which hold no pipe to it and would live for ever)
// die with it.
func TestChildrenDieWithParent(t *testing.T) {
	parent := helper("parent,parent,sleep")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	r := bufio.NewReader(out)
	child := watch(t, expectLine(t, r, "child"))
	grandchild := watch(t, expectLine(t, r, "child"))
	if ready := expectLine(t, r, "ready"); ready != grandchild.pid {
		t.Fatalf("ready from %d, want the grandchild %d", ready, grandchild.pid)
	}

	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	waitGone(t, "child", child)
	waitGone(t, "grandchild", grandchild)
}

// TestThreadExitSparesChild: the goroutine that asks for a child is locked
// to its OS thread and returns without unlocking, so Go ends that thread.
// Had that thread forked the child, the parent-death signal would kill it
// now; the child must instead be alive and answering.
func TestThreadExitSparesChild(t *testing.T) {
	tier.Integration(t, "starts a child through childproc.Start")
	type started struct {
		cmd  *exec.Cmd
		in   io.WriteCloser
		out  *bufio.Reader
		tid  int
		main bool
		err  error
	}
	var s started
	for {
		done := make(chan started)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			var s started
			s.tid = syscall.Gettid()
			s.main = s.tid == os.Getpid() // Go never ends the main thread
			s.cmd = helper("echo")
			s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			s.cmd.Stderr = os.Stderr
			if s.in, s.err = s.cmd.StdinPipe(); s.err == nil {
				var out io.Reader
				if out, s.err = s.cmd.StdoutPipe(); s.err == nil {
					s.out = bufio.NewReader(out)
					s.err = Start(s.cmd)
				}
			}
			done <- s
		}()
		s = <-done
		if s.err != nil {
			t.Fatal(s.err)
		}
		if !s.main {
			break
		}
		// The goroutine ran on the main thread, which Go keeps: this
		// child proves nothing. Stop it and try again.
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	t.Cleanup(func() { s.in.Close(); s.cmd.Process.Kill(); s.cmd.Wait() })
	if line, err := s.out.ReadString('\n'); line != fmt.Sprintf("ready %d\n", s.cmd.Process.Pid) {
		state, _ := s.cmd.Process.Wait()
		t.Fatalf("child said %q (%v), want ready: %v", line, err, state)
	}
	pid := s.cmd.Process.Pid
	if st, _ := readStat(pid); st.pgrp != pid {
		t.Errorf("child's process group is %d: Start dropped Setpgid", st.pgrp)
	}

	// The kernel sends the parent-death signal while the thread exits,
	// before its /proc entry goes.
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d did not end after its locked goroutine returned", s.tid)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A process with SIGKILL pending never returns to user space: an answer
	// proves the child was not signalled.
	if _, err := fmt.Fprintln(s.in, "still there?"); err != nil {
		t.Fatalf("write to the child: %v", err)
	}
	line, err := s.out.ReadString('\n')
	if line != "ok still there?\n" {
		state, _ := s.cmd.Process.Wait()
		t.Fatalf("child answered %q (%v) after the thread that asked for it ended: %v", line, err, state)
	}
}

// TestOrphanExits: a child whose parent is not the pid in ParentEnv (its
// parent died before it got going and it was re-parented) exits 1 at once
// instead of running; with the right pid it runs.
func TestOrphanExits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parent int
		runs   bool
	}{
		{"re-parented", os.Getpid() + 1, false}, // not the test: the child's real parent
		{"parent alive", os.Getpid(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := helper("echo")
			cmd.Env = append(cmd.Env, ParentEnv+"="+strconv.Itoa(tc.parent))
			cmd.Stdin = strings.NewReader("")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if tc.runs {
				if err != nil || string(out) != fmt.Sprintf("ready %d\n", cmd.Process.Pid) {
					t.Fatalf("child with its real parent: %v, stdout %q, stderr %q", err, out, stderr.String())
				}
				return
			}
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
				t.Fatalf("orphaned child: %v (stdout %q), want exit status 1", err, out)
			}
			if len(out) != 0 {
				t.Errorf("orphaned child ran: stdout %q", out)
			}
			if want := fmt.Sprintf("(pid %d) is gone", tc.parent); !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), want)
			}
		})
	}
}

// TestParentEnv: Start gives the child this process's pid, replacing one it
// would have inherited, and the child's ExitIfOrphaned removes it so that
// what the child starts by other means does not inherit it.
func TestParentEnv(t *testing.T) {
	tier.Integration(t, "starts a child through childproc.Start")
	if got := withParent([]string{"A=1", ParentEnv + "=7", "B=2"}, 42); strings.Join(got, " ") != "A=1 B=2 "+ParentEnv+"=42" {
		t.Errorf("withParent: %q", got)
	}
	t.Setenv(ParentEnv, "7")
	cmd := helper("env")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if want := ParentEnv + `=""` + "\n"; out.String() != want {
		t.Errorf("child saw %q after ExitIfOrphaned, want %q", out.String(), want)
	}
	if !containsEnv(cmd.Env, ParentEnv+"="+strconv.Itoa(os.Getpid())) || containsEnv(cmd.Env, ParentEnv+"=7") {
		t.Errorf("child environment %q, want %s=%d only", cmd.Env, ParentEnv, os.Getpid())
	}
}

func containsEnv(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}
