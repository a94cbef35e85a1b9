package acceptance

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

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
