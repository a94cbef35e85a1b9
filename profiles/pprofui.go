package profiles

import (
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
	"sync/atomic"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
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
// "/source" and "/disasm" are not served (404): pprof's would read the
// files a profile names (source paths, mapped binaries) from the server's
// file system, and a profile, uploaded or not, can name any readable file.
// The driver is also given an object tool and a symbolizer that open
// nothing (pprofNoFiles), so no other view reads a file either. Callers
// answer those two paths with a page of their own (the commands to run
// pprof where the program's source and binary are).
//
// # Configuration directory
//
// The driver needs a user configuration directory ($XDG_CONFIG_HOME or
// $HOME on Unix) for its settings file and refuses to build a UI without
// one. When the process has neither, NewUI creates a private temporary
// directory once per process and sets XDG_CONFIG_HOME to it (the directory
// outlives the UI; saved settings then last until it is cleaned up).
type UI struct {
	logf func(format string, args ...any)

	cache *lru.Cache[string, pprofUIEntry] // built handler sets, least recently used evicted
	// builds makes concurrent first requests for one key build it once:
	// the others wait and share its outcome, successful or not.
	builds singleflight.Group
	// bytes is the estimated memory of the cached sets (pprofUICost),
	// kept at most maxBytes by evicting the least recently used.
	bytes    atomic.Int64
	maxBytes int64
}

// pprofUIEntry is one cached handler set and its estimated memory.
type pprofUIEntry struct {
	h    http.Handler
	cost int64
}

// UIMaxBytes bounds the estimated memory of a UI's cached handler sets
// (see pprofUICost): about ten sets of a 20,000-sample CPU profile (1 MB
// gzipped), hundreds of small ones.
const UIMaxBytes = 256 << 20

// pprofUICost estimates the memory a handler set holds for profile p: the
// driver keeps the profile decoded and encoded (for the fresh copy each
// request gets). Measured live heap per set was 8.0× the uncompressed
// encoding for a 20,430-sample CPU profile (19.6 MB), 9.0× for a folded
// Java profile and 9.5× for a synthetic 20,000-stack one, plus ~32 KB for
// tiny profiles: 10× plus 64 KiB is a little above all of them.
func pprofUICost(p *profile.Profile) int64 {
	var n countingWriter
	if err := p.WriteUncompressed(&n); err != nil {
		return 64 << 10
	}
	return 10*n.n + 64<<10
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) {
	w.n += int64(len(b))
	return len(b), nil
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
// handler sets (16 when capacity ≤ 0) and at most UIMaxBytes of them by
// estimate, evicting the least recently used beyond either bound (a
// single set above the byte bound is still kept until the next one
// arrives). The bounds exist because each set keeps its profile twice in
// memory (decoded, and encoded for the fresh copy every request gets),
// which for a large CPU profile is tens of megabytes, while users tend to
// look at a few recent profiles and diffs at a time: LRU keeps those warm.
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
	u := &UI{logf: logf, maxBytes: UIMaxBytes}
	cache, err := lru.NewWithEvict(capacity, func(_ string, e pprofUIEntry) { u.bytes.Add(-e.cost) })
	if err != nil {
		panic(fmt.Sprintf("profiles: pprof ui cache of %d: %v", capacity, err)) // capacity ≥ 1 here
	}
	u.cache = cache
	return u
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
	if e, ok := u.cache.Get(key); ok {
		return e.h, nil
	}
	v, err, _ := u.builds.Do(key, func() (any, error) {
		// Built and cached between the miss above and this flight?
		if e, ok := u.cache.Get(key); ok {
			return e.h, nil
		}
		e, err := u.build(key, load)
		if err != nil {
			return nil, err // not cached: the next request tries again
		}
		if present, _ := u.cache.ContainsOrAdd(key, e); !present {
			u.bytes.Add(e.cost)
			for u.bytes.Load() > u.maxBytes && u.cache.Len() > 1 {
				u.cache.RemoveOldest()
			}
		}
		return e.h, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(http.Handler), nil
}

// Len returns the number of cached handler sets.
func (u *UI) Len() int { return u.cache.Len() }

// Bytes returns the estimated memory of the cached handler sets.
func (u *UI) Bytes() int64 { return u.bytes.Load() }

// pprofUISource is the profile "source" named on the driver's command line.
// The fetcher ignores it and pages do not show it; it only must not look
// like a flag.
const pprofUISource = "kbench-stored-profile"

// build loads the profile, estimates what its handler set will hold
// (pprofUICost) and runs the driver once to obtain its handlers.
// A panic in the driver (for instance on a malformed imported profile)
// becomes an error so that waiting requests are released.
func (u *UI) build(key string, load func() (*profile.Profile, error)) (e pprofUIEntry, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = pprofUIEntry{}, fmt.Errorf("profiles: pprof ui %s: driver panic: %v", key, r)
		}
	}()
	p, err := load()
	if err != nil {
		return pprofUIEntry{}, fmt.Errorf("profiles: pprof ui %s: load: %w", key, err)
	}
	if p == nil {
		// The driver would fall back to opening the source name as a file.
		return pprofUIEntry{}, fmt.Errorf("profiles: pprof ui %s: load returned no profile", key)
	}
	if err := pprofConfigDir(); err != nil {
		return pprofUIEntry{}, err
	}
	// Before the driver, which changes the profile.
	cost := pprofUICost(p)

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
		Obj:     pprofNoFiles{},
		Sym:     pprofNoFiles{},
		HTTPServer: func(a *driver.HTTPServerArgs) error {
			handlers = a.Handlers
			return nil
		},
	})
	if flags.err != nil {
		return pprofUIEntry{}, fmt.Errorf("profiles: pprof ui %s: flags: %w", key, flags.err)
	}
	if err != nil {
		return pprofUIEntry{}, fmt.Errorf("profiles: pprof ui %s: %w", key, err)
	}
	if len(handlers) == 0 {
		return pprofUIEntry{}, fmt.Errorf("profiles: pprof ui %s: driver returned no handlers", key)
	}
	for _, reads := range PprofFileViews {
		delete(handlers, reads)
	}
	return pprofUIEntry{h: pprofUIHandlers(handlers), cost: cost}, nil
}

// PprofFileViews are the paths of pprof's web UI that would read the
// files a profile names: UI does not serve them.
var PprofFileViews = []string{"/source", "/disasm"}

// errNoFiles is pprofNoFiles' answer.
var errNoFiles = errors.New("profiles: the server opens no file a profile names")

// pprofNoFiles is the driver's object tool and symbolizer: it opens no
// binary and symbolizes nothing, whatever a profile's mappings name.
type pprofNoFiles struct{}

func (pprofNoFiles) Open(string, uint64, uint64, uint64, string) (driver.ObjFile, error) {
	return nil, errNoFiles
}

func (pprofNoFiles) Disasm(string, uint64, uint64, bool) ([]driver.Inst, error) {
	return nil, errNoFiles
}

func (pprofNoFiles) Symbolize(string, driver.MappingSources, *profile.Profile) error { return nil }

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
