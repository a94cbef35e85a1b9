package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/synthprof"
	"github.com/kbench/kbench/server"
	"github.com/kbench/kbench/ui"
)

// producerLeaves is a producer's CPU per record by stack: encode and its
// sibling compress under send, a write, a decode, run's own time. after
// makes the leaf send.encode's work per record grow by 30 %.
func producerLeaves(after bool) []synthprof.Leaf {
	encode := 2000.0
	if after {
		encode *= 1.3
	}
	return []synthprof.Leaf{
		{Stack: "main.main;main.run;send.Loop;send.encode", NanosPerRec: encode},
		{Stack: "main.main;main.run;send.Loop;send.compress", NanosPerRec: 1500},
		{Stack: "main.main;main.run;send.Loop;kafka.write", NanosPerRec: 3000},
		{Stack: "main.main;main.run;recv.Loop;recv.decode", NanosPerRec: 2500},
		{Stack: "main.main;main.run", NanosPerRec: 300},
	}
}

// writeResultDir writes what `kbench run --out DIR` leaves: result.json
// of a producer run that sent records at rate, started at at, with a CPU
// profile of the client.
func writeResultDir(t *testing.T, dir string, at time.Time, records, rate float64, commit string, prof []byte) {
	t.Helper()
	spec, err := rundoc.SpecFromParams(rundoc.Producer, map[string]json.RawMessage{"num-records": json.RawMessage("1000000")})
	if err != nil {
		t.Fatal(err)
	}
	res := &rundoc.Result{Workload: rundoc.Producer, Complete: true, Spec: spec, StartedAt: at, FinishedAt: at.Add(10 * time.Second),
		Measurement: rundoc.Measurement{MeasuredRecords: int64(records)},
		Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter},
			{Name: "records-sent", Value: records, Unit: "records", Better: rundoc.HigherIsBetter}},
		Profiles: []rundoc.ProfileFile{{Role: "client", Kind: "cpu", File: "client-cpu.pprof"}},
		Meta:     map[string]string{"branch": "trunk", "commit": commit}}
	if err := os.WriteFile(filepath.Join(dir, "client-cpu.pprof"), prof, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rundoc.WriteResult(dir, res); err != nil {
		t.Fatal(err)
	}
}

// TestRegressionNamesFunctions is issue 25's test of a regression's
// functions, end to end on the real store (an SQLite file), real
// imports (kbench import of result directories) and the serve command's
// wiring: 20 producer runs and then 20 more whose record-send-rate fell
// and whose leaf send.encode does 30 % more work per record. The
// regression names send.encode first, per record, and not its unchanged
// sibling send.compress; the history's change point says the same, and
// the regressions page lists it with the run-set diff's link.
func TestRegressionNamesFunctions(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := server.Config{DataDir: dir, NoLocalWorker: true, Logger: logger}
	cfg.Regressions = regressions.New(st, ui.RegressionLinks(), logger)
	srv, namer, stop, err := startServer(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := client.New(hs.URL, "")

	rng := rand.New(rand.NewPCG(25, 5))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var ids []uint
	for i := range 40 {
		after := i >= 20
		records := 1e6 * (0.9 + 0.2*rng.Float64())
		rate := 115000.0
		if after {
			rate = 100000
		}
		rate *= 1 + 0.01*(2*rng.Float64()-1)
		prof, err := synthprof.Encode(synthprof.Run(rng, producerLeaves(after), records, 0.03))
		if err != nil {
			t.Fatal(err)
		}
		rd := t.TempDir()
		writeResultDir(t, rd, t0.Add(time.Duration(i)*time.Hour), records, rate, fmt.Sprintf("c%02d", i), prof)
		url, err := storeResult(ctx, c, rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		var id uint
		if _, err := fmt.Sscanf(url[strings.LastIndex(url, "/")+1:], "%d", &id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}

	// The regression, as the API lists it: computing, then named.
	var reg wire.Regression
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) { // a guard against hanging, not a timing assertion
		regs, err := c.Regressions(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(regs.Regressions) != 1 {
			t.Fatalf("regressions %+v, want the one at run %d", regs.Regressions, ids[20])
		}
		reg = regs.Regressions[0]
		if reg.FunctionNaming == nil || reg.FunctionNaming.Status != wire.FunctionsComputing || time.Now().After(deadline) {
			break
		}
	}
	n := reg.FunctionNaming
	if reg.RunID != ids[20] || n == nil || n.Status != wire.FunctionsNamed || n.Normalize != "work" || n.Unit != "nanoseconds/record" {
		t.Fatalf("regression at %d, naming %+v", reg.RunID, n)
	}
	if !slices.Equal(n.RunsBase, ids[:20]) || !slices.Equal(n.RunsTarget, ids[20:]) {
		t.Errorf("compared %v against %v, want the 20 runs either side", n.RunsBase, n.RunsTarget)
	}
	var names []string
	for _, f := range reg.Functions {
		names = append(names, f.Name)
	}
	if len(names) == 0 || names[0] != "send.encode" || slices.Contains(names, "send.compress") {
		t.Fatalf("named %v, want send.encode first and not send.compress", names)
	}
	t.Logf("named %v: %+v", names, reg.Functions)
	if f := reg.Functions[0]; f.DeltaPct < 20 || f.DeltaPct > 40 || f.QValue > 0.05 {
		t.Errorf("send.encode %+v, want about +30 %% per record", f)
	}

	// The same set, asked again from the history, computes nothing.
	h, err := c.History(ctx, map[string][]string{"run": {fmt.Sprint(ids[0])}, "metric": {"record-send-rate"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.ChangePoints) != 1 || h.ChangePoints[0].FunctionNaming == nil || h.ChangePoints[0].FunctionNaming.Status != wire.FunctionsNamed ||
		len(h.ChangePoints[0].Functions) == 0 || h.ChangePoints[0].Functions[0].Name != "send.encode" {
		t.Errorf("history's change points %+v", h.ChangePoints)
	}
	if got := namer.Computed(); got != 1 {
		t.Errorf("%d sets computed, want 1 (the history's change point is the regression's set)", got)
	}
	page, err := c.Do(ctx, "GET", "/regressions", nil, "", 200, time.Minute, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), ">send.encode</code>") || !strings.Contains(string(page), "/compare/profiles?base_runs=") {
		t.Error("the regressions page does not list send.encode with the diff's link")
	}
}
