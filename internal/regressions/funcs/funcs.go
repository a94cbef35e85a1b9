// Package funcs names the functions that moved at a change: for a
// change point of a history, a regression, or kbench check's baseline
// against its candidates, the functions whose share of the runs' CPU
// profiles changed significantly (profiles.Significance at q 0.05),
// ranked by that change with the callers their named callees explain
// left out (profiles.RankFunctions).
//
// The runs compared are those of each side that have a CPU profile of
// the client, at most RunsPerSide a side, the nearest to the change.
// Values are per unit of work (each run's record count: normalize=work)
// when every run has one, else per run total (normalize=total).
//
// Naming is CPU work (each run's profile parsed, the shares of every
// function in every run), so a Namer never does it while a page waits:
// Lookup answers what is known, "computing" for the rest, and a single
// background goroutine computes what was asked, one set at a time,
// pausing while a local run executes (Options.Busy) so that a benchmark
// never shares its cores with it. Results are kept by the ids of the runs
// compared, both sides: a new run with a profile in a segment is a new
// set, and asking again for a set costs nothing.
//
// It is a sub-package of regressions because it links google/pprof
// (through profiles), which the pages that import regressions for its
// types must not; it reads the profiles through RunSets, which the serve
// command implements with the store and package profileset.
package funcs

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/bgloop"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/profiles"
)

const (
	// RunsPerSide is the most runs with profiles a side compares.
	RunsPerSide = 25
	// MaxFunctions is the most functions named for one change.
	MaxFunctions = 10
	// Q is the false discovery rate the significance test controls.
	Q = 0.05
	// Kind and Role are the profiles compared.
	Kind = "cpu"
	Role = "client"
	// DefaultPoll is how often a paused computation asks Busy again.
	DefaultPoll = time.Second
	// maxEntries bounds the sets kept (each a few hundred bytes).
	maxEntries = 4096
	// profiledChunk is how many candidate runs one Profiled call asks
	// about, nearest first, until RunsPerSide are found.
	profiledChunk = 200
)

// Busy reports whether a local run is executing (lifecycle.Manager's
// Executing); while it does, a Namer computes nothing.
type Busy func() bool

// RunSets reads the runs' profiles; the serve command implements it on
// the store with package profileset.
type RunSets interface {
	// Profiled returns those of ids that have a profile of Kind and
	// Role, in the order of ids.
	Profiled(ctx context.Context, ids []uint) ([]uint, error)
	// Inputs loads both sides' profiles of Kind and Role as
	// profiles.RunInput, with their references: each run's record count
	// when every run has one (normalize "work"), else each run's total
	// (normalize "total"); normalize says which.
	Inputs(ctx context.Context, base, target []uint) (b, t []profiles.RunInput, normalize string, err error)
}

// Options configure a Namer.
type Options struct {
	// Busy pauses the computation (nil: never busy).
	Busy Busy
	// Poll is how often Busy is asked again while it holds (default
	// DefaultPoll).
	Poll   time.Duration
	Logger *slog.Logger
	// Generation, when set, changes after every write to the store
	// (store.Store's Generation): which runs of a segment have profiles
	// is then read once per generation, not on every page render.
	Generation func() uint64
}

// Namer names the functions of changes, lazily, and keeps what it named
// by run-id set. Start starts its background computation, Close stops
// it.
type Namer struct {
	sets RunSets
	opts Options
	loop bgloop.Loop

	mu      sync.Mutex
	entries map[string]*entry
	order   []string // keys in insertion order, for eviction
	queue   []*entry
	wake    chan struct{}
	// computed counts the sets computed (tests read it).
	computed int
	// picked memoizes nearest by the side's ids while the store's
	// generation is pickedGen (with Options.Generation).
	picked    map[uint64][]uint
	pickedGen uint64
}

// entry is one run-id set: queued, then done.
type entry struct {
	key          string
	base, target []uint
	done         bool
	ready        chan struct{} // closed when done
	res          wire.Functions
}

// New is a Namer reading profiles through sets.
func New(sets RunSets, opts Options) *Namer {
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Namer{sets: sets, opts: opts, entries: map[string]*entry{}, wake: make(chan struct{}, 1)}
}

// Start starts the background computation of the sets asked for; Close
// stops it.
func (n *Namer) Start(ctx context.Context) {
	n.loop.Start(ctx, func(ctx context.Context) {
		for {
			e := n.next()
			if e == nil {
				select {
				case <-ctx.Done():
					return
				case <-n.wake:
				}
				continue
			}
			res, err := n.compute(ctx, e)
			if err != nil && ctx.Err() != nil {
				return // stopping: the set stays queued, never cached as failed
			}
			if err != nil {
				n.opts.Logger.Error("regressions: name functions", "base", e.base, "target", e.target, "err", err)
			}
			n.finish(e, res)
		}
	})
}

// Close stops the background computation and waits for it.
func (n *Namer) Close() { n.loop.Close() }

// Computed is how many run-id sets were computed since New: a set asked
// for again is not counted again.
func (n *Namer) Computed() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.computed
}

