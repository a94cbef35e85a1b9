package funcs

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/testutil/synthprof"
	"github.com/kbench/kbench/profiles"
)

// leaves is the synthetic producer the tests profile: encode and its
// sibling compress under send, a write, a decode under recv, and run's
// own time. after makes encode's work per record grow by 30 %.
func leaves(after bool) []synthprof.Leaf {
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

// fakeRun is a run of fakeSets: its profile (nil for none) and records
// (0 for no count).
type fakeRun struct {
	prof    *profile.Profile
	records float64
}

// fakeSets is RunSets over runs in memory, counting the loads.
type fakeSets struct {
	mu       sync.Mutex
	runs     map[uint]fakeRun
	inputs   int
	profiled int // Profiled calls
}

func (f *fakeSets) Profiled(_ context.Context, ids []uint) ([]uint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiled++
	var out []uint
	for _, id := range ids {
		if f.runs[id].prof != nil {
			out = append(out, id)
		}
	}
	return out, nil
}

func (f *fakeSets) Inputs(_ context.Context, base, target []uint) ([]profiles.RunInput, []profiles.RunInput, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs++
	norm := "work"
	for _, id := range slices.Concat(base, target) {
		if f.runs[id].records <= 0 {
			norm = "total"
		}
	}
	conv := func(ids []uint) []profiles.RunInput {
		var out []profiles.RunInput
		for _, id := range ids {
			r := f.runs[id]
			in := profiles.RunInput{RunID: id, Prof: r.prof, SampleIndex: 1, Ref: r.records}
			if norm == "total" {
				in.Ref = 0
				for _, x := range r.prof.Sample {
					in.Ref += float64(x.Value[1])
				}
			}
			out = append(out, in)
		}
		return out
	}
	return conv(base), conv(target), norm, nil
}

func (f *fakeSets) loads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inputs
}

// history is 20 runs before a change (ids 1–20) and 20 after (21–40),
// each with a profile and about a million records.
func history(seed uint64) (*fakeSets, []uint, []uint) {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := &fakeSets{runs: map[uint]fakeRun{}}
	var before, after []uint
	for id := uint(1); id <= 40; id++ {
		records := 1e6 * (0.9 + 0.2*rng.Float64())
		f.runs[id] = fakeRun{prof: synthprof.Run(rng, leaves(id > 20), records, 0.03), records: records}
		if id <= 20 {
			before = append(before, id)
		} else {
			after = append(after, id)
		}
	}
	return f, before, after
}

func names(fs []wire.MovedFunction) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func started(t *testing.T, sets RunSets, opts Options) *Namer {
	t.Helper()
	n := New(sets, opts)
	n.Start(context.Background())
	t.Cleanup(n.Close)
	return n
}

func wait(t *testing.T, n *Namer, before, after []uint) wire.Functions {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := n.Wait(ctx, before, after)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status == wire.FunctionsComputing {
		t.Fatal("still computing after a minute")
	}
	return f
}

// TestNamesTheLeafThatGrew: of 20 runs against 20 where encode's work
// per record grew by 30 %, encode is named first, per record; its
// unchanged sibling compress is not named, nor the callers encode
// explains.
func TestNamesTheLeafThatGrew(t *testing.T) {
	for seed := range uint64(5) {
		sets, before, after := history(seed)
		f := wait(t, started(t, sets, Options{}), before, after)
		if f.Status != wire.FunctionsNamed || f.Normalize != "work" || f.Unit != "nanoseconds/record" {
			t.Fatalf("seed %d: status %q normalize %q unit %q (%s)", seed, f.Status, f.Normalize, f.Unit, f.Reason)
		}
		got := names(f.Functions)
		if len(got) == 0 || got[0] != "send.encode" {
			t.Fatalf("seed %d: named %v, want send.encode first", seed, got)
		}
		for _, not := range []string{"send.compress", "send.Loop", "main.run", "main.main"} {
			if slices.Contains(got, not) {
				t.Errorf("seed %d: named %s (%v)", seed, not, got)
			}
		}
		e := f.Functions[0]
		if e.DeltaPct < 20 || e.DeltaPct > 40 || e.Delta < 400 || e.Delta > 800 || e.QValue > Q {
			t.Errorf("seed %d: encode %+v, want about +600 ns/record (+30 %%), q ≤ %g", seed, e, Q)
		}
		if !slices.Equal(f.RunsBase, before) || !slices.Equal(f.RunsTarget, after) {
			t.Errorf("seed %d: compared %v against %v", seed, f.RunsBase, f.RunsTarget)
		}
	}
}

