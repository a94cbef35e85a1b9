package seriescache

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// fakeSource is a store of series signatures by key, with a generation
// that each change moves and a log of the keys each change touched
// (known false: the next SeriesChangedSince cannot name them).
type fakeSource struct {
	gen     uint64
	series  map[string]rundoc.SeriesInfo
	changed map[uint64][]string // keys changed by the write that made gen
	unknown map[uint64]bool     // writes whose keys are unknown
	infos   [][]string          // the keys of each SeriesInfos call
	fail    error
}

func (f *fakeSource) set(known bool, infos ...rundoc.SeriesInfo) {
	f.gen++
	for _, si := range infos {
		if si.Runs == 0 {
			delete(f.series, si.Key)
		} else {
			f.series[si.Key] = si
		}
		f.changed[f.gen] = append(f.changed[f.gen], si.Key)
	}
	f.unknown[f.gen] = !known
}

func (f *fakeSource) SeriesGeneration() uint64 { return f.gen }

func (f *fakeSource) SeriesChangedSince(gen uint64) ([]string, bool) {
	var keys []string
	for g := gen + 1; g <= f.gen; g++ {
		if f.unknown[g] {
			return nil, false
		}
		keys = append(keys, f.changed[g]...)
	}
	return keys, true
}

func (f *fakeSource) ListSeries(context.Context) ([]rundoc.SeriesInfo, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	return slices.Collect(maps.Values(f.series)), nil
}

func (f *fakeSource) SeriesInfos(_ context.Context, keys []string) ([]rundoc.SeriesInfo, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	f.infos = append(f.infos, keys)
	out := []rundoc.SeriesInfo{}
	for _, k := range keys {
		if si, ok := f.series[k]; ok {
			out = append(out, si)
		}
	}
	return out, nil
}

// TestCacheUpdate: the first update lists every series and derives each;
// a write the source names costs those series' signatures and the
// derivation of those whose signature moved, drops a series left without
// runs, and lists nothing; a write it cannot name lists every series
// once but derives only what changed; no write reads nothing; a failed
// read leaves the cache as it was.
func TestCacheUpdate(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{series: map[string]rundoc.SeriesInfo{}, changed: map[uint64][]string{}, unknown: map[uint64]bool{}}
	src.set(true, rundoc.SeriesInfo{Key: "a", Runs: 1, MaxID: 1, SumID: 1}, rundoc.SeriesInfo{Key: "b", Runs: 1, MaxID: 2, SumID: 2})
	var c Cache[string]
	var derived []string
	derive := func(_ context.Context, todo []rundoc.SeriesInfo) ([]string, error) {
		out := make([]string, len(todo))
		for i, si := range todo {
			derived = append(derived, si.Key)
			out[i] = si.Key + "@" + string(rune('0'+si.Runs))
		}
		return out, nil
	}
	state := func() map[string]string {
		m := map[string]string{}
		for sig, v := range c.All() {
			m[sig.Key] = v
		}
		return m
	}
	step := func(name string, wantUpdated bool, wantDerived []string, wantLists int, want map[string]string) {
		t.Helper()
		derived = nil
		updated, err := c.Update(ctx, src, derive)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slices.Sort(derived)
		if updated != wantUpdated || !slices.Equal(derived, wantDerived) || c.Lists() != wantLists || !maps.Equal(state(), want) || c.Len() != len(want) {
			t.Errorf("%s: updated %v, derived %v, %d lists, kept %v; want %v, %v, %d, %v", name, updated, derived, c.Lists(), state(), wantUpdated, wantDerived, wantLists, want)
		}
	}
	step("first", true, []string{"a", "b"}, 1, map[string]string{"a": "a@1", "b": "b@1"})
	step("no write", false, nil, 1, map[string]string{"a": "a@1", "b": "b@1"})

	src.set(true, rundoc.SeriesInfo{Key: "a", Runs: 2, MaxID: 3, SumID: 4}, rundoc.SeriesInfo{Key: "c", Runs: 1, MaxID: 5, SumID: 5})
	step("a named write", true, []string{"a", "c"}, 1, map[string]string{"a": "a@2", "b": "b@1", "c": "c@1"})
	if got := src.infos[len(src.infos)-1]; !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("SeriesInfos(%v), want [a c]", got)
	}

	src.set(true, rundoc.SeriesInfo{Key: "b"}) // emptied
	step("a series emptied", true, nil, 1, map[string]string{"a": "a@2", "c": "c@1"})

	src.set(false, rundoc.SeriesInfo{Key: "c", Runs: 2, MaxID: 6, SumID: 11})
	step("a write the source cannot name", true, []string{"c"}, 2, map[string]string{"a": "a@2", "c": "c@2"})

	src.set(true, rundoc.SeriesInfo{Key: "a", Runs: 3, MaxID: 7, SumID: 11})
	src.fail = errors.New("connection lost")
	if _, err := c.Update(ctx, src, derive); err == nil {
		t.Fatal("a failed read: no error")
	}
	src.fail = nil
	if !maps.Equal(state(), map[string]string{"a": "a@2", "c": "c@2"}) {
		t.Errorf("after a failed read: kept %v", state())
	}
	step("after a failed read", true, []string{"a"}, 2, map[string]string{"a": "a@3", "c": "c@2"})
}
