package profiles

import (
	"container/list"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
)

// UI serves pprof's own web interface (flame graph, top, peek, source,
// disassembly, graph, download) for stored profiles, inside kbench's HTTP
// server: no port is opened and no browser is started.
//
// It runs github.com/google/pprof/driver.PProf in web mode and, instead of
// letting it listen, keeps the handler map the driver passes to
// Options.HTTPServer. Building that map parses and copies the whole profile,
// so UI caches one handler set per key (see Handler) and bounds the cache.
//
// # Mounting
//
// The handler returned by Handler serves the driver's paths ("/",
// "/flamegraph", "/top", "/peek", "/source", "/disasm", "/graph",
// "/download", "/saveconfig", "/deleteconfig") relative to where the caller
// mounts it. The caller strips its own prefix:
//
//	h, err := ui.Handler("profile/12", load)
//	http.StripPrefix("/profiles/12/pprof", h).ServeHTTP(w, r)
//
// Every link and redirect in pprof's pages is relative ("./top",
// "flamegraph", "?f=…"), so the UI must be reached through a URL ending in
// "/": route both "/profiles/12/pprof" and "/profiles/12/pprof/*" to it and
// redirect the former to the latter. (As a safety net, a request whose path
// is empty after stripping, i.e. the bare mount point, is answered with that
// redirect.) "/" itself redirects to "flamegraph"; the graph view is
// "/graph" and answers 501 unless Graphviz's dot is on PATH.
//
// Pages carry their JavaScript and CSS inline (there are no asset URLs), so
// a Content-Security-Policy of script-src 'self' blocks them: these routes
// need 'unsafe-inline' for scripts and styles. "/saveconfig" (POST) and
// "/deleteconfig" (DELETE) write named view settings to one file shared by
// every profile (pprof/settings.json under the user config directory).
//
// "/source" and "/disasm" read the files a profile names (source paths,
// mapped binaries) from the server's file system, exactly like
// `go tool pprof -http`: useful for profiles of runs made on this host, but
// a crafted imported profile can name any readable file. Callers serving
// untrusted profiles should not route those two paths.
//
// # Configuration directory
//
// The driver needs a user configuration directory ($XDG_CONFIG_HOME or
// $HOME on Unix) for its settings file and refuses to build a UI without
// one. When the process has neither, NewUI creates a private temporary
// directory once per process and sets XDG_CONFIG_HOME to it (the directory
// outlives the UI; saved settings then last until it is cleaned up).
type UI struct {
	capacity int
	logf     func(format string, args ...any)

	mu       sync.Mutex               // guards the fields below
	entries  map[string]*list.Element // key → element of lru holding *pprofUIEntry
	lru      *list.List               // most recently used at the front
	inflight map[string]*pprofUIBuild // keys being built right now
}

// pprofUIEntry is one cached handler set.
type pprofUIEntry struct {
	key string
	h   http.Handler
}

// pprofUIBuild is a build in progress; requests for the same key wait on
// done and share its outcome (successful or not).
type pprofUIBuild struct {
	done chan struct{}
	h    http.Handler
	err  error
}

// pprofDriverMu serializes every call of driver.PProf in the process, across
// all UI values. The driver keeps its state in package globals (the current
// report configuration, which flag parsing overwrites, the "interactive
// mode" switch, the list of temporary files it deletes when it returns), so
// two concurrent calls would race on them. Building is rare (the result is
// cached) and takes milliseconds to a second, so one lock costs little.
// Serving requests from handler sets already built does not take this lock:
// the driver's web handlers only read those globals, under the driver's own
// lock.
var pprofDriverMu sync.Mutex

// pprofConfigDir makes sure the driver finds a user configuration directory;
// see UI. It runs once per process because it changes the environment.
var pprofConfigDir = sync.OnceValue(func() error {
	if _, err := os.UserConfigDir(); err == nil {
		return nil
	}
	dir, err := os.MkdirTemp("", "kbench-pprof-config-")
	if err != nil {
		return fmt.Errorf("profiles: pprof needs $HOME or $XDG_CONFIG_HOME: %w", err)
	}
	if err := os.Setenv("XDG_CONFIG_HOME", dir); err != nil {
		return fmt.Errorf("profiles: pprof needs $HOME or $XDG_CONFIG_HOME: %w", err)
	}
	return nil
})

