package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/kbench/kbench/internal/bgloop"
	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// Runs is what launching asks of the run lifecycle: to queue the runs it
// stored, to cancel a sweep's runs, and the secrets of runs still
// waiting. lifecycle.Manager is one; tests stand in their own.
type Runs interface {
	// Submit queues stored run id with the secrets its process needs,
	// held in memory only. A run whose Submit fails stays queued in the
	// store and is queued again by the lifecycle's next Start.
	Submit(ctx context.Context, id uint, secrets map[string]string) error
	// Cancel stops run id; it wraps store.ErrConflict when the run is
	// already final.
	Cancel(ctx context.Context, id uint) error
	// HeldSecrets returns the secrets held for the first of ids still
	// waiting to start that has every one of keys, nil when none has.
	HeldSecrets(ids []uint, keys []string) map[string]string
}

// Options are a Launcher's dependencies and settings.
type Options struct {
	Store *store.Store
	Runs  Runs
	// Validate is the Kafka client's check of a spec (runner.Validate),
	// applied whenever a spec is built from a request or a stored file.
	Validate rundoc.Check
	// E2EApplies is the runner's word on the Kafka properties of an OMB
	// driver (runner.E2ERateApplies), injected as Validate is; nil
	// refuses OMB workloads (omb.go).
	E2EApplies func(consumer bool, key, value string) (notApplied string, err error)
	// Allowed checks a spec's bootstrap servers (spec.Targets()) against
	// the target policy (--allow-target): nil when it allows them all,
	// else why not, a *rundoc.FieldError naming the field or any error
	// (then reported on bootstrap-server). nil allows no bootstrap server
	// at all.
	Allowed func(addrs []string) error
	// Clusters are the clusters the server's own worker names (--cluster)
	// and Tools the Kafka tools it offers (--tool); nil names none.
	Clusters *clusters.Set
	Tools    *toolcatalog.Set
	// NoLocalWorker says the server executes no runs itself: its queue
	// takes no per-run password and offers no cluster or tool of its own.
	NoLocalWorker bool
	// TokenRequired says the server requires a token: its holders may
	// give files on the client's machine (ssl.*.location) without
	// AllowClientFiles.
	TokenRequired       bool
	AllowClientFiles    bool
	AllowToolClassProps bool
	// MaxRunsPerRequest and MaxQueuedRuns bound the runs one request may
	// queue and the runs waiting in the queues (defaults
	// DefaultMaxRunsPerRequest and DefaultMaxQueuedRuns).
	MaxRunsPerRequest int
	MaxQueuedRuns     int
	// FindJDK says whether the write-path preset's Java strategies can
	// run here (nil when java, javac and jfr are on PATH); default
	// jdk.Find.
	FindJDK func() error
	Logger  *slog.Logger
}

// Launcher checks requests into runs and queues them. Build it with New;
// Start runs the loop that queues sweeps' second phases, Close stops it.
type Launcher struct {
	opts  Options
	store *store.Store
	runs  Runs
	log   *slog.Logger

	// loop is the sweep loop, between Start and Close.
	loop bgloop.Loop
}

// New builds a launcher from its dependencies.
func New(opts Options) *Launcher {
	if opts.MaxRunsPerRequest <= 0 {
		opts.MaxRunsPerRequest = DefaultMaxRunsPerRequest
	}
	if opts.MaxQueuedRuns <= 0 {
		opts.MaxQueuedRuns = DefaultMaxQueuedRuns
	}
	if opts.FindJDK == nil {
		opts.FindJDK = func() error {
			_, err := jdk.Find("")
			return err
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return &Launcher{opts: opts, store: opts.Store, runs: opts.Runs, log: opts.Logger}
}

// Start runs AdvanceSweeps now and then whenever the store changed (a
// run finished here, or, on PostgreSQL, anywhere), until Close; the loop
// is detached from ctx's cancellation (a caller's start-up context may
// end before Close). Whoever owns the launcher starts it once.
func (l *Launcher) Start(ctx context.Context) { l.loop.Start(ctx, l.sweepLoop) }

// Close stops the sweep loop and waits for it; a launcher never started,
// or closed already, has nothing to stop.
func (l *Launcher) Close() { l.loop.Close() }

// sweepLoop is Start's loop: a pass at once, then one per sweepPollEvery
// in which the store's generation moved; a pass that failed is tried
// again at the next tick.
func (l *Launcher) sweepLoop(ctx context.Context) {
	var last uint64
	first := true
	check := func() {
		g := l.store.Generation()
		if !first && g == last {
			return
		}
		if err := l.AdvanceSweeps(ctx); err != nil {
			if ctx.Err() == nil {
				l.log.Warn("sweeps: queue second phases", "err", err)
			}
			return
		}
		first, last = false, g
	}
	check()
	bgloop.Every(ctx, sweepPollEvery, check)
}

// randomID returns n random bytes as hex: the ids of groups, batches and
// sweeps.
func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// targetRefusal is the target policy's verdict (Options.Allowed) on a
// spec's bootstrap servers as a field error, nil when it allows them
// all; without a policy none is allowed. A refusal that is not a field
// error already is one on bootstrap-server, saying what the policy said.
func (l *Launcher) targetRefusal(addrs []string) *rundoc.FieldError {
	var err error
	switch {
	case l.opts.Allowed != nil:
		err = l.opts.Allowed(addrs)
	case len(addrs) > 0:
		err = fmt.Errorf("%s is not an allowed target", addrs[0])
	}
	if err == nil {
		return nil
	}
	var fe *rundoc.FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return &rundoc.FieldError{Field: "bootstrap-server", Msg: err.Error()}
}
