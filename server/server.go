// Package server is kbench's web application, HTTP only: the route table
// (routes.go), one file per action, the middleware, request decoding, and
// fail, the one place errors become statuses (errors.go). Handlers decode
// a request, call the packages that do the work (internal/launch for
// submissions, internal/regressions, internal/store, profiles, ui) and
// render. The runs it launches are executed by the run lifecycle behind
// the Runs interface, which the serve command builds and hands to New
// with the runner's checks (Deps): server imports no runner and so links
// no Kafka client. Only the serve command (internal/cli) imports it.
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
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/regressions/funcs"
	"github.com/kbench/kbench/internal/regressions/notify"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/targets"
	"github.com/kbench/kbench/internal/toolcatalog"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/static"
	"github.com/kbench/kbench/templates"
	"github.com/kbench/kbench/ui"
)

// Config is the settings of kbench serve, filled in by the serve command
// from flags and KBENCH_* environment variables. Some are the run
// lifecycle's and the pruning's (Concurrency, KbenchCommand, RunTimeout,
// Retain), which the serve command reads when it builds them.
type Config struct {
	// DataDir holds the database (when the store is opened by main) and
	// one directory per run with its spec, result and logs.
	DataDir string
	// Concurrency is how many runs execute at once. One by default: runs
	// that share CPU measure each other. (The lifecycle's.)
	Concurrency int
	// Token, when set, is required for every state-changing request
	// (Authorization: Bearer, or the cookie the login form sets).
	Token string
	// Private makes reading pages and the API require the token too.
	Private bool
	// Loopback says the server listens on a loopback address only (main
	// sets it from --listen). Without a token such a server answers only
	// requests whose Host is a loopback address, localhost or one of
	// AllowHosts: a web page cannot reach it by rebinding its own name
	// to 127.0.0.1 (DNS rebinding).
	Loopback bool
	// AllowHosts are further host names (--allow-host) a loopback server
	// without a token answers to, e.g. a name in /etc/hosts or a proxy's.
	AllowHosts []string
	// Targets is the --allow-target policy (package targets, built by
	// the serve command with targets.Parse): the servers a run may
	// target besides the embedded broker. nil: only the embedded broker.
	Targets *targets.Policy
	// Clusters are the clusters this server names (--cluster NAME=FILE):
	// runs may target them by name ("target": {"cluster": NAME}), their
	// servers allowed without Targets, their properties read from
	// the files by the lifecycle when a run starts. nil names none.
	Clusters *clusters.Set
	// Tools are the Kafka tools this server's own worker offers (--tool
	// NAME=PATH): runs of queue local may name them (tools.go).
	Tools *toolcatalog.Set
	// AllowClientFiles (--allow-client-files) lets a server without a
	// Token take requests whose Kafka properties name files
	// (ssl.*.location): files on the machine that runs the client, which
	// the run's process reads and the server never opens. With a Token
	// the users who hold it may give them anyway; named Clusters are the
	// way to give files otherwise.
	AllowClientFiles bool
	// AllowToolClassProps (--allow-tool-class-props) lets a Kafka tool's
	// run take the properties that make the Java client load classes or
	// run a command (rundoc.ClassProp: *.class, *.classes,
	// config.providers, …); without it they are refused, here and by the
	// server's own worker.
	AllowToolClassProps bool
	// KbenchCommand starts kbench for a run; "run --spec … --out …
	// --progress json" is appended. Default: this executable. (The
	// lifecycle's.)
	KbenchCommand []string
	// RunTimeout bounds one run's wall time (default 2h). (The
	// lifecycle's.)
	RunTimeout time.Duration
	// Retain, when positive, is how long finished runs are kept: at start
	// and then every hour, finished runs older than it that no report
	// uses are deleted with their files (lifecycle.Manager.StartPruning,
	// which the serve command starts). Zero keeps runs forever.
	Retain time.Duration
	// NoLocalWorker makes the server execute no runs (kbench serve
	// --local-worker=false): runs wait in their queues for kbench worker
	// processes on a shared PostgreSQL store.
	NoLocalWorker bool
	// MaxRunsPerRequest bounds the runs one request may queue
	// (repetitions, A/B, presets, sweeps with both their phases): more
	// is a 400 naming the field (default launch.DefaultMaxRunsPerRequest).
	MaxRunsPerRequest int
	// MaxQueuedRuns bounds the runs waiting in the queues: a request
	// that would pass it is a 429 (default launch.DefaultMaxQueuedRuns).
	MaxQueuedRuns int
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// MaxUploadBytes bounds profile and output uploads (default 64 MiB).
	MaxUploadBytes int64
	// NotifyURL, when set, receives a POST of each new regression;
	// PublicURL ("http://host:8080") makes its links absolute. The serve
	// command starts the notifier (regressions.Notifier) from them; the
	// server only checks NotifyURL (Validate).
	NotifyURL string
	PublicURL string
	// Regressions is the regressions cache the list, the API and the
	// badges read, built and warmed by the serve command (which also
	// notifies from it). nil: New builds one over the store, which Start
	// warms and Close stops.
	Regressions *regressions.Cache
	// Functions names the functions that moved at each change point and
	// regression (package internal/regressions/funcs), built and started
	// by the serve command. nil: none are named, and the answers carry
	// no functions.
	Functions *funcs.Namer
	// TrustedProxies (--trusted-proxy) are the addresses or CIDRs of
	// reverse proxies whose X-Forwarded-Proto and X-Forwarded-For are
	// believed: a request from one with X-Forwarded-Proto https gets
	// Secure cookies, and wrong tokens are counted per the client
	// address it forwards. Empty: no proxy is believed.
	TrustedProxies []string
	// SessionMaxAge is how long a login lasts (--session-max-age;
	// default DefaultSessionMaxAge): the cookie's Max-Age, and what the
	// server enforces from the issue time the cookie carries.
	SessionMaxAge time.Duration
	Logger        *slog.Logger
}

