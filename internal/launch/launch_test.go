package launch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/runner"
)

// heldRuns is a hand-written Runs: it executes nothing, and records what
// it was asked, so that a test sees the order runs were queued in, the
// secrets they were given and what was canceled. Canceling a run cancels
// it in the store, as the lifecycle does.
type heldRuns struct {
	st *store.Store

	mu        sync.Mutex
	submitted []uint
	secrets   map[uint]map[string]string
	canceled  []uint
}

func (h *heldRuns) Submit(_ context.Context, id uint, secrets map[string]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.submitted = append(h.submitted, id)
	if h.secrets == nil {
		h.secrets = map[uint]map[string]string{}
	}
	h.secrets[id] = secrets
	return nil
}

func (h *heldRuns) Cancel(ctx context.Context, id uint) error {
	h.mu.Lock()
	h.canceled = append(h.canceled, id)
	h.mu.Unlock()
	return h.st.CancelQueued(ctx, id, "canceled by the test")
}

func (h *heldRuns) HeldSecrets(ids []uint, keys []string) map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		s := h.secrets[id]
		if s == nil {
			continue
		}
		all := true
		for _, k := range keys {
			if _, ok := s[k]; !ok {
				all = false
			}
		}
		if all {
			return s
		}
	}
	return nil
}

// queued is what was submitted, in order.
func (h *heldRuns) queued() []uint {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.submitted)
}

// testLauncher is a launcher on a fresh SQLite store whose runs wait in
// a heldRuns: nothing is executed, no process started.
type testLauncher struct {
	*Launcher
	st   *store.Store
	runs *heldRuns
}

// newTestLauncher builds one with the Kafka client's check
// (runner.Validate) and a policy that allows 127.0.0.1 on any port; mod
// changes its options.
func newTestLauncher(t *testing.T, mod func(*Options)) *testLauncher {
	t.Helper()
	st, err := store.Open(pgtest.DSN(t, filepath.Join(t.TempDir(), "kbench.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runs := &heldRuns{st: st}
	opts := Options{Store: st, Runs: runs, Validate: runner.Validate, Allowed: allowLoopback,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&opts)
	}
	l := New(opts)
	t.Cleanup(l.Close)
	return &testLauncher{Launcher: l, st: st, runs: runs}
}

// allowLoopback is a target policy allowing 127.0.0.1 only.
func allowLoopback(addrs []string) error {
	var errs rundoc.FieldErrors
	for _, a := range addrs {
		if h, _, ok := cutPort(a); !ok || h != "127.0.0.1" {
			errs.Add("bootstrap-server", "%s is not an allowed target", a)
		}
	}
	return errs.Err()
}

func cutPort(addr string) (host, port string, ok bool) {
	i := len(addr) - 1
	for i >= 0 && addr[i] != ':' {
		i--
	}
	if i < 0 {
		return "", "", false
	}
	return addr[:i], addr[i+1:], true
}

// finishStored ends queued run id as succeeded with record-send-rate rate
// and latency percentiles, as a worker would.
func finishStored(t *testing.T, st *store.Store, id uint, rate float64) {
	t.Helper()
	if err := st.StartRun(t.Context(), id, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ms := []rundoc.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter},
		{Name: "record-latency-p50", Value: 1, Unit: "ms", Better: rundoc.LowerIsBetter},
		{Name: "record-latency-p99", Value: 2, Unit: "ms", Better: rundoc.LowerIsBetter},
		{Name: "record-latency-p999", Value: 3, Unit: "ms", Better: rundoc.LowerIsBetter}}
	if err := st.FinishRun(t.Context(), id, store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: ms}); err != nil {
		t.Fatal(err)
	}
}

// fieldOf is the field of the first field error err holds, "" for none.
func fieldOf(err error) string {
	var fe *rundoc.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}
