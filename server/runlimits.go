package server

import (
	"context"
	"fmt"
)

// Default limits on queued runs (Config.MaxRunsPerRequest,
// Config.MaxQueuedRuns; serve's --max-runs-per-request and
// --max-queued-runs).
const (
	DefaultMaxRunsPerRequest = 200
	DefaultMaxQueuedRuns     = 1000
)

// queueFullError refuses a request whose runs would take the queue past
// Config.MaxQueuedRuns: a 429, since waiting makes room.
type queueFullError struct {
	queued, adding, limit int
}

func (e *queueFullError) Error() string {
	return fmt.Sprintf("%d runs are queued already and %d more would pass the limit of %d queued runs (--max-queued-runs): wait for runs to finish, or cancel some, and try again",
		e.queued, e.adding, e.limit)
}

// tooManyForRequest is the 400 of a request that would queue n runs, more
// than Config.MaxRunsPerRequest: field names what makes them so many,
// made says how (such as "2 configurations × 60 repetitions make 120
// runs").
func (s *Server) tooManyForRequest(field, made string) error {
	return badInput(field, "%s; one request may queue at most %d runs (--max-runs-per-request)", made, s.cfg.MaxRunsPerRequest)
}

// admitRuns checks that a request may queue n runs: at most
// Config.MaxRunsPerRequest of them (else a 400 naming field, with made
// saying how n came about), and no more than Config.MaxQueuedRuns waiting
// in the queues once they are added (else a 429). It is called by every
// path that queues runs for a request, just before it stores them.
func (s *Server) admitRuns(ctx context.Context, field string, n int, made string) error {
	if n > s.cfg.MaxRunsPerRequest {
		return s.tooManyForRequest(field, made)
	}
	return s.admitQueued(ctx, n)
}

// admitQueued is admitRuns' check of the queues' total.
func (s *Server) admitQueued(ctx context.Context, n int) error {
	queued, err := s.store.CountQueued(ctx)
	if err != nil {
		return err
	}
	if int(queued)+n > s.cfg.MaxQueuedRuns {
		return &queueFullError{queued: int(queued), adding: n, limit: s.cfg.MaxQueuedRuns}
	}
	return nil
}