// Validate checks the parts of a configuration users write by hand (the
// --allow-host names, --trusted-proxy, --session-max-age, --notify-url),
// so main can refuse them before touching disk; New checks the host names
// and proxies too. The --allow-target patterns arrive parsed (Targets).
func (c Config) Validate() error {
	if _, err := compileAllowHosts(c.AllowHosts); err != nil {
		return err
	}
	if _, err := parseTrustedProxies(c.TrustedProxies); err != nil {
		return err
	}
	if c.SessionMaxAge < 0 {
		return fmt.Errorf("--session-max-age %v: must not be negative", c.SessionMaxAge)
	}
	if c.NotifyURL != "" {
		return notify.ValidURL(c.NotifyURL)
	}
	return nil
}

// Deps are what the serve command builds and hands to New besides the
// settings: the store, the run lifecycle and the runner's checks. The
// runner's are passed as data, not imported, so that server links no Kafka
// client; tests hand in a stand-in Runs.
type Deps struct {
	Store *store.Store
	// Runs executes the runs the server queues (lifecycle.Manager). The
	// serve command starts it before the server's Start and closes it
	// after the server's Close.
	Runs Runs
	// Validate checks a spec's Kafka properties as the runner will take
	// them (runner.Validate), wherever a spec is read from a request.
	Validate rundoc.Check
	// ImportMetrics lists the metrics an import of figures measured
	// elsewhere may name for a workload (runner.ImportMetrics).
	ImportMetrics func(rundoc.Workload) []rundoc.Metric
	// E2EApplies is the runner's word on an OMB driver's Kafka
	// properties (runner.E2ERateApplies); nil refuses OMB workloads
	// (omb-workload, omb-driver).
	E2EApplies func(consumer bool, key, value string) (notApplied string, err error)
}

// Server is the web application. It is an http.Handler.
type Server struct {
	cfg   Config
	store *store.Store
	ui    *ui.UI
	// styleSources is the ui's inline style sheets as CSP hash sources,
	// each after a space (securityHeaders).
	styleSources string
	runs         Runs
	parsed       *lru.Cache[uint, *loadedProfile]
	// parsing makes concurrent first requests for a profile share one parse.
	parsing singleflight.Group
	pages   *lru.Cache[string, cachedPage]
	// answers caches JSON answers of detection (pagecache.go);
	// answerBuilds counts the answers built rather than served from it.
	answers      *lru.Cache[string, cachedPage]
	answerBuilds atomic.Int64
	flames       *lru.Cache[string, *encodedBody] // encoded flame-graph answers
	// regressions caches the regressions list (Config.Regressions);
	// ownRegressions says New built it, so Start warms it and Close
	// stops it.
	regressions    *regressions.Cache
	ownRegressions bool
	// functions names regressions' functions (Config.Functions; nil for
	// none).
	functions *funcs.Namer
	// seriesIndex is what /series shows of each series (series.go).
	seriesIndex seriesIndexCache
	// csrfPlaceholder stands for the visitor's token in cached pages.
	csrfPlaceholder []byte
	pprof           *profiles.UI
	engine          *gin.Engine
	log             *slog.Logger
	static          http.Handler

	// validate and importMetrics are Deps.Validate and
	// Deps.ImportMetrics.
	validate      rundoc.Check
	importMetrics func(rundoc.Workload) []rundoc.Metric

	// allowHosts are the --allow-host names (see checkHost).
	allowHosts map[string]bool
	// trustedProxies are the parsed Config.TrustedProxies.
	trustedProxies []netip.Prefix
	// sessions are the logged-out sessions, logins the wrong tokens per
	// client (session.go); clock is time.Now but in tests.
	sessions sessionStore
	logins   *loginLimiter
	clock    func() time.Time
	// launcher checks submissions and queues their runs, and its loop
	// queues sweeps' second phases (package launch).
	launcher *launch.Launcher
}

