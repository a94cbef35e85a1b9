package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// changesChannel is the PostgreSQL notification channel of committed
// writes: each store notifies it after a write (wrote), with its own
// origin as the payload, and every other store on the database counts
// the write in its Generation. That is how a server's page cache sees
// the results a kbench worker on another machine stored.
const changesChannel = "kbench_changes"

// outsideSeriesSuffix follows the origin in a changesChannel payload when
// the write cannot have changed a series' succeeded runs, so the other
// stores leave their SeriesGeneration alone. Origins are hex, so the
// suffix never ends one.
const outsideSeriesSuffix = " outside-series"

// seriesKeysMark follows the origin in a changesChannel payload of a
// write that may have changed series, before the keys of those series
// (a JSON array of strings), so the other stores' caches read those
// series alone (SeriesChangedSince). A payload of the origin alone, as
// an older kbench sends and as one whose keys would not fit sends, says
// any series may have changed.
const seriesKeysMark = " series-keys "

// maxNotifyPayload is PostgreSQL's limit on a notification's payload:
// shorter than 8000 bytes.
const maxNotifyPayload = 7999

// listenRetry is how long the listener waits before connecting again
// after losing its connection.
const listenRetry = time.Second

// listener holds one connection LISTENing on a PostgreSQL store's
// channels, from Open to Close. Open waits for its first LISTEN, so
// nothing read through the store predates it. While it is reconnecting
// after losing its connection the store cannot know of other processes'
// writes, so each reconnection counts as a write and wakes every
// watcher: nothing cached or read before it is trusted after it.
type listener struct {
	s      *Store
	origin string

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	watchers map[uint]map[chan struct{}]struct{}
}

// startListener connects the store's listener and starts it.
func startListener(ctx context.Context, s *Store) (*listener, error) {
	b := make([]byte, 8)
	rand.Read(b)
	l := &listener{s: s, origin: hex.EncodeToString(b), done: make(chan struct{}),
		watchers: map[uint]map[chan struct{}]struct{}{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	conn, err := l.connect(ctx)
	if err != nil {
		l.cancel()
		return nil, fmt.Errorf("listen for other processes' changes: %w", err)
	}
	go l.loop(conn)
	return l, nil
}

// stop stops listening and waits for the connection to close.
func (l *listener) stop() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// connect opens a connection and LISTENs on the store's channels.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.s.pgConfig.Copy())
	if err != nil {
		return nil, err
	}
	for _, ch := range []string{changesChannel, runEventsChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return conn, nil
}

func (l *listener) loop(conn *pgx.Conn) {
	defer close(l.done)
	for {
		err := l.receive(conn)
		conn.Close(context.WithoutCancel(l.ctx))
		for {
			if l.ctx.Err() != nil {
				return
			}
			slog.Warn("store: listening for other processes' changes", "err", redactErr(err, l.s.pgConfig.Password), "retry_in", listenRetry)
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(listenRetry):
			}
			if conn, err = l.connect(l.ctx); err == nil {
				break
			}
		}
		// Whatever happened while it was away was missed.
		l.s.moveSeries(nil, false)
		l.s.gen.Add(1)
		l.wakeAll()
	}
}

// receive handles notifications until the connection fails or the store
// closes.
func (l *listener) receive(conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(l.ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case changesChannel:
			origin, outside := strings.CutSuffix(n.Payload, outsideSeriesSuffix)
			origin, keys, known := seriesKeys(origin)
			if origin != l.origin {
				// A payload without the suffix (also an older kbench's,
				// which sends its origin alone) may have changed series,
				// those it names or, naming none, any.
				if !outside {
					l.s.moveSeries(keys, known)
				}
				l.s.gen.Add(1)
			}
		case runEventsChannel:
			if id, err := strconv.ParseUint(n.Payload, 10, 64); err == nil {
				l.wake(uint(id))
			}
		}
	}
}

func (l *listener) wake(id uint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	signal(l.watchers[id])
}

func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, set := range l.watchers {
		signal(set)
	}
}

// signal wakes each watcher of a set without blocking: a wake-up already
// pending stands for this one too.
func signal(set map[chan struct{}]struct{}) {
	for ch := range set {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// WatchRunEvents returns a channel that receives a value after events of
// run id are appended by any process (AppendRunEvents), and stop, to call
// when done. Wake-ups coalesce: after one, read every event since the
// last one read. On SQLite, one machine's store whose events never come
// from another process, the channel never receives: a caller that needs
// events polls RunEventsAfter. A wake-up is a hint, never a guarantee (a
// lost connection loses notifications until it is back, when every
// watcher is woken): a watcher also polls, rarely.
func (s *Store) WatchRunEvents(id uint) (wake <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	l := s.listen
	if l == nil {
		return ch, func() {}
	}
	l.mu.Lock()
	if l.watchers[id] == nil {
		l.watchers[id] = map[chan struct{}]struct{}{}
	}
	l.watchers[id][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.watchers[id], ch)
		if len(l.watchers[id]) == 0 {
			delete(l.watchers, id)
		}
	}
}

// seriesKeys splits a changesChannel payload without its outside-series
// suffix into its origin and the series keys it names; known is false
// when it names none (an older kbench's, one whose keys did not fit, one
// garbled).
func seriesKeys(payload string) (origin string, keys []string, known bool) {
	origin, list, ok := strings.Cut(payload, seriesKeysMark)
	if !ok || json.Unmarshal([]byte(list), &keys) != nil {
		return origin, nil, false
	}
	return origin, keys, true
}

// orEmpty is keys, or an empty list for nil (JSON [] rather than null).
func orEmpty(keys []string) []string {
	if keys == nil {
		return []string{}
	}
	return keys
}

// notifyChange tells the other stores on a PostgreSQL database that this
// one committed a write (see changesChannel). A failure only delays what
// other servers show until their next own write; it is logged.
func (s *Store) notifyChange(series bool, keys []string, known bool) {
	if s.listen == nil {
		return
	}
	payload := s.listen.origin
	switch {
	case !series:
		payload += outsideSeriesSuffix
	case known:
		if b, err := json.Marshal(orEmpty(keys)); err == nil && len(payload)+len(seriesKeysMark)+len(b) <= maxNotifyPayload {
			payload += seriesKeysMark + string(b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.sqlDB.ExecContext(ctx, "SELECT pg_notify($1, $2)", changesChannel, payload); err != nil && !errors.Is(err, context.Canceled) {
		slog.Warn("store: tell other processes of a write", "err", redactErr(err, s.pgConfig.Password))
	}
}