// next takes the oldest queued set (nil for none).
func (n *Namer) next() *entry {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 {
		return nil
	}
	e := n.queue[0]
	n.queue = n.queue[1:]
	return e
}

func (n *Namer) finish(e *entry, res wire.Functions) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.computed++
	e.res, e.done = res, true
	close(e.ready)
}

// Regression names the functions of r: Lookup of its segments.
func (n *Namer) Regression(ctx context.Context, r regressions.Regression) (wire.Functions, error) {
	return n.Lookup(ctx, r.BeforeRuns, r.AfterRuns)
}

// WaitRegression is Wait for r's segments: the notifier's.
func (n *Namer) WaitRegression(ctx context.Context, r regressions.Regression) (wire.Functions, error) {
	return n.Wait(ctx, r.BeforeRuns, r.AfterRuns)
}

// Lookup answers what is known of the change between before (the runs
// before it, in time order) and after (the runs from it on, in time
// order): the functions named, or status "computing" after asking the
// background computation for them, or why none can be. It reads which
// runs have profiles (one small query) and never computes.
func (n *Namer) Lookup(ctx context.Context, before, after []uint) (wire.Functions, error) {
	f, e, err := n.lookup(ctx, before, after)
	if err != nil || e == nil {
		return f, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.done {
		return e.res, nil
	}
	return f, nil
}

// Wait is Lookup waiting, until ctx ends, for the functions to be
// computed; when ctx ends first it answers "computing".
func (n *Namer) Wait(ctx context.Context, before, after []uint) (wire.Functions, error) {
	f, e, err := n.lookup(ctx, before, after)
	if err != nil || e == nil {
		return f, err
	}
	select {
	case <-e.ready:
		n.mu.Lock()
		defer n.mu.Unlock()
		return e.res, nil
	case <-ctx.Done():
		return f, nil
	}
}

// lookup picks the runs compared and, when they can decide, returns the
// set's entry (queued if new) with the "computing" answer; otherwise the
// answer alone.
func (n *Namer) lookup(ctx context.Context, before, after []uint) (wire.Functions, *entry, error) {
	base, err := n.nearest(ctx, before, true)
	if err != nil {
		return wire.Functions{}, nil, err
	}
	target, err := n.nearest(ctx, after, false)
	if err != nil {
		return wire.Functions{}, nil, err
	}
	f := wire.Functions{FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsComputing, Kind: Kind, Role: Role,
		RunsBase: base, RunsTarget: target, RunsNeeded: profiles.MinSignificanceRuns, DiffURL: DiffURL(base, target)},
		Functions: []wire.MovedFunction{}}
	switch {
	case len(base) == 0 || len(target) == 0:
		f.Status = wire.FunctionsNoProfiles
		f.Reason = fmt.Sprintf("no run %s has a %s profile of the %s", map[bool]string{true: "before the change", false: "after the change"}[len(base) == 0], Kind, Role)
		return f, nil, nil
	case len(base) < profiles.MinSignificanceRuns || len(target) < profiles.MinSignificanceRuns:
		f.Status = wire.FunctionsTooFewRuns
		f.Reason = tooFew(len(base), len(target))
		return f, nil, nil
	}
	key := setKey(base, target)
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.entries[key]
	if e == nil {
		e = &entry{key: key, base: base, target: target, ready: make(chan struct{})}
		n.add(e)
		n.queue = append(n.queue, e)
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
	return f, e, nil
}

// add keeps e, dropping the oldest finished sets beyond maxEntries.
func (n *Namer) add(e *entry) {
	n.entries[e.key] = e
	n.order = append(n.order, e.key)
	for i := 0; len(n.entries) > maxEntries && i < len(n.order); {
		old := n.entries[n.order[i]]
		if old == nil || old.done {
			delete(n.entries, n.order[i])
			n.order = append(n.order[:i], n.order[i+1:]...)
			continue
		}
		i++
	}
}

func tooFew(b, t int) string {
	return fmt.Sprintf("%d %s with profiles before the change and %d after; naming functions needs at least %d a side",
		b, plural(b), t, profiles.MinSignificanceRuns)
}

func plural(n int) string {
	if n == 1 {
		return "run"
	}
	return "runs"
}

// nearest returns the at most RunsPerSide runs of ids with profiles
// nearest to the change, in time order: the last of ids when fromEnd
// (the runs before a change), else the first.
func (n *Namer) nearest(ctx context.Context, ids []uint, fromEnd bool) ([]uint, error) {
	if n.opts.Generation == nil {
		return n.pick(ctx, ids, fromEnd)
	}
	gen := n.opts.Generation()
	h := fnv.New64a()
	var b [8]byte
	if fromEnd {
		h.Write([]byte{1})
	}
	for _, id := range ids {
		binary.LittleEndian.PutUint64(b[:], uint64(id))
		h.Write(b[:])
	}
	key := h.Sum64()
	n.mu.Lock()
	if n.picked == nil || n.pickedGen != gen || len(n.picked) >= maxEntries {
		n.picked, n.pickedGen = map[uint64][]uint{}, gen
	}
	got, ok := n.picked[key]
	n.mu.Unlock()
	if ok {
		return got, nil
	}
	got, err := n.pick(ctx, ids, fromEnd)
	if err != nil {
		return nil, err
	}
	// Kept only if no write happened meanwhile (the read may predate it).
	n.mu.Lock()
	if n.pickedGen == gen && n.opts.Generation() == gen {
		n.picked[key] = got
	}
	n.mu.Unlock()
	return got, nil
}

// pick is nearest read from the store.
func (n *Namer) pick(ctx context.Context, ids []uint, fromEnd bool) ([]uint, error) {
	cands := make([]uint, 0, len(ids))
	if fromEnd {
		for i := len(ids) - 1; i >= 0; i-- {
			cands = append(cands, ids[i])
		}
	} else {
		cands = append(cands, ids...)
	}
	found := []uint{}
	for len(cands) > 0 && len(found) < RunsPerSide {
		chunk := cands[:min(profiledChunk, len(cands))]
		cands = cands[len(chunk):]
		got, err := n.sets.Profiled(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("regressions: which runs have profiles: %w", err)
		}
		found = append(found, got[:min(len(got), RunsPerSide-len(found))]...)
	}
	if fromEnd { // back to time order
		for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
			found[i], found[j] = found[j], found[i]
		}
	}
	return found, nil
}

