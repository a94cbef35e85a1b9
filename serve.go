package main

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

	"github.com/kbench/kbench/server"
	"github.com/kbench/kbench/store"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// envOr returns the KBENCH_* variable for a flag, or def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv("KBENCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

// cmdServe starts the web application. Every flag can also be set with a
// KBENCH_<FLAG> environment variable (flags win).
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kbench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", envOr("listen", "127.0.0.1:8080"), "host:port to serve on")
	data := fs.String("data", envOr("data", "./kbench-data"), "directory for the SQLite database and run files")
	concurrency := fs.Int("concurrency", atoiOr(envOr("concurrency", "1"), 1), "runs executed at once (more than one makes runs share CPU)")
	token := fs.String("token", envOr("token", ""), "token required for changes (and, with --private, for reading); needed off loopback")
	private := fs.Bool("private", envOr("private", "") == "true", "require the token for reading too")
	runTimeout := fs.Duration("run-timeout", 2*time.Hour, "longest a run may take")
	retain := fs.String("retain", envOr("retain", "0"), "delete finished runs older than this many `days` that no report uses, with their files (at start, then hourly); 0 keeps them forever")
	allow := listFlag(splitList(envOr("allow-target", "")))
	fs.Var(&allow, "allow-target", "host:port pattern a run may target besides the embedded broker (repeatable; * matches within one DNS label, never a dot; port * for any)")
	allowHosts := listFlag(splitList(envOr("allow-host", "")))
	fs.Var(&allowHosts, "allow-host", "host name (no port) a loopback server without --token also answers to, besides localhost and loopback addresses (repeatable)")
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
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		fmt.Fprintf(stderr, "kbench serve: --listen %s: must be host:port (e.g. 127.0.0.1:8080): %v\n", *listen, err)
		return 2
	}
	if !server.IsLoopbackAddr(*listen) && *token == "" {
		fmt.Fprintf(stderr, "kbench serve: --listen %s is reachable from other machines; set --token (or KBENCH_TOKEN) to protect it\n", *listen)
		return 2
	}
	if *concurrency < 1 {
		fmt.Fprintln(stderr, "kbench serve: --concurrency: must be at least 1")
		return 2
	}
	retainFor, err := parseRetain(*retain)
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: --retain (or KBENCH_RETAIN): %v\n", err)
		return 2
	}
	cfg := server.Config{DataDir: *data, Concurrency: *concurrency, Token: *token, Private: *private,
		Loopback: server.IsLoopbackAddr(*listen), AllowHosts: allowHosts, AllowTargets: allow, RunTimeout: *runTimeout, Retain: retainFor}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 2
	}
	return serveWith(ctx, serveSettings{Listen: *listen, Config: cfg}, stdout, stderr)
}

// serveSettings is what `kbench serve` runs with once its flags and
// KBENCH_* variables are read and checked.
type serveSettings struct {
	Listen string
	Config server.Config // DataDir is --data; no Logger yet
}

// serveWith is serve; tests of the flags and variables replace it to see
// what they resolved to without serving.
var serveWith = serve

// serve opens the data directory and serves until ctx ends.
func serve(ctx context.Context, set serveSettings, stdout, stderr io.Writer) int {
	cfg := set.Config
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	st, err := store.Open(filepath.Join(cfg.DataDir, "kbench.db"))
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		if errors.Is(err, store.ErrForeignDatabase) || errors.Is(err, store.ErrNewerSchema) {
			fmt.Fprintln(stderr, "kbench serve: nothing was changed in the file; move it away or choose another --data directory")
		}
		return 1
	}
	defer st.Close()
	srv, err := server.New(cfg, st)
	if err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 1
	}
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", set.Listen)
	if err != nil {
		srv.Close()
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
		return 1
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "kbench serving on http://%s (data in %s)\n", ln.Addr(), cfg.DataDir)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintf(stderr, "kbench serve: %v\n", err)
	}
	// Stop runs first (they are stored as interrupted), then the listener.
	srv.Close()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(shutCtx)
	return 0
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

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
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
