// Package server is kbench's web application: gin routes and handlers, the
// run queue that executes runs as child processes, and the live event hub.
// It parses input, calls store, runner, profiles and ui, and renders.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/static"
	"github.com/kbench/kbench/store"
	"github.com/kbench/kbench/templates"
	"github.com/kbench/kbench/ui"
)

// Config is everything the server needs to know, filled in by main from
// flags and KBENCH_* environment variables.
type Config struct {
	// DataDir holds the database (when the store is opened by main) and
	// one directory per run with its spec, result and logs.
	DataDir string
	// Concurrency is how many runs execute at once. One by default: runs
	// that share CPU measure each other.
	Concurrency int
	// Token, when set, is required for every state-changing request
	// (Authorization: Bearer, or the cookie the login form sets).
	Token string
	// Private makes reading pages and the API require the token too.
	Private bool
	// AllowTargets are host:port patterns (path.Match syntax, e.g.
	// "kafka-*.internal:9093") a run may target besides the embedded
	// broker. Empty: only the embedded broker.
	AllowTargets []string
	// KbenchCommand starts kbench for a run; "run --spec … --out …
	// --progress json" is appended. Default: this executable.
	KbenchCommand []string
	// RunTimeout bounds one run's wall time (default 2h).
	RunTimeout time.Duration
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// MaxUploadBytes bounds profile and output uploads (default 64 MiB).
	MaxUploadBytes int64
	Logger         *slog.Logger
}

// Server is the web application. It is an http.Handler.
type Server struct {
	cfg    Config
	store  *store.Store
	ui     *ui.UI
	queue  *queue
	hub    *hub
	parsed *lru[uint, *loadedProfile]
	pages  *lru[string, cachedPage]
	flames *lru[string, *encodedBody] // encoded flame-graph answers
	// csrfPlaceholder stands for the visitor's token in cached pages.
	csrfPlaceholder []byte
	pprof           *profiles.UI
	engine          *gin.Engine
	log             *slog.Logger
	static          http.Handler
}

// New builds the server. Call Start to recover state and start executing
// runs, and Close to stop.
func New(cfg Config, st *store.Store) (*Server, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = 2 * time.Hour
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if len(cfg.KbenchCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("server: find the kbench binary: %w", err)
		}
		cfg.KbenchCommand = []string{exe}
	}
	for _, p := range cfg.AllowTargets {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("server: --allow-target %q: %w", p, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("server: data directory: %w", err)
	}
	u, err := ui.New(templates.FS, static.FS)
	if err != nil {
		return nil, fmt.Errorf("server: templates: %w", err)
	}
	s := &Server{cfg: cfg, store: st, ui: u, log: cfg.Logger, hub: newHub(), parsed: newLRU[uint, *loadedProfile](32),
		pages: newLRU[string, cachedPage](maxCachedPages), flames: newLRU[string, *encodedBody](16), csrfPlaceholder: []byte("csrf-" + randomID(16)),
		pprof: profiles.NewUI(16, func(format string, args ...any) { cfg.Logger.Debug(fmt.Sprintf(format, args...)) })}
	s.queue = newQueue(s)
	s.static = http.StripPrefix("/static/", http.FileServer(http.FS(staticFS())))
	gin.SetMode(gin.ReleaseMode)
	s.engine = gin.New()
	s.engine.Use(s.compress, s.recoverer, s.logRequests, s.securityHeaders, s.limitBody, s.authenticate, s.checkOrigin)
	s.routes()
	return s, nil
}

func staticFS() fs.FS { return static.FS }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Start recovers from a previous process and starts executing runs: runs
// left running are marked interrupted (their process died with the old
// server), and queued runs are queued again.
func (s *Server) Start(ctx context.Context) error {
	n, err := s.store.MarkInterrupted(ctx, "interrupted: the kbench server stopped while this run was in progress")
	if err != nil {
		return fmt.Errorf("server: recover runs: %w", err)
	}
	if n > 0 {
		s.log.Info("marked runs left running as interrupted", "count", n)
	}
	queued, err := s.store.QueuedRuns(ctx)
	if err != nil {
		return fmt.Errorf("server: recover queue: %w", err)
	}
	for _, r := range queued {
		if specNeedsSecrets(r.Spec) {
			// Secrets live only in memory; after a restart they are gone.
			reason := "canceled: the server restarted and this run's credentials were only held in memory; launch it again"
			if err := s.store.CancelQueued(ctx, r.ID, reason); err != nil && !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("server: recover queue: %w", err)
			}
			continue
		}
		s.queue.enqueue(r.ID, nil)
	}
	s.queue.start(s.cfg.Concurrency)
	return nil
}

// Close stops executing runs: running children are interrupted and their
// runs marked interrupted, so nothing is left in a running state.
func (s *Server) Close() { s.queue.stop() }

// randomID returns n random bytes as hex.
func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// isLoopback reports whether a listen address only accepts local clients.
func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// IsLoopbackAddr reports whether host:port listens on loopback only; main
// refuses other addresses without a token.
func IsLoopbackAddr(addr string) bool {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return false
	}
	return isLoopback(addr[:i])
}
