//go:build linux

package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// spawn is one request to the forking goroutine.
type spawn struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnerOnce sync.Once
	spawns      = make(chan spawn)
)

// spawner forks every child. It locks itself to its OS thread and never
// unlocks or returns, so no other goroutine runs on that thread and Go
// never ends it: the children's parent-death signal fires only when the
// whole process dies.
func spawner() {
	runtime.LockOSThread()
	for s := range spawns {
		s.done <- s.cmd.Start()
	}
}

func start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Env = withParent(cmd.Environ(), os.Getpid())
	spawnerOnce.Do(func() { go spawner() })
	s := spawn{cmd: cmd, done: make(chan error, 1)}
	spawns <- s
	return <-s.done
}

func exitIfOrphaned() {
	v, ok := os.LookupEnv(ParentEnv)
	if !ok {
		return
	}
	os.Unsetenv(ParentEnv)
	want, err := strconv.Atoi(v)
	if err != nil {
		return // not ours to judge: a value Start never writes
	}
	if got := os.Getppid(); got != want {
		fmt.Fprintf(os.Stderr, "kbench: the process that started this one (pid %d) is gone (parent now pid %d); exiting\n", want, got)
		os.Exit(1)
	}
}
