package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// TestRunIngested: a run's process is started, its progress lines reach
// subscribers as live events, and what it left in its directory
// (result.json, the profile it names, stderr.log) is stored with it.
func TestRunIngested(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "succeed", nil)
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	e.submit(t, e.Manager, id, nil)
	// In the order the run reports them.
	for _, name := range []string{"status", "progress", "interval", "output"} {
		ev := w.until(t, name)
		if name == "interval" {
			if p, ok := ev.Data.(rundoc.SeriesPoint); !ok || p.Records != 100 {
				t.Errorf("interval event %+v, want the helper's point", ev.Data)
			}
		}
	}
	done := w.until(t, "done")
	if got := done.Data.(map[string]string); got["status"] != string(rundoc.StatusSucceeded) || got["error"] != "" {
		t.Errorf("done %v, want succeeded", got)
	}
	if _, ok := e.Series(id); ok {
		t.Error("the hub still holds the series of a finished run: the store has it")
	}
	r := e.get(t, id)
	if r.Status != rundoc.StatusSucceeded || !r.Complete || r.Error != "" || r.StartedAt == nil || r.FinishedAt == nil {
		t.Fatalf("run: %s complete %v error %q started %v finished %v", r.Status, r.Complete, r.Error, r.StartedAt, r.FinishedAt)
	}
	if len(r.Metrics) != 1 || r.Metrics[0].Name != "record-send-rate" || r.Metrics[0].Value != 100 || r.Metrics[0].Unit != "records/s" {
		t.Errorf("metrics %+v", r.Metrics)
	}
	if r.RecordsPerSec == nil || *r.RecordsPerSec != 100 {
		t.Errorf("records_per_sec %v, want 100", r.RecordsPerSec)
	}
	if len(r.Series) != 1 || r.Series[0].Records != 100 {
		t.Errorf("series %+v", r.Series)
	}
	if len(r.Profiles) != 1 || r.Profiles[0].Role != "client" || r.Profiles[0].Kind != "heap" || r.Profiles[0].Bytes == 0 {
		t.Errorf("profiles %+v, want the client heap profile", r.Profiles)
	}
	if !strings.HasPrefix(r.Output, "100 records sent") {
		t.Errorf("output %q", r.Output)
	}
	if m := r.Measurement; m == nil || m.MeasuredRecords != 100 || r.DocumentErr != nil {
		t.Errorf("measurement %s (%v)", r.Documents.Measurement, r.DocumentErr)
	}
	if env := r.Environment; env == nil || env.GoVersion != "helper" {
		t.Errorf("environment %s (%v)", r.Documents.Environment, r.DocumentErr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "runs", strconv.FormatUint(uint64(id), 10), "stderr.log")); err != nil {
		t.Errorf("no stderr.log: %v", err)
	}
}

// TestProcessFailure: a process that exits with an error and no result
// fails its run with the exit status and the tail of its stderr.
func TestProcessFailure(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "fail", nil)
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	e.submit(t, e.Manager, id, nil)
	w.until(t, "done")
	r := e.get(t, id)
	if r.Status != rundoc.StatusFailed || r.Error != "the run process failed: exit status 2\npanic: something broke" {
		t.Errorf("run: %s %q, want failed with the exit status and stderr", r.Status, r.Error)
	}
}

// TestSecretsInMemoryOnly: a run's secrets are held in memory while it
// waits, reach its process through the environment, leave memory when a
// worker takes it, and are never stored; a run whose secrets are not held
// fails without starting a process.
func TestSecretsInMemoryOnly(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	const password = "Pw-lifecycle-4b1e"
	e := newEnv(t, "succeed", nil)
	spec, secrets := secretSpec(t, password)
	first, id := e.create(t, plainSpec), e.create(t, spec)
	gate := make(chan struct{})
	e.SetHook(func(p string, got uint) {
		if p == "taken" && got == first {
			<-gate
		}
	})
	w := e.watch(t, e.Manager, id)
	e.submit(t, e.Manager, first, nil)
	e.submit(t, e.Manager, id, secrets)
	if got := e.HeldSecrets([]uint{first, id}, []string{"sasl.password"}); got["sasl.password"] != password {
		t.Errorf("held secrets %v while the run waits", got)
	}
	close(gate)
	w.until(t, "done")
	r := e.get(t, id)
	if r.Status != rundoc.StatusSucceeded {
		t.Fatalf("run: %s %q", r.Status, r.Error)
	}
	if strings.Contains(r.Spec, password) || !NeedsSecrets(r.Spec) {
		t.Errorf("stored spec %s: want the secret redacted", r.Spec)
	}
	got, err := os.ReadFile(filepath.Join(e.dir, "runs", strconv.FormatUint(uint64(id), 10), receivedSecret))
	if err != nil || string(got) != password {
		t.Errorf("the process got %q (%v), want the secret", got, err)
	}
	if e.HeldSecrets([]uint{id}, []string{"sasl.password"}) != nil {
		t.Error("the secrets are still held after the run was taken")
	}

	lost := e.create(t, spec)
	wl := e.watch(t, e.Manager, lost)
	e.submit(t, e.Manager, lost, nil)
	wl.until(t, "done")
	if r := e.get(t, lost); r.Status != rundoc.StatusFailed || !strings.Contains(r.Error, "sasl.password: its secret is not in memory") {
		t.Errorf("run without its secret: %s %q", r.Status, r.Error)
	}
	if e.started(lost) {
		t.Error("a run without its secret started a process")
	}
}