// setKey names a run-id set: "BASE|TARGET", each side as the API lists
// ids.
func setKey(base, target []uint) string {
	return rundoc.JoinIDs(base) + "|" + rundoc.JoinIDs(target)
}

// DiffURL is the run-set differential flame graph of base against target
// (the CPU profiles of the client), "" when a side is empty.
func DiffURL(base, target []uint) string {
	if len(base) == 0 || len(target) == 0 {
		return ""
	}
	return "/compare/profiles?base_runs=" + rundoc.JoinIDs(base) + "&target_runs=" + rundoc.JoinIDs(target) + "&kind=" + Kind + "&role=" + Role
}

// WaitIdle returns once busy reports no local run executing (asking every
// poll), or ctx's error when it ends first. A nil busy is never busy.
// The serve command's profile loader calls it too, so a run that starts
// while a set's profiles load pauses the loading.
func WaitIdle(ctx context.Context, busy Busy, poll time.Duration) error {
	if busy == nil {
		return ctx.Err()
	}
	if poll <= 0 {
		poll = DefaultPoll
	}
	for busy() {
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return ctx.Err()
}

// compute names e's functions, pausing while a local run executes: before
// loading the profiles, before the test and before the ranking. An error
// is also returned as the answer (status "failed").
func (n *Namer) compute(ctx context.Context, e *entry) (wire.Functions, error) {
	f := wire.Functions{FunctionNaming: wire.FunctionNaming{Status: wire.FunctionsNamed, Kind: Kind, Role: Role,
		RunsBase: e.base, RunsTarget: e.target, RunsNeeded: profiles.MinSignificanceRuns, DiffURL: DiffURL(e.base, e.target)},
		Functions: []wire.MovedFunction{}}
	fail := func(err error) (wire.Functions, error) {
		f.Status, f.Reason = wire.FunctionsFailed, err.Error()
		return f, err
	}
	if err := WaitIdle(ctx, n.opts.Busy, n.opts.Poll); err != nil {
		return fail(err)
	}
	base, target, norm, err := n.sets.Inputs(ctx, e.base, e.target)
	if err != nil {
		return fail(fmt.Errorf("load the profiles: %w", err))
	}
	f.Normalize, f.Unit = norm, unitOf(base, target, norm)
	if err := WaitIdle(ctx, n.opts.Busy, n.opts.Poll); err != nil {
		return fail(err)
	}
	res := profiles.Significance(base, target, Q)
	if !res.Decided {
		f.Status = wire.FunctionsTooFewRuns
		f.Reason = tooFew(len(res.BaseRuns), len(res.TargetRuns))
		if len(res.Unusable) > 0 {
			f.Reason += fmt.Sprintf(" (%d %s could not be used: %s)", len(res.Unusable), plural(len(res.Unusable)), res.Unusable[0].Reason)
		}
		return f, nil
	}
	if err := WaitIdle(ctx, n.opts.Busy, n.opts.Poll); err != nil {
		return fail(err)
	}
	for _, r := range profiles.RankFunctions(res, base, target, MaxFunctions) {
		m := wire.MovedFunction{Name: r.Name, Delta: r.Delta, DeltaPct: r.DeltaPct, QValue: r.QValue}
		if fs, ok := res.Function(r.Name); ok {
			m.Base, m.Target = fs.BaseMean, fs.TargetMean
		}
		f.Functions = append(f.Functions, m)
	}
	return f, nil
}

// unitOf words what a delta counts: the sample type's unit per record
// (work), or a share of the run's total.
func unitOf(base, target []profiles.RunInput, norm string) string {
	if norm != "work" {
		return "share of total"
	}
	for _, in := range append(base[:len(base):len(base)], target...) {
		if in.Prof != nil && in.SampleIndex >= 0 && in.SampleIndex < len(in.Prof.SampleType) {
			if u := in.Prof.SampleType[in.SampleIndex].Unit; u != "" {
				return u + "/record"
			}
		}
	}
	return "per record"
}