// NewUI returns an empty cache of pprof web UIs holding at most capacity
// handler sets (16 when capacity ≤ 0), evicting the least recently used one
// beyond that. The bound exists because each set keeps its profile twice in
// memory (decoded, and encoded for the fresh copy every request gets), which
// for a large CPU profile is tens of megabytes, while users tend to look at
// a few recent profiles and diffs at a time: LRU keeps those warm.
//
// logf receives the driver's error messages (build warnings, and request
// errors such as an invalid focus regexp, which are also shown on the page);
// nil discards them. The driver's informational output is dropped.
func NewUI(capacity int, logf func(format string, args ...any)) *UI {
	if capacity <= 0 {
		capacity = 16
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := pprofConfigDir(); err != nil {
		logf("%v", err)
	}
	return &UI{
		capacity: capacity,
		logf:     logf,
		entries:  make(map[string]*list.Element),
		lru:      list.New(),
		inflight: make(map[string]*pprofUIBuild),
	}
}

// Handler returns the pprof web UI for the profile identified by key (for
// example "profile/12" or "diff/3/4/work"), building it on first use from
// the profile load returns. Keys must identify immutable content: a cached
// set is served until it is evicted.
//
// Concurrent first requests for one key build it once; the others wait and
// share the result. load runs outside the driver's process-wide lock (so a
// slow database read does not hold up other builds) and the UI takes
// ownership of the profile it returns: the driver modifies it (it removes
// uninteresting frames, may add a mapping) and keeps it. Errors from load
// are returned wrapped (errors.Is works) and are not cached: the next call
// tries again.
//
// Diffs must arrive already built as one profile (base samples labelled
// pprof::base and negated, merged with the target). The driver's own report
// flags (-diff_base, -base, -normalize, -focus …) are deliberately never
// passed: the driver stores flag values in its global configuration, where
// they would silently apply to every UI built afterwards.
//
// The returned handler stays valid after eviction (it holds its own data);
// call Handler on every request rather than keeping it, so that recency is
// tracked and evicted sets can be freed.
func (u *UI) Handler(key string, load func() (*profile.Profile, error)) (http.Handler, error) {
	u.mu.Lock()
	if el, ok := u.entries[key]; ok {
		u.lru.MoveToFront(el)
		h := el.Value.(*pprofUIEntry).h
		u.mu.Unlock()
		return h, nil
	}
	if b, ok := u.inflight[key]; ok {
		u.mu.Unlock()
		<-b.done
		return b.h, b.err
	}
	b := &pprofUIBuild{done: make(chan struct{})}
	u.inflight[key] = b
	u.mu.Unlock()

	defer close(b.done) // after the cache is updated, below
	b.h, b.err = u.build(key, load)

	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.inflight, key)
	if b.err != nil {
		return nil, b.err
	}
	u.entries[key] = u.lru.PushFront(&pprofUIEntry{key: key, h: b.h})
	for u.lru.Len() > u.capacity {
		old := u.lru.Remove(u.lru.Back()).(*pprofUIEntry)
		delete(u.entries, old.key)
	}
	return b.h, nil
}

// Len returns the number of cached handler sets.
func (u *UI) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lru.Len()
}

// pprofUISource is the profile "source" named on the driver's command line.
// The fetcher ignores it and pages do not show it; it only must not look
// like a flag.
const pprofUISource = "kbench-stored-profile"

// build loads the profile and runs the driver once to obtain its handlers.
// A panic in the driver (for instance on a malformed imported profile)
// becomes an error so that waiting requests are released.
func (u *UI) build(key string, load func() (*profile.Profile, error)) (h http.Handler, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("profiles: pprof ui %s: driver panic: %v", key, r)
		}
	}()
	p, err := load()
	if err != nil {
		return nil, fmt.Errorf("profiles: pprof ui %s: load: %w", key, err)
	}
	if p == nil {
		// The driver would fall back to opening the source name as a file.
		return nil, fmt.Errorf("profiles: pprof ui %s: load returned no profile", key)
	}
	if err := pprofConfigDir(); err != nil {
		return nil, err
	}

	flags := &pprofUIFlags{
		fs: flag.NewFlagSet("pprof", flag.ContinueOnError),
		// Only source options: see Handler for why no report flags.
		// -http with an explicit port makes the driver skip its
		// port-probing listen; -no_browser keeps it from starting one;
		// -symbolize=none keeps it from running addr2line/nm or
		// contacting the URL a profile came from.
		args: []string{"-http=localhost:0", "-no_browser", "-symbolize=none", pprofUISource},
	}
	flags.fs.SetOutput(io.Discard)
	flags.fs.Usage = func() {}
	var handlers map[string]http.Handler

	pprofDriverMu.Lock()
	defer pprofDriverMu.Unlock()
	err = driver.PProf(&driver.Options{
		Flagset: flags,
		Fetch:   pprofUIFetcher{p: p},
		UI:      &pprofQuietUI{key: key, logf: u.logf},
		HTTPServer: func(a *driver.HTTPServerArgs) error {
			handlers = a.Handlers
			return nil
		},
	})
	if flags.err != nil {
		return nil, fmt.Errorf("profiles: pprof ui %s: flags: %w", key, flags.err)
	}
	if err != nil {
		return nil, fmt.Errorf("profiles: pprof ui %s: %w", key, err)
	}
	if len(handlers) == 0 {
		return nil, fmt.Errorf("profiles: pprof ui %s: driver returned no handlers", key)
	}
	return pprofUIHandlers(handlers), nil
}