// TestTotalWithoutRecordCounts: a run without a record count makes the
// comparison per total, and says so.
func TestTotalWithoutRecordCounts(t *testing.T) {
	sets, before, after := history(1)
	r := sets.runs[3]
	r.records = 0
	sets.runs[3] = r
	f := wait(t, started(t, sets, Options{}), before, after)
	if f.Normalize != "total" || f.Unit != "share of total" {
		t.Fatalf("normalize %q unit %q", f.Normalize, f.Unit)
	}
	if got := names(f.Functions); len(got) == 0 || got[0] != "send.encode" {
		t.Fatalf("named %v", got)
	}
}

// TestNearestRunsWithProfiles: each side compares its runs with profiles
// nearest the change, at most RunsPerSide; runs without profiles are
// passed over.
func TestNearestRunsWithProfiles(t *testing.T) {
	sets, _, _ := history(2)
	var before, after []uint
	for id := uint(100); id < 160; id++ { // 60 runs before, every third without a profile
		if id%3 != 0 {
			sets.runs[id] = sets.runs[1+id%20]
		}
		before = append(before, id)
	}
	after = []uint{21, 22, 23}
	n := New(sets, Options{}) // not started: Lookup only
	f, err := n.Lookup(context.Background(), before, after)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != wire.FunctionsComputing || len(f.RunsBase) != RunsPerSide {
		t.Fatalf("status %q, %d runs before", f.Status, len(f.RunsBase))
	}
	if f.RunsBase[len(f.RunsBase)-1] != 158 || slices.Contains(f.RunsBase, 156) || !slices.IsSorted(f.RunsBase) {
		t.Errorf("runs before %v: want the nearest with profiles, in time order", f.RunsBase)
	}
	if f.DiffURL == "" || f.RunsNeeded != profiles.MinSignificanceRuns {
		t.Errorf("%+v", f.FunctionNaming)
	}
}

// TestStatuses: sides without profiles or with too few are said so, and
// nothing is computed for them.
func TestStatuses(t *testing.T) {
	sets, _, _ := history(3)
	n := started(t, sets, Options{})
	for _, c := range []struct {
		before, after []uint
		status        string
	}{
		{[]uint{1, 2, 3}, []uint{500, 501}, wire.FunctionsNoProfiles},
		{[]uint{500}, []uint{21, 22, 23}, wire.FunctionsNoProfiles},
		{[]uint{1, 2}, []uint{21, 22, 23}, wire.FunctionsTooFewRuns},
	} {
		f, err := n.Lookup(context.Background(), c.before, c.after)
		if err != nil {
			t.Fatal(err)
		}
		if f.Status != c.status || f.Reason == "" {
			t.Errorf("%v against %v: %q (%s), want %q", c.before, c.after, f.Status, f.Reason, c.status)
		}
	}
	if sets.loads() != 0 {
		t.Errorf("loaded profiles %d times", sets.loads())
	}
}

// TestCachedByRunSet: a second request for the same set computes
// nothing; a new run with a profile in a segment is a new set, and a
// new run without one is not.
func TestCachedByRunSet(t *testing.T) {
	sets, before, after := history(4)
	n := started(t, sets, Options{})
	first := wait(t, n, before, after)
	again, err := n.Lookup(context.Background(), before, after)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != wire.FunctionsNamed || !slices.Equal(names(again.Functions), names(first.Functions)) || sets.loads() != 1 || n.Computed() != 1 {
		t.Fatalf("second lookup: %q %v, %d loads", again.Status, names(again.Functions), sets.loads())
	}
	// A run without a profile joins the segment after: same set.
	after2 := append(slices.Clone(after), 41)
	if f, _ := n.Lookup(context.Background(), before, after2); f.Status != wire.FunctionsNamed || sets.loads() != 1 {
		t.Fatalf("after a run without profile: %q, %d loads", f.Status, sets.loads())
	}
	// One with a profile: a new set, computed again.
	sets.mu.Lock()
	sets.runs[42] = sets.runs[30]
	sets.mu.Unlock()
	after3 := append(slices.Clone(after2), 42)
	if f, _ := n.Lookup(context.Background(), before, after3); f.Status != wire.FunctionsComputing || !slices.Contains(f.RunsTarget, 42) {
		t.Fatalf("after a run with a profile: %q %v", f.Status, f.RunsTarget)
	}
	f := wait(t, n, before, after3)
	if f.Status != wire.FunctionsNamed || sets.loads() != 2 {
		t.Fatalf("new set: %q, %d loads", f.Status, sets.loads())
	}
}

