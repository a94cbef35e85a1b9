package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/profileset"
	"github.com/kbench/kbench/internal/regressions/funcs"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

// newFunctionNamer is the namer of the functions that moved at each
// regression and change point, on st's profiles, computing only while
// busy (a local run executing) does not hold. The caller starts and
// closes it.
func newFunctionNamer(st *store.Store, busy funcs.Busy, log *slog.Logger) *funcs.Namer {
	return funcs.New(functionSets{st: st, busy: busy}, funcs.Options{Busy: busy, Logger: log, Generation: st.Generation})
}

// functionSets is funcs.RunSets on the store: the runs with a CPU
// profile of the client (store.ProfiledRuns), and both sides loaded as a
// run-set diff loads them (profileset), per record when every run has a
// record count, else per total.
type functionSets struct {
	st   *store.Store
	busy funcs.Busy
}

func (f functionSets) Profiled(ctx context.Context, ids []uint) ([]uint, error) {
	return f.st.ProfiledRuns(ctx, ids, funcs.Kind, funcs.Role)
}

func (f functionSets) Inputs(ctx context.Context, base, target []uint) ([]profiles.RunInput, []profiles.RunInput, string, error) {
	set, err := profileset.Load(ctx, f.st, f.load, profileset.Query{BaseRuns: base, TargetRuns: target, Kind: funcs.Kind, Role: funcs.Role})
	if err != nil {
		return nil, nil, "", err
	}
	norm := "work"
	if len(set.WorkReasons()) > 0 {
		norm = "total"
	}
	b, t, _, err := set.Inputs(norm)
	if err != nil {
		return nil, nil, "", err
	}
	return b, t, norm, nil
}

// load reads and parses one stored profile, first waiting while a local
// run executes: a set's 50 profiles take a while to parse, and a run
// that starts meanwhile must not share its cores with them.
func (f functionSets) load(ctx context.Context, id uint) (*profile.Profile, error) {
	if err := funcs.WaitIdle(ctx, f.busy, 0); err != nil {
		return nil, err
	}
	sp, err := f.st.GetProfile(ctx, id)
	if err != nil {
		return nil, err
	}
	p, err := profiles.Load(sp.Data)
	if err != nil {
		return nil, fmt.Errorf("profile %d: %w", id, err)
	}
	return p, nil
}
