package launch

import (
	"context"
	"errors"
	"fmt"

	"github.com/kbench/kbench/internal/rundoc"
)

// Default limits on queued runs (Options.MaxRunsPerRequest,
// Options.MaxQueuedRuns; serve's --max-runs-per-request and
// --max-queued-runs).
const (
	DefaultMaxRunsPerRequest = 200
	DefaultMaxQueuedRuns     = 1000
)

// ErrQueueFull marks a request whose runs would take the queues past
// Options.MaxQueuedRuns: a 429, since waiting makes room. The error that
// wraps it says how many runs are queued and how many were asked for.
var ErrQueueFull = errors.New("too many queued runs")

// queueFullError is the ErrQueueFull of one request.
type queueFullError struct {
	queued, adding, limit int
}

func (e *queueFullError) Error() string {
	return fmt.Sprintf("%d runs are queued already and %d more would pass the limit of %d queued runs (--max-queued-runs): wait for runs to finish, or cancel some, and try again",
		e.queued, e.adding, e.limit)
}

func (e *queueFullError) Is(target error) bool { return target == ErrQueueFull }

// tooManyForRequest is the field error of a request that would queue
// more runs than Options.MaxRunsPerRequest: field names what makes them
// so many, made says how (such as "2 configurations × 60 repetitions
// make 120 runs").
func (l *Launcher) tooManyForRequest(field, made string) error {
	return rundoc.NewFieldError(field, "%s; one request may queue at most %d runs (--max-runs-per-request)", made, l.opts.MaxRunsPerRequest)
}

// admitRuns checks that a request may queue n runs: at most
// Options.MaxRunsPerRequest of them (else a field error naming field,
// with made saying how n came about), and no more than
// Options.MaxQueuedRuns waiting in the queues once they are added (else
// ErrQueueFull). It is called by every path that queues runs for a
// request, just before it stores them.
func (l *Launcher) admitRuns(ctx context.Context, field string, n int, made string) error {
	if n > l.opts.MaxRunsPerRequest {
		return l.tooManyForRequest(field, made)
	}
	return l.admitQueued(ctx, n)
}

// admitQueued is admitRuns' check of the queues' total.
func (l *Launcher) admitQueued(ctx context.Context, n int) error {
	queued, err := l.store.CountQueued(ctx)
	if err != nil {
		return err
	}
	if int(queued)+n > l.opts.MaxQueuedRuns {
		return &queueFullError{queued: int(queued), adding: n, limit: l.opts.MaxQueuedRuns}
	}
	return nil
}