// TestPausedWhileBusy: while a local run executes nothing is loaded or
// computed; once it ends, the set is named.
func TestPausedWhileBusy(t *testing.T) {
	sets, before, after := history(5)
	var busy atomic.Bool
	busy.Store(true)
	asked := make(chan struct{}, 100)
	n := started(t, sets, Options{Poll: time.Millisecond, Busy: func() bool {
		select {
		case asked <- struct{}{}:
		default:
		}
		return busy.Load()
	}})
	f, err := n.Lookup(context.Background(), before, after)
	if err != nil || f.Status != wire.FunctionsComputing {
		t.Fatalf("%q %v", f.Status, err)
	}
	for range 5 { // the computation asked several times and was told busy each time
		<-asked
	}
	if sets.loads() != 0 {
		t.Fatalf("loaded profiles while busy")
	}
	if f, _ := n.Lookup(context.Background(), before, after); f.Status != wire.FunctionsComputing {
		t.Fatalf("while busy: %q", f.Status)
	}
	busy.Store(false)
	if f := wait(t, n, before, after); f.Status != wire.FunctionsNamed || sets.loads() != 1 {
		t.Fatalf("after the run: %q, %d loads", f.Status, sets.loads())
	}
}

// TestWaitIdle: WaitIdle returns when busy clears, or the context's
// error when it ends first.
func TestWaitIdle(t *testing.T) {
	var calls atomic.Int32
	busy := func() bool { return calls.Add(1) < 3 }
	if err := WaitIdle(context.Background(), busy, time.Millisecond); err != nil || calls.Load() != 3 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitIdle(ctx, func() bool { return true }, time.Millisecond); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

// TestFailedLoadIsSaid: a set whose profiles cannot be read is answered
// "failed" with the reason.
func TestFailedLoadIsSaid(t *testing.T) {
	sets, before, after := history(6)
	n := started(t, failingSets{sets}, Options{Logger: slog.New(slog.DiscardHandler)})
	f := wait(t, n, before, after)
	if f.Status != wire.FunctionsFailed || f.Reason == "" {
		t.Fatalf("%q %q", f.Status, f.Reason)
	}
}

type failingSets struct{ *fakeSets }

func (failingSets) Inputs(context.Context, []uint, []uint) ([]profiles.RunInput, []profiles.RunInput, string, error) {
	return nil, nil, "", errors.New("profile 7: stored bytes do not match their sha256")
}

func TestDiffURL(t *testing.T) {
	if got, want := DiffURL([]uint{1, 2}, []uint{3}), "/compare/profiles?base_runs=1,2&target_runs=3&kind=cpu&role=client"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if DiffURL(nil, []uint{3}) != "" {
		t.Error("a side without runs has no diff")
	}
}

// TestProfiledOncePerGeneration: with the store's generation, which runs
// of a segment have profiles is read once until the next write.
func TestProfiledOncePerGeneration(t *testing.T) {
	sets, before, after := history(7)
	var gen atomic.Uint64
	n := New(sets, Options{Generation: gen.Load})
	for range 3 {
		if _, err := n.Lookup(context.Background(), before, after); err != nil {
			t.Fatal(err)
		}
	}
	if sets.profiled != 2 {
		t.Errorf("%d Profiled calls for 3 lookups, want 2 (one a side)", sets.profiled)
	}
	gen.Add(1)
	n.Lookup(context.Background(), before, after)
	if sets.profiled != 4 {
		t.Errorf("%d Profiled calls after a write, want 4", sets.profiled)
	}
}
