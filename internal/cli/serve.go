package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kbench/kbench/internal/dirlock"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/regressions/funcs"
	"github.com/kbench/kbench/internal/regressions/notify"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/server"
	"github.com/kbench/kbench/ui"
)

// Serve is `kbench serve`.
var Serve = &Command{
	Name:      "serve",
	UsageLine: "serve [flags]",
	Short:     "the web application (default http://127.0.0.1:8080)",
	Run:       cmdServe,
}

// cmdServe starts the web application. Every flag can also be set with its
// KBENCH_* variable (see fromEnv); flags win.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kbench serve", "Usage: kbench serve [flags]\n\n"+
		"Every flag can also be set with an environment variable: KBENCH_ and the flag's name in capitals,\n"+
		"- as _ (KBENCH_RUN_TIMEOUT). Flags win; a repeatable flag's variable takes a comma-separated list\n"+
		"that the flags add to. An empty variable counts as unset.\n\n", stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "host:port to serve on")
	data := fs.String("data", "./kbench-data", "directory for the SQLite database and run files")
	database := fs.String("database", "", "the database: a postgres:// (or postgresql://) URL for PostgreSQL, or an SQLite file (default: kbench.db in --data)")
	localWorker := fs.Bool("local-worker", true, "execute runs of queue local here; false serves only, and runs wait in their queues for kbench worker processes (PostgreSQL --database)")
	token := fs.String("token", "", "token required for changes (and, with --private, for reading); needed off loopback")
	private := fs.Bool("private", false, "require the token for reading too")
	retain := fs.String("retain", "0", "delete finished runs older than this many `days` that no report uses, with their files (at start, then hourly); 0 keeps them forever")
	notifyURL := fs.String("notify-url", "", "POST each new regression there as JSON, with a Slack-compatible text (a webhook URL)")
	maxPerRequest := fs.Int("max-runs-per-request", launch.DefaultMaxRunsPerRequest, "most runs one request may queue (repetitions, A/B, presets, a sweep's both phases); more is a 400")
	maxQueued := fs.Int("max-queued-runs", launch.DefaultMaxQueuedRuns, "most runs waiting in the queues; a request that would queue more is a 429")
	ex := addExecFlags(fs.FlagSet, "host:port pattern a run may target besides the embedded broker (repeatable; * matches within one DNS label, never a dot; port * for any)")
	allowClientFiles := fs.Bool("allow-client-files", false, "without --token, accept requests whose Kafka properties name files (ssl.*.location): files on the machine that runs the client, read by the run, never by the server; refused without (name a cluster with --cluster instead)")
	var allowHosts listFlag
	fs.Var(&allowHosts, "allow-host", "host name (no port) a loopback server without --token also answers to, besides localhost and loopback addresses (repeatable)")
	var trustedProxies listFlag
	fs.Var(&trustedProxies, "trusted-proxy", "address or CIDR of a reverse proxy whose X-Forwarded-Proto (https: Secure cookies) and X-Forwarded-For (the client wrong tokens are counted by) are believed (repeatable)")
	sessionMaxAge := fs.Duration("session-max-age", server.DefaultSessionMaxAge, "how long a browser login lasts (the server refuses older sessions)")
	fs.env = everyFlag
	fs.envChecks = ex.envChecks()
	fs.envChecks["allow-host"] = func(h []string) error { return server.Config{AllowHosts: h}.Validate() }
	fs.envChecks["trusted-proxy"] = func(p []string) error { return server.Config{TrustedProxies: p}.Validate() }
	if code, ok := fs.parse(args); !ok {
		return code
	}
	from := fs.from
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return fs.usageError("%s %s: must be host:port (e.g. 127.0.0.1:8080): %v", from["listen"], *listen, err)
	}
	if !server.IsLoopbackAddr(*listen) && *token == "" {
		return fs.usageError("%s %s is reachable from other machines; set --token (or KBENCH_TOKEN) to protect it", from["listen"], *listen)
	}
	named, ok := ex.check("kbench serve", from, stderr)
	if !ok {
		return 2
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max-runs-per-request", *maxPerRequest}, {"max-queued-runs", *maxQueued}} {
		if f.v < 1 {
			return fs.usageError("%s: must be at least 1, got %d", from[f.name], f.v)
		}
	}
	retainFor, err := parseRetain(*retain)
	if err != nil {
		return fs.usageError("%s: %v", from["retain"], err)
	}
	if *notifyURL != "" {
		if err := (server.Config{NotifyURL: *notifyURL}).Validate(); err != nil {
			return fs.usageError("%s: want an http:// or https:// URL", from["notify-url"])
		}
	}
	if *sessionMaxAge <= 0 {
		return fs.usageError("%s: must be positive (such as 720h), got %v", from["session-max-age"], *sessionMaxAge)
	}
	if !*localWorker && !store.IsPostgresURL(*database) {
		return fs.usageError("%s=false: no worker could take the runs of an SQLite store (kbench worker needs a shared PostgreSQL --database)", from["local-worker"])
	}
	cfg := server.Config{DataDir: *data, Concurrency: *ex.concurrency, NoLocalWorker: !*localWorker, Token: *token, Private: *private,
		Loopback: server.IsLoopbackAddr(*listen), AllowHosts: allowHosts, Targets: ex.targets, RunTimeout: *ex.runTimeout, Retain: retainFor, Clusters: named, Tools: ex.toolSet,
		MaxRunsPerRequest: *maxPerRequest, MaxQueuedRuns: *maxQueued, AllowClientFiles: *allowClientFiles, AllowToolClassProps: *ex.classProps,
		TrustedProxies: trustedProxies, SessionMaxAge: *sessionMaxAge}
	if *notifyURL != "" {
		cfg.NotifyURL, cfg.PublicURL = *notifyURL, publicURL(*listen)
	}
	if err := cfg.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	return serveWith(ctx, serveSettings{Listen: *listen, Database: *database, Config: cfg}, stdout, stderr)
}

