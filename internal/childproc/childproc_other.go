//go:build !linux

package childproc

import "os/exec"

// Elsewhere there is no parent-death signal to arm: a child is started as
// usual (a run's broker still exits when its stdin closes).
func start(cmd *exec.Cmd) error { return cmd.Start() }

func exitIfOrphaned() {}