// New builds the server on deps, every one of which must be set. Call
// Start (after deps.Runs's) to start its background work, and Close to
// stop it.
func New(cfg Config, deps Deps) (*Server, error) {
	if deps.Store == nil || deps.Runs == nil || deps.Validate == nil || deps.ImportMetrics == nil {
		return nil, errors.New("server: Deps needs a Store, Runs, Validate and ImportMetrics")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 64 << 20
	}
	if cfg.SessionMaxAge <= 0 {
		cfg.SessionMaxAge = DefaultSessionMaxAge
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	allowHosts, err := compileAllowHosts(cfg.AllowHosts)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	trustedProxies, err := parseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("server: data directory: %w", err)
	}
	u, err := ui.New(templates.FS, static.FS)
	if err != nil {
		return nil, fmt.Errorf("server: templates: %w", err)
	}
	s := &Server{cfg: cfg, store: deps.Store, runs: deps.Runs, validate: deps.Validate, importMetrics: deps.ImportMetrics, ui: u, log: cfg.Logger, parsed: newLRU[uint, *loadedProfile](32),
		pages: newLRU[string, cachedPage](maxCachedPages), answers: newLRU[string, cachedPage](maxCachedAnswers), flames: newLRU[string, *encodedBody](16), csrfPlaceholder: []byte("csrf-" + randomID(16)),
		pprof: profiles.NewUI(16, func(format string, args ...any) { cfg.Logger.Debug(fmt.Sprintf(format, args...)) })}
	for _, src := range u.StyleSources() {
		s.styleSources += " " + src
	}
	s.regressions, s.functions = cfg.Regressions, cfg.Functions
	if s.regressions == nil {
		s.regressions, s.ownRegressions = regressions.New(deps.Store, ui.RegressionLinks(), cfg.Logger), true
	}
	s.launcher = launch.New(launch.Options{Store: deps.Store, Runs: deps.Runs, Validate: deps.Validate, E2EApplies: deps.E2EApplies,
		Allowed: func(addrs []string) error { return asFieldError(s.checkTargets(addrs)) }, Clusters: cfg.Clusters, Tools: cfg.Tools,
		NoLocalWorker: cfg.NoLocalWorker, TokenRequired: cfg.Token != "", AllowClientFiles: cfg.AllowClientFiles, AllowToolClassProps: cfg.AllowToolClassProps,
		MaxRunsPerRequest: cfg.MaxRunsPerRequest, MaxQueuedRuns: cfg.MaxQueuedRuns, FindJDK: func() error { return findJDK() }, Logger: cfg.Logger})
	s.allowHosts = allowHosts
	s.trustedProxies, s.logins, s.clock = trustedProxies, newLoginLimiter(), time.Now
	if cfg.Token != "" {
		s.ui.SetSessionSlot(sessionMarker)
	}
	s.static = http.StripPrefix("/static/", http.FileServer(http.FS(staticFS())))
	gin.SetMode(gin.ReleaseMode)
	s.engine = gin.New()
	// gin believes X-Forwarded-For from anyone unless told otherwise;
	// c.ClientIP (the address wrong tokens are counted by) must come
	// from the connection or a proxy the operator named.
	if err := s.engine.SetTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, fmt.Errorf("server: --trusted-proxy: %w", err)
	}
	s.engine.Use(s.compress, s.recoverer, s.logRequests, s.securityHeaders, s.checkHost, s.limitBody, s.authenticate, s.checkOrigin)
	s.routes()
	return s, nil
}

func staticFS() fs.FS { return static.FS }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Start starts the server's background work, once its Runs has started
// (and recovered what a previous process left): the sweeps' second
// phases, and the warm-up of the regressions cache New built (not one
// given in Config.Regressions, which its builder warms).
func (s *Server) Start(ctx context.Context) error {
	if s.ownRegressions {
		s.regressions.Warm(ctx)
	}
	s.launcher.Start(ctx)
	return nil
}

// Close stops the server's background work; its Runs is closed after it
// by whoever started it.
func (s *Server) Close() {
	s.launcher.Close()
	if s.ownRegressions {
		s.regressions.Close()
	}
}

// randomID returns n random bytes as hex.
func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
