package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/regressions/funcs"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/synthprof"
	"github.com/kbench/kbench/profiles"
)

// synthSets is a funcs.RunSets over synthetic CPU profiles the test
// gives by run id: the server's part (what answers and pages show, when
// they are cached) tested apart from loading stored profiles, which the
// serve command's RunSets does (internal/cli).
type synthSets struct {
	mu   sync.Mutex
	runs map[uint]*profile.Profile
}

func (s *synthSets) Profiled(_ context.Context, ids []uint) ([]uint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []uint{}
	for _, id := range ids {
		if s.runs[id] != nil {
			out = append(out, id)
		}
	}
	return out, nil
}

func (s *synthSets) Inputs(_ context.Context, base, target []uint) ([]profiles.RunInput, []profiles.RunInput, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conv := func(ids []uint) []profiles.RunInput {
		var out []profiles.RunInput
		for _, id := range ids {
			out = append(out, profiles.RunInput{RunID: id, Prof: s.runs[id], SampleIndex: 1, Ref: 1e6})
		}
		return out
	}
	return conv(base), conv(target), "work", nil
}

// profileRuns gives before and after synthetic profiles in which
// send.encode's work per record grows by 30 %.
func (s *synthSets) profileRuns(before, after []uint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[uint]*profile.Profile{}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, ids := range [][]uint{before, after} {
		encode := 2000.0 * (1 + 0.3*float64(i))
		for _, id := range ids {
			s.runs[id] = synthprof.Run(rng, []synthprof.Leaf{
				{Stack: "main.main;send.Loop;send.encode", NanosPerRec: encode},
				{Stack: "main.main;send.Loop;send.compress", NanosPerRec: 1500},
				{Stack: "main.main;recv.decode", NanosPerRec: 2500},
			}, 1e6, 0.02)
		}
	}
}

// namerServer is a test server whose regressions name functions through
// sets, pausing while busy holds.
func namerServer(t *testing.T, sets funcs.RunSets, busy *atomic.Bool) (*testServer, *funcs.Namer) {
	t.Helper()
	n := funcs.New(sets, funcs.Options{Busy: busy.Load, Poll: time.Millisecond})
	n.Start(context.Background())
	t.Cleanup(n.Close)
	return newTestServer(t, func(c *Config) { c.Functions = n }), n
}