// pprofUIHandlers dispatches on the path left after the caller's
// http.StripPrefix, the way the driver's own server does.
type pprofUIHandlers map[string]http.Handler

func (hs pprofUIHandlers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "" {
		// The bare mount point ("/profiles/12/pprof"): relative links
		// would resolve one level too high. Redirect to the same path
		// with a trailing slash, relative to the original request.
		orig, err := url.ParseRequestURI(r.RequestURI)
		base := ""
		if err == nil {
			base = path.Base(orig.Path)
		}
		if base == "" || base == "/" || base == "." {
			http.NotFound(w, r)
			return
		}
		loc := &url.URL{Path: base + "/", RawQuery: r.URL.RawQuery}
		w.Header().Set("Location", loc.String())
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	h, ok := hs[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// pprofUIFetcher hands the driver the profile already loaded.
type pprofUIFetcher struct{ p *profile.Profile }

// Fetch returns the profile with an empty source URL, which tells the driver
// the profile is local: it neither records mapping sources for remote
// symbolization nor saves a copy under $HOME/pprof.
func (f pprofUIFetcher) Fetch(string, time.Duration, time.Duration) (*profile.Profile, string, error) {
	return f.p, "", nil
}

// pprofUIFlags implements driver.FlagSet on a private flag.FlagSet, so that
// the driver's flags never touch the process's command line (the driver's
// default uses the global flag package and os.Args).
type pprofUIFlags struct {
	fs    *flag.FlagSet
	args  []string
	extra []string
	err   error // parse error, reported by build
}

func (f *pprofUIFlags) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, def, usage)
}

func (f *pprofUIFlags) Int(name string, def int, usage string) *int {
	return f.fs.Int(name, def, usage)
}

func (f *pprofUIFlags) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}

func (f *pprofUIFlags) String(name, def, usage string) *string {
	return f.fs.String(name, def, usage)
}

func (f *pprofUIFlags) StringList(name, def, usage string) *[]*string {
	v := &pprofUIStringList{}
	if def != "" {
		v.list = []*string{&def}
	}
	f.fs.Var(v, name, usage)
	return &v.list
}

func (f *pprofUIFlags) ExtraUsage() string { return strings.Join(f.extra, "\n") }

func (f *pprofUIFlags) AddExtraUsage(eu string) { f.extra = append(f.extra, eu) }

// Parse follows the driver.FlagSet contract: on an error or without
// arguments it calls usage and returns nil.
func (f *pprofUIFlags) Parse(usage func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		f.err = err
		usage()
		return nil
	}
	if f.fs.NArg() == 0 {
		f.err = errors.New("no profile source")
		usage()
		return nil
	}
	return f.fs.Args()
}

// pprofUIStringList is a repeatable string flag; the first value given
// replaces the default.
type pprofUIStringList struct {
	list []*string
	set  bool
}

func (l *pprofUIStringList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(l.list))
	for i, p := range l.list {
		s[i] = *p
	}
	return strings.Join(s, ",")
}

func (l *pprofUIStringList) Set(v string) error {
	if !l.set {
		l.list, l.set = nil, true
	}
	l.list = append(l.list, &v)
	return nil
}

// pprofQuietUI is the driver's user interface: no terminal, no browser, no
// interactive shell; errors go to logf, informational messages (such as
// "Serving web UI on …", which names a port nobody listens on) are dropped.
type pprofQuietUI struct {
	key  string
	logf func(format string, args ...any)
}

func (*pprofQuietUI) ReadLine(string) (string, error) { return "", io.EOF }

func (*pprofQuietUI) Print(...any) {}

func (ui *pprofQuietUI) PrintErr(args ...any) {
	ui.logf("pprof ui %s: %s", ui.key, strings.TrimSuffix(fmt.Sprint(args...), "\n"))
}

func (*pprofQuietUI) IsTerminal() bool { return false }

func (*pprofQuietUI) WantBrowser() bool { return false }

func (*pprofQuietUI) SetAutoComplete(func(string) string) {}
