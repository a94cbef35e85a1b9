// Package childproc starts kbench's long-lived child processes (the
// `kbench run` a server supervises, the broker or sink a run starts) so
// that they die with the process that started them, even when it is killed
// with SIGKILL and has no chance to stop them: an orphaned run or broker
// would otherwise share the machine with the next benchmark.
//
// On Linux a child gets the parent-death signal SIGKILL
// (prctl PR_SET_PDEATHSIG, Go's SysProcAttr.Pdeathsig). The kernel sends it
// when the *thread* that forked the child exits, not the process, and Go
// ends a thread whenever a goroutine returns while locked to it with
// runtime.LockOSThread (go.dev/issue/27505). So every child is forked by one
// goroutine locked to its own thread that never returns: that thread lives
// exactly as long as the process. Go's fork path already compares the
// child's parent with the forking process right after the prctl, closing
// the window where the parent dies before the signal is armed; a child that
// calls ExitIfOrphaned first thing checks again against the pid Start put in
// its environment, so even a child started some other way does not run on
// under a new parent.
//
// Grandchildren are covered because every level starts its children through
// Start: a run killed by its server's death takes its broker with it.
//
// On other systems Start is cmd.Start and ExitIfOrphaned does nothing.
//
// Start is also the door of the test tiers (internal/testutil/tier):
// every child it starts is a kbench run, a broker or a tool, so in a test
// binary run with -short it refuses, and the test that forgot to skip
// fails.
package childproc

import (
	"os/exec"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/testutil/tier"
)

// ParentEnv names the environment variable that carries the pid of the
// process that started a child, for ExitIfOrphaned.
const ParentEnv = "KBENCH_PARENT_PID"

// Start starts cmd like cmd.Start, as a child that dies with this process.
// It sets cmd.SysProcAttr.Pdeathsig (keeping the other attributes, such as
// Setpgid) and cmd.Env (ParentEnv added to what cmd would have used).
// In a test binary run with -short it panics (tier.Refuse) and starts
// nothing.
func Start(cmd *exec.Cmd) error {
	tier.Refuse("childproc.Start " + cmd.Path)
	return start(cmd)
}

// ExitIfOrphaned ends this process with exit status 1 if it was started by
// Start and its parent is already gone (it has been re-parented). It
// removes ParentEnv from the environment either way, so the processes this
// one starts by other means do not inherit a pid that is not theirs. Call
// it first thing in main.
func ExitIfOrphaned() {
	exitIfOrphaned()
}

// withParent returns env with ParentEnv set to pid, any earlier value
// dropped.
func withParent(env []string, pid int) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, ParentEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, ParentEnv+"="+strconv.Itoa(pid))
}