// TestChangePointsNameFunctions: each trusted change point of
// /api/history and each regression of /api/regressions says "computing"
// while a local run executes (an answer and a page that are not cached),
// then names the function that moved, and the pages list it with a link
// to the run-set diff.
func TestChangePointsNameFunctions(t *testing.T) {
	var busy atomic.Bool
	busy.Store(true)
	sets := &synthSets{}
	ts, n := namerServer(t, sets, &busy)
	ids := stepSeries(t, ts, "fp-fn", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	sets.profileRuns(ids[:20], ids[20:])
	query := fmt.Sprintf("run=%d&metric=record-send-rate", ids[0])

	var h client.History
	getJSON(t, ts, "/api/history?"+query, &h)
	if len(h.ChangePoints) != 1 || h.ChangePoints[0].FunctionNaming == nil || h.ChangePoints[0].FunctionNaming.Status != wire.FunctionsComputing {
		t.Fatalf("while busy: %+v", h.ChangePoints)
	}
	builds := ts.answerBuilds.Load()
	getJSON(t, ts, "/api/history?"+query, &h)
	if ts.answerBuilds.Load() == builds {
		t.Error("an answer saying computing was served from the cache")
	}
	page := ts.do(t, "GET", "/history?"+query, "").Body.String()
	if !strings.Contains(page, "computing…") {
		t.Error("the history page does not say computing…")
	}

	busy.Store(false)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if f, err := n.Wait(ctx, ids[:20], ids[20:]); err != nil || f.Status != wire.FunctionsNamed {
		t.Fatalf("named: %q %v", f.Status, err)
	}
	getJSON(t, ts, "/api/history?"+query, &h)
	cp := h.ChangePoints[0]
	if cp.FunctionNaming.Status != wire.FunctionsNamed || len(cp.Functions) == 0 || cp.Functions[0].Name != "send.encode" ||
		slices.ContainsFunc(cp.Functions, func(f wire.MovedFunction) bool { return f.Name == "send.compress" }) ||
		!slices.Equal(cp.FunctionNaming.RunsBase, ids[:20]) || cp.FunctionNaming.Normalize != "work" {
		t.Errorf("change point's functions %+v (%+v)", cp.Functions, cp.FunctionNaming)
	}
	var regs client.Regressions
	getJSON(t, ts, "/api/regressions", &regs)
	if len(regs.Regressions) != 1 || len(regs.Regressions[0].Functions) == 0 || regs.Regressions[0].Functions[0].Name != "send.encode" {
		t.Errorf("regressions %+v", regs.Regressions)
	}
	diff := fmt.Sprintf("/compare/profiles?base_runs=%s&amp;target_runs=%s&amp;kind=cpu&amp;role=client", joinUints(ids[:20]), joinUints(ids[20:]))
	for _, path := range []string{"/history?" + query, "/regressions"} {
		page := ts.do(t, "GET", path, "").Body.String()
		if !strings.Contains(page, `<code class="moved-function"`) || !strings.Contains(page, ">send.encode</code>") ||
			!strings.Contains(page, diff) || strings.Contains(page, "computing…") {
			t.Errorf("%s does not list send.encode with the diff link %s", path, diff)
		}
	}
}

// TestNoProfilesNoFunctions: runs without profiles name nothing, and the
// pages show nothing about functions.
func TestNoProfilesNoFunctions(t *testing.T) {
	var busy atomic.Bool
	ts, _ := namerServer(t, &synthSets{}, &busy)
	ids := stepSeries(t, ts, "fp-none", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	query := fmt.Sprintf("run=%d&metric=record-send-rate", ids[0])
	var h client.History
	getJSON(t, ts, "/api/history?"+query, &h)
	if len(h.ChangePoints) != 1 || h.ChangePoints[0].FunctionNaming.Status != wire.FunctionsNoProfiles || len(h.ChangePoints[0].Functions) != 0 {
		t.Fatalf("%+v", h.ChangePoints)
	}
	for _, path := range []string{"/history?" + query, "/regressions"} {
		if page := ts.do(t, "GET", path, "").Body.String(); strings.Contains(page, "Functions:") {
			t.Errorf("%s shows functions without profiles", path)
		}
	}
}

// TestAPIFunctions: GET /api/functions names the functions between two
// run sets (kbench check's question), and refuses bad sides naming the
// field.
func TestAPIFunctions(t *testing.T) {
	var busy atomic.Bool
	sets := &synthSets{}
	ts, _ := namerServer(t, sets, &busy)
	ids := stepSeries(t, ts, "fp-api", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 10, "record-send-rate", "records/s", rundoc.HigherIsBetter, 100, 100)
	sets.profileRuns(ids[:5], ids[5:])
	path := "/api/functions?base_runs=" + joinUints(ids[:5]) + "&target_runs=" + joinUints(ids[5:])
	var f client.Functions
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) { // a guard against hanging, not a timing assertion
		getJSON(t, ts, path, &f)
		if f.Status != wire.FunctionsComputing || time.Now().After(deadline) {
			break
		}
	}
	if f.Status != wire.FunctionsNamed || len(f.Functions) == 0 || f.Functions[0].Name != "send.encode" {
		t.Errorf("%+v", f)
	}
	for _, tt := range []struct{ query, field string }{
		{"target_runs=1", "base_runs"},
		{"base_runs=1", "target_runs"},
		{"base_runs=x&target_runs=1", "base_runs"},
		{"base_runs=1,1&target_runs=2", "base_runs"},
		{"base_runs=1&target_runs=" + strings.Repeat("2,", 50) + "3", "target_runs"},
	} {
		rec := ts.do(t, "GET", "/api/functions?"+tt.query, "")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"`+tt.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", tt.query, rec.Code, rec.Body, tt.field)
		}
	}
}

func getJSON(t *testing.T, ts *testServer, path string, into any) {
	t.Helper()
	rec := ts.do(t, "GET", path, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
		t.Fatal(err)
	}
}
