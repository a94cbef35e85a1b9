package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/dirlock"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/server"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// envOr returns the KBENCH_* variable for a flag, or def (kbench import's
// --server and --token, plain strings no value of which is wrong).
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(envName(name)); ok {
		return v
	}
	return def
}

// cmdServe starts the web application. Every flag can also be set with its
// KBENCH_* variable (see fromEnv); flags win.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kbench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: kbench serve [flags]\n\n"+
			"Every flag can also be set with an environment variable: KBENCH_ and the flag's name in capitals,\n"+
			"- as _ (KBENCH_RUN_TIMEOUT). Flags win; a repeatable flag's variable takes a comma-separated list\n"+
			"that the flags add to. An empty variable counts as unset.\n\n")
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "127.0.0.1:8080", "host:port to serve on")
	data := fs.String("data", "./kbench-data", "directory for the SQLite database and run files")
	database := fs.String("database", "", "the database: a postgres:// (or postgresql://) URL for PostgreSQL, or an SQLite file (default: kbench.db in --data)")
	localWorker := fs.Bool("local-worker", true, "execute runs of queue local here; false serves only, and runs wait in their queues for kbench worker processes (PostgreSQL --database)")
	token := fs.String("token", "", "token required for changes (and, with --private, for reading); needed off loopback")
	private := fs.Bool("private", false, "require the token for reading too")
	retain := fs.String("retain", "0", "delete finished runs older than this many `days` that no report uses, with their files (at start, then hourly); 0 keeps them forever")
	notifyURL := fs.String("notify-url", "", "POST each new regression there as JSON, with a Slack-compatible text (a webhook URL)")
	maxPerRequest := fs.Int("max-runs-per-request", server.DefaultMaxRunsPerRequest, "most runs one request may queue (repetitions, A/B, presets, a sweep's both phases); more is a 400")
	maxQueued := fs.Int("max-queued-runs", server.DefaultMaxQueuedRuns, "most runs waiting in the queues; a request that would queue more is a 429")
	ex := addExecFlags(fs, "host:port pattern a run may target besides the embedded broker (repeatable; * matches within one DNS label, never a dot; port * for any)")
	allowClientFiles := fs.Bool("allow-client-files", false, "without --token, accept requests whose Kafka properties name files (ssl.*.location): files on the machine that runs the client, read by the run, never by the server; refused without (name a cluster with --cluster instead)")
	var allowHosts listFlag
	fs.Var(&allowHosts, "allow-host", "host name (no port) a loopback server without --token also answers to, besides localhost and loopback addresses (repeatable)")
	var trustedProxies listFlag
	fs.Var(&trustedProxies, "trusted-proxy", "address or CIDR of a reverse proxy whose X-Forwarded-Proto (https: Secure cookies) and X-Forwarded-For (the client wrong tokens are counted by) are believed (repeatable)")
	sessionMaxAge := fs.Duration("session-max-age", server.DefaultSessionMaxAge, "how long a browser login lasts (the server refuses older sessions)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kbench serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	checks := ex.envChecks()
	checks["allow-host"] = func(h []string) error { return server.Config{AllowHosts: h}.Validate() }
	checks["trusted-proxy"] = func(p []string) error { return server.Config{TrustedProxies: p}.Validate() }
	from, errs := fromEnv(fs, os.LookupEnv, checks)
	for _, err := range errs {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
	}
	if len(errs) > 0 {
		return 2
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		fmt.Fprintf(stderr, "kbench serve: %s %s: must be host:port (e.g. 127.0.0.1:8080): %v\n", from["listen"], *listen, err)
		return 2
	}
	if !server.IsLoopbackAddr(*listen) && *token == "" {
		fmt.Fprintf(stderr, "kbench serve: %s %s is reachable from other machines; set --token (or KBENCH_TOKEN) to protect it\n", from["listen"], *listen)
		return 2
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
			fmt.Fprintf(stderr, "kbench serve: %s: must be at least 1, got %d\n", from[f.name], f.v)
			return 2
		}
	}
	retainFor, err := parseRetain(*retain)
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: %s: %v\n", from["retain"], err)
		return 2
	}
	if *notifyURL != "" {
		if err := (server.Config{NotifyURL: *notifyURL}).Validate(); err != nil {
			fmt.Fprintf(stderr, "kbench serve: %s: want an http:// or https:// URL\n", from["notify-url"])
			return 2
		}
	}
	if *sessionMaxAge <= 0 {
		fmt.Fprintf(stderr, "kbench serve: %s: must be positive (such as 720h), got %v\n", from["session-max-age"], *sessionMaxAge)
		return 2
	}
	if !*localWorker && !store.IsPostgresURL(*database) {
		fmt.Fprintf(stderr, "kbench serve: %s=false: no worker could take the runs of an SQLite store (kbench worker needs a shared PostgreSQL --database)\n", from["local-worker"])
		return 2
	}
	cfg := server.Config{DataDir: *data, Concurrency: *ex.concurrency, NoLocalWorker: !*localWorker, Token: *token, Private: *private,
		Loopback: server.IsLoopbackAddr(*listen), AllowHosts: allowHosts, AllowTargets: ex.allow, RunTimeout: *ex.runTimeout, Retain: retainFor, Clusters: named, Tools: ex.toolSet,
		MaxRunsPerRequest: *maxPerRequest, MaxQueuedRuns: *maxQueued, AllowClientFiles: *allowClientFiles, AllowToolClassProps: *ex.classProps,
		TrustedProxies: trustedProxies, SessionMaxAge: *sessionMaxAge}
	if *notifyURL != "" {
		cfg.NotifyURL, cfg.PublicURL = *notifyURL, publicURL(*listen)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 2
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
	srv, stop, err := startServer(ctx, cfg, st)
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 1
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
// store.
func startServer(ctx context.Context, cfg server.Config, st *store.Store) (srv *server.Server, stop func(), err error) {
	recheck, err := server.StoredTargetsAllowed(cfg.AllowTargets, runner.Validate)
	if err != nil {
		return nil, nil, err
	}
	command := cfg.KbenchCommand
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("find the kbench binary: %w", err)
		}
		command = []string{exe}
	}
	runs := lifecycle.NewManager(st, lifecycle.Options{Command: command, DataDir: cfg.DataDir, Concurrency: cfg.Concurrency,
		RunTimeout: cfg.RunTimeout, Recheck: recheck, NoWorker: cfg.NoLocalWorker, Clusters: cfg.Clusters, Tools: cfg.Tools,
		AllowToolClassProps: cfg.AllowToolClassProps, Logger: cfg.Logger})
	srv, err = server.New(cfg, server.Deps{Store: st, Runs: runs, Validate: runner.Validate, ImportMetrics: runner.ImportMetrics})
	if err != nil {
		return nil, nil, err
	}
	if err := runs.Start(ctx); err != nil {
		return nil, nil, err
	}
	stopPruning := runs.StartPruning(ctx, cfg.Retain)
	if err := srv.Start(ctx); err != nil {
		stopPruning()
		runs.Close()
		return nil, nil, err
	}
	return srv, func() {
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

// envName is the variable that sets a serve flag: KBENCH_ and the flag's
// name in capitals with - as _ (--run-timeout: KBENCH_RUN_TIMEOUT).
func envName(flagName string) string {
	return "KBENCH_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fromEnv gives each flag of fs that the command line did not set the value
// of its variable (envName), read with lookup, through the flag's own Set:
// a variable takes exactly what its flag takes. An empty variable counts
// as unset. A repeatable flag (listFlag) takes a comma-separated list from
// its variable, and the command line's values are added after it; check,
// where it has an entry for the flag, vets the variable's items.
//
// It returns where each flag's value came from, "--flag" or the variable,
// for the messages of later checks, and one error per bad variable, each
// naming it.
func fromEnv(fs *flag.FlagSet, lookup func(string) (string, bool), check map[string]func([]string) error) (map[string]string, []error) {
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	from := map[string]string{}
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		from[f.Name] = "--" + f.Name
		name := envName(f.Name)
		v, ok := lookup(name)
		if !ok || v == "" {
			return
		}
		if list, ok := f.Value.(*listFlag); ok {
			items := splitList(v)
			if c := check[f.Name]; c != nil {
				if err := c(items); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", name, err))
					return
				}
			}
			*list = append(items, *list...)
			if !onCommandLine[f.Name] {
				from[f.Name] = name
			}
			return
		}
		if onCommandLine[f.Name] {
			return // the flag wins; its variable is not read
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not %s (it sets --%s)", name, v, valueKind(f.Value), f.Name))
			return
		}
		from[f.Name] = name
	})
	return from, errs
}

// valueKind says what a flag's value must be, for messages.
func valueKind(v flag.Value) string {
	if g, ok := v.(flag.Getter); ok {
		switch g.Get().(type) {
		case bool:
			return "true or false"
		case int:
			return "a whole number"
		case time.Duration:
			return "a duration such as 90m or 2h"
		}
	}
	return "a value it takes"
}

// splitList splits a comma-separated KBENCH_* list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maxRetainDays bounds --retain: a century is "forever" for benchmark runs,
// and the bound keeps DAYS×24h far from time.Duration's limit.
const maxRetainDays = 36500

// parseRetain reads --retain: a whole number of days, 0 (keep forever) up
// to maxRetainDays; empty is 0.
func parseRetain(v string) (time.Duration, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil // KBENCH_RETAIN set but empty: as if absent
	}
	days, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || days < 0 || days > maxRetainDays {
		return 0, fmt.Errorf("%q is not a number of days from 0 (keep runs forever) to %d", v, maxRetainDays)
	}
	return time.Duration(days) * 24 * time.Hour, nil
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