// TestRunTimeout: a run that outlives the run timeout is stopped and
// fails, saying so.
func TestRunTimeout(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "wait", func(o *Options) { o.RunTimeout = time.Nanosecond })
	id := e.create(t, plainSpec)
	w := e.watch(t, e.Manager, id)
	e.submit(t, e.Manager, id, nil)
	w.until(t, "done")
	if r := e.get(t, id); r.Status != rundoc.StatusFailed || r.Error != "stopped after the server's run timeout (1ns)" {
		t.Errorf("run: %s %q", r.Status, r.Error)
	}
}

// TestCloseAndStartAgain: Close interrupts a running run, which keeps what
// it measured, and leaves a waiting run queued; the next Start on the same
// store executes it.
func TestCloseAndStartAgain(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	e := newEnv(t, "wait", nil)
	running, waiting := e.create(t, plainSpec), e.create(t, plainSpec)
	w := e.watch(t, e.Manager, running)
	e.submit(t, e.Manager, running, nil)
	e.submit(t, e.Manager, waiting, nil)
	w.until(t, "interval")
	e.Close()
	r := e.get(t, running)
	if r.Status != rundoc.StatusInterrupted || r.Error != "interrupted: the kbench server stopped during the run" || len(r.Metrics) == 0 {
		t.Errorf("running run after Close: %s %q with %d metrics, want interrupted with what it measured", r.Status, r.Error, len(r.Metrics))
	}
	if r := e.get(t, waiting); r.Status != rundoc.StatusQueued || e.started(waiting) {
		t.Fatalf("waiting run after Close: %s, started %v; want queued, never started", r.Status, e.started(waiting))
	}
	next := e.open(t, "succeed", nil)
	wn := e.watch(t, next, waiting)
	// Started before the watch: the run may be done already.
	if r := e.get(t, waiting); !r.Final() {
		wn.until(t, "done")
	}
	if r := e.get(t, waiting); r.Status != rundoc.StatusSucceeded {
		t.Errorf("queued run after the next Start: %s %q", r.Status, r.Error)
	}
}

// TestStartRecovers: Start ends runs a previous process left running as
// interrupted, and of the runs it left queued runs those it can: one whose
// secrets were lost with the process, or that Options.Recheck refuses, is
// canceled with the reason.
func TestStartRecovers(t *testing.T) {
	tier.Integration(t, "starts kbench run stand-ins")
	dir := t.TempDir()
	st, err := store.Open(pgtest.DSN(t, filepath.Join(dir, "kbench.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{st: st, dir: dir}
	ctx := context.Background()
	spec, _ := secretSpec(t, "gone")
	const refusedSpec = `{"workload":"producer","params":{"num-records":100,"profile":"none","topic":"refused"}}`
	left, plain, secret, refused := e.create(t, plainSpec), e.create(t, plainSpec), e.create(t, spec), e.create(t, refusedSpec)
	if err := st.StartRun(ctx, left, time.Now()); err != nil {
		t.Fatal(err)
	}
	l := e.open(t, "succeed", func(o *Options) {
		o.Recheck = func(spec string) error {
			if strings.Contains(spec, "refused") {
				return errors.New("target not allowed")
			}
			return nil
		}
	})
	w := e.watch(t, l, plain)
	if r := e.get(t, plain); !r.Final() {
		w.until(t, "done")
	}
	for _, tc := range []struct {
		id      uint
		status  rundoc.Status
		errText string
	}{
		{left, rundoc.StatusInterrupted, "interrupted: the kbench server stopped while this run was in progress"},
		{plain, rundoc.StatusSucceeded, ""},
		{secret, rundoc.StatusCanceled, "canceled: the server restarted and this run's credentials were only held in memory; launch it again"},
		{refused, rundoc.StatusCanceled, "canceled when the server restarted: target not allowed"},
	} {
		if r := e.get(t, tc.id); r.Status != tc.status || r.Error != tc.errText {
			t.Errorf("run %d: %s %q, want %s %q", tc.id, r.Status, r.Error, tc.status, tc.errText)
		}
	}
}