// serveSettings is what `kbench serve` runs with once its flags and
// KBENCH_* variables are read and checked.
type serveSettings struct {
	Listen string
	// Database is --database: a PostgreSQL URL or an SQLite path; ""
	// for kbench.db in the data directory.
	Database string
	Config   server.Config // DataDir is --data; no Logger yet
}

// serveWith is serve; tests of the flags and variables replace it to see
// what they resolved to without serving.
var serveWith = serve

// serve opens the data directory and serves until ctx ends.
func serve(ctx context.Context, set serveSettings, stdout, stderr io.Writer) int {
	cfg := set.Config
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	dsn := set.Database
	if dsn == "" {
		dsn = filepath.Join(cfg.DataDir, "kbench.db")
	}
	if !store.IsPostgresURL(dsn) {
		release, ok := lockSQLiteStore(cfg.DataDir, dsn, stderr)
		if !ok {
			return 1
		}
		defer release()
	}
	// The store's errors show a URL with its password redacted.
	st, err := store.Open(dsn)
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		if errors.Is(err, store.ErrForeignDatabase) || errors.Is(err, store.ErrNewerSchema) {
			if store.IsPostgresURL(dsn) {
				fmt.Fprintln(stderr, "kbench serve: nothing was changed in the database; choose another --database")
			} else {
				fmt.Fprintln(stderr, "kbench serve: nothing was changed in the file; move it away or choose another --data directory")
			}
		}
		return 1
	}
	defer st.Close()
	// The regressions cache the pages and the notifier share.
	regs := regressions.New(st, ui.RegressionLinks(), cfg.Logger)
	cfg.Regressions = regs
	srv, namer, stop, err := startServer(ctx, cfg, st)
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 1
	}
	// Warm the regressions list in the background, and with --notify-url
	// post each new regression; both stop (deferred) before the store
	// closes.
	regs.Warm(ctx)
	defer regs.Close()
	if cfg.NotifyURL != "" {
		n := notify.New(regs, st, notify.Config{URL: cfg.NotifyURL, PublicURL: cfg.PublicURL, Logger: cfg.Logger, Functions: namer})
		n.Start(ctx)
		defer n.Close()
	}
	ln, err := net.Listen("tcp", set.Listen)
	if err != nil {
		stop()
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 1
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	if set.Database != "" {
		fmt.Fprintf(stdout, "kbench serving on http://%s (data in %s, database %s)\n", ln.Addr(), cfg.DataDir, store.Redact(set.Database))
	} else {
		fmt.Fprintf(stdout, "kbench serving on http://%s (data in %s)\n", ln.Addr(), cfg.DataDir)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
	}
	// Stop runs first (they are stored as interrupted), then the listener.
	stop()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(shutCtx)
	return 0
}

// startServer builds the run lifecycle on st (lifecycle.Manager, with the
// --allow-target recheck of runs a previous process left queued) and the
// server on it, with the runner's checks; then starts the lifecycle (which
// recovers what a previous process left), the pruning of runs past
// cfg.Retain, and the server's background work. stop stops them in the
// opposite order: the lifecycle last, so nothing is left running in the
// store. namer names the functions that moved at each regression
// (server.Config.Functions, built here unless given, and started and
// stopped with the rest), pausing while the lifecycle executes a run.
func startServer(ctx context.Context, cfg server.Config, st *store.Store) (srv *server.Server, namer *funcs.Namer, stop func(), err error) {
	// Runs a previous process left queued are checked again against
	// today's --allow-target: serve cancels those it no longer allows.
	recheck := allowsStored(cfg.Targets, "kbench serve")
	command := cfg.KbenchCommand
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("find the kbench binary: %w", err)
		}
		command = []string{exe}
	}
	runs := lifecycle.NewManager(st, lifecycle.Options{Command: command, DataDir: cfg.DataDir, Concurrency: cfg.Concurrency,
		RunTimeout: cfg.RunTimeout, Recheck: recheck, NoWorker: cfg.NoLocalWorker, Clusters: cfg.Clusters, Tools: cfg.Tools,
		AllowToolClassProps: cfg.AllowToolClassProps, Logger: cfg.Logger})
	// The functions that moved at each regression, named in the
	// background, never while a run executes here.
	if cfg.Functions == nil {
		cfg.Functions = newFunctionNamer(st, runs.Executing, cfg.Logger)
	}
	namer = cfg.Functions
	srv, err = server.New(cfg, server.Deps{Store: st, Runs: runs, Validate: runner.Validate, ImportMetrics: runner.ImportMetrics, E2EApplies: runner.E2ERateApplies})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := runs.Start(ctx); err != nil {
		return nil, nil, nil, err
	}
	stopPruning := runs.StartPruning(ctx, cfg.Retain)
	if err := srv.Start(ctx); err != nil {
		stopPruning()
		runs.Close()
		return nil, nil, nil, err
	}
	namer.Start(ctx)
	return srv, namer, func() {
		namer.Close()
		srv.Close()
		stopPruning()
		runs.Close()
	}, nil
}

// lockSQLiteStore takes the lock of the data directory (dirlock, held
// until release or the process's end) and, for an SQLite file outside it,
// of the file (FILE.lock): two servers on one SQLite store would both run
// its queued runs, and each would mark the other's running runs
// interrupted when it starts. A PostgreSQL store is not locked: servers
// and workers share it, each recovering only runs whose worker is gone.
// It reports a held lock on stderr, naming the process that holds it.
func lockSQLiteStore(dataDir, dbFile string, stderr io.Writer) (release func(), ok bool) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		fmt.Fprintf(stderr, "kbench serve: --data %s: %v\n", dataDir, err)
		return nil, false
	}
	paths := []string{dirlock.In(dataDir)}
	if abs, err := filepath.Abs(dbFile); err == nil {
		if dataAbs, err := filepath.Abs(dataDir); err == nil && filepath.Dir(abs) != dataAbs {
			paths = append(paths, abs+".lock")
		}
	}
	var locks []*dirlock.Lock
	release = func() {
		for _, l := range locks {
			l.Release()
		}
	}
	for i, p := range paths {
		l, err := dirlock.Acquire(p, "kbench serve")
		var held *dirlock.HeldError
		switch {
		case errors.As(err, &held) && i == 0:
			fmt.Fprintf(stderr, "kbench serve: the data directory %s is in use by %s (lock file %s): two servers on one SQLite store would both run its queued runs; stop that one, or choose another --data\n", dataDir, held.Holder, p)
		case errors.As(err, &held):
			fmt.Fprintf(stderr, "kbench serve: the database %s is in use by %s (lock file %s): two servers on one SQLite store would both run its queued runs; stop that one, or choose another --database\n", dbFile, held.Holder, p)
		case err != nil:
			fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		}
		if err != nil {
			release()
			return nil, false
		}
		locks = append(locks, l)
	}
	return release, true
}

// publicURL is the server's address as a notification links to it: the
// listen address, or this machine's name when it listens on every
// interface.
func publicURL(listen string) string {
	host, port, _ := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
