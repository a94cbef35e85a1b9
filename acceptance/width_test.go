package acceptance

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// e2eWidthFixture is what TestE2ENoSidewaysScroll seeds: enough of every
// kind of thing for each page to show real content.
type e2eWidthFixture struct {
	series     []uint // 20 + 20 imported runs with a step down at series[20]
	run        uint   // a run launched on the embedded broker
	base, diff uint   // two imported CPU profiles
	report     string // a report's page, before/after the step
	batch      string // a write-path batch's page
	sweep      string // a sweep's page
	slo        string // a latency-target search's page
}

// e2eWidthPages are kbench's HTML pages, by the route server/routes.go
// registers them under, each with the addresses that show it with real
// content. The test reads the GET routes of the route table and fails
// for any that is neither here nor in e2eWidthNotPages: a new page must
// be added here (one line: its route and the URLs to visit).
var e2eWidthPages = map[string]func(f *e2eWidthFixture) []string{
	"/": func(f *e2eWidthFixture) []string {
		return []string{"/", "/?ids=" + e2eIDList(f.series)} // the second has a "regressed" badge
	},
	"/runs/new": func(*e2eWidthFixture) []string { return []string{"/runs/new"} },
	"/runs/:id": func(f *e2eWidthFixture) []string {
		return []string{fmt.Sprintf("/runs/%d", f.run), fmt.Sprintf("/runs/%d", f.series[20])}
	},
	"/import": func(*e2eWidthFixture) []string { return []string{"/import"} },
	"/compare": func(f *e2eWidthFixture) []string {
		return []string{
			// The before/after comparison /regressions links: 20 + 20 runs.
			fmt.Sprintf("/compare?runs=%s&by=change&at=%d", e2eIDList(f.series), f.series[20]),
			fmt.Sprintf("/compare?runs=%d,%d,%d", f.series[0], f.series[39], f.run),
		}
	},
	"/r/:slug":     func(f *e2eWidthFixture) []string { return []string{f.report} },
	"/history":     func(f *e2eWidthFixture) []string { return []string{fmt.Sprintf("/history?run=%d", f.series[0])} },
	"/regressions": func(*e2eWidthFixture) []string { return []string{"/regressions"} },
	"/series":      func(*e2eWidthFixture) []string { return []string{"/series"} },
	"/login":       func(*e2eWidthFixture) []string { return []string{"/login"} },
	"/writepath":   func(*e2eWidthFixture) []string { return []string{"/writepath"} },
	"/writepath/:batch": func(f *e2eWidthFixture) []string {
		return []string{f.batch}
	},
	"/sweeps":     func(*e2eWidthFixture) []string { return []string{"/sweeps"} },
	"/sweeps/:id": func(f *e2eWidthFixture) []string { return []string{f.sweep} },
	"/slos":       func(*e2eWidthFixture) []string { return []string{"/slos"} },
	"/slos/:id":   func(f *e2eWidthFixture) []string { return []string{f.slo} },
	"/profiles/:id": func(f *e2eWidthFixture) []string {
		return []string{fmt.Sprintf("/profiles/%d", f.base)}
	},
	"/compare/profiles": func(f *e2eWidthFixture) []string {
		return []string{fmt.Sprintf("/compare/profiles?base=%d&target=%d", f.base, f.diff)}
	},
}

// e2eWidthNotPages are GET routes of the route table that are not pages
// of kbench's own, and why.
var e2eWidthNotPages = map[string]string{
	"/runs/:id/live-charts": "an HTML fragment the run page's script fetches",
	"/static/*filepath":     "static files",
	"/favicon.ico":          "the icon",
	"/healthz":              "a health check",
}

// e2eWidthExtra are pages no GET route names: the error page.
var e2eWidthExtra = []string{"/no-such-page"}

// e2eWidthTables are the pages whose tables must also fit without a
// scroll bar of their own (issue 23: a regression badge pushed the runs
// list's last columns out of view; the 20 + 20 comparison's headers hid
// its verdict).
var e2eWidthTables = []string{"/?ids=", "/compare?"}

// e2ePageRoutes reads the GET routes of kbench's route table
// (server/routes.go) that are not under /api: the HTML pages and the
// files it serves.
func e2ePageRoutes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "server", "routes.go"), nil, 0)
	if err != nil {
		t.Fatalf("read the route table: %v", err)
	}
	var routes []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "GET" {
			return true
		}
		if recv, ok := sel.X.(*ast.Ident); !ok || recv.Name == "api" {
			return true // the JSON API's group
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		path, err := strconv.Unquote(lit.Value)
		if err == nil && !strings.HasPrefix(path, "/api/") {
			routes = append(routes, path)
		}
		return true
	})
	if len(routes) < 10 {
		t.Fatalf("found %d GET routes in server/routes.go (%q): the parser no longer reads the route table", len(routes), routes)
	}
	return routes
}

func e2eIDList(ids []uint) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(parts, ",")
}

// e2eSeedWidth seeds the fixture: imports (fast) for the series and the
// profiles, one small launched run, a report, and a write-path batch and
// a sweep whose runs are cancelled once queued (their pages are what is
// measured, not their figures).
func e2eSeedWidth(t *testing.T, srv *e2eServer) *e2eWidthFixture {
	t.Helper()
	f := &e2eWidthFixture{}
	f.run = srv.createRun(t, map[string]any{"workload": "producer", "label": "acks=all on the embedded broker",
		"params": map[string]any{"num-records": 20000, "record-size": 100, "throughput": 20000, "reporting-interval": 200}})
	rng := rand.New(rand.NewPCG(23, 5))
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range 40 {
		base := 115000.0
		if i >= 20 {
			base = 105000
		}
		rate := base * (1 + 0.01*(2*rng.Float64()-1))
		f.series = append(f.series, srv.e2eImportPerfTest(t, rate, t0.Add(time.Duration(i)*time.Hour), fmt.Sprintf("commit=c%02d", i), "branch=trunk"))
	}
	f.base = srv.e2eImport(t, "base", e2eBaseStacks)
	f.diff = srv.e2eImport(t, "target", e2eTargetStacks)

	var rep struct{ URL string }
	srv.api(t, http.MethodPost, "/api/reports", map[string]any{"title": "Before and after c19..c20", "by": "change", "at": f.series[20], "runs": f.series},
		http.StatusCreated, &rep)
	f.report = rep.URL

	var wp struct {
		Batch string
		Runs  []struct{ ID uint }
	}
	srv.api(t, http.MethodPost, "/api/presets/writepath", map[string]any{"requests": 300, "repetitions": 1, "sink": true}, http.StatusCreated, &wp)
	f.batch = "/writepath/" + wp.Batch
	var sw struct{ URL string }
	srv.api(t, http.MethodPost, "/api/presets/sweep", map[string]any{"rates_pct": []float64{50}, "repetitions": 1,
		"configs": []map[string]any{{"label": "trunk", "params": map[string]any{"workload": "producer", "num-records": 3000, "record-size": 100, "profile": []string{"none"}}}}},
		http.StatusCreated, &sw)
	f.sweep = sw.URL
	// A search, canceled at once: its page shows its question, its
	// canceled run and the empty chart.
	var search struct{ SLO, URL string }
	srv.api(t, http.MethodPost, "/api/presets/slo", map[string]any{"latency_ms": 10, "max_rate": 5000,
		"config": map[string]any{"label": "trunk", "params": map[string]any{"workload": "producer", "num-records": 3000, "record-size": 100, "profile": []string{"none"}}}},
		http.StatusCreated, &search)
	srv.api(t, http.MethodPost, "/api/slos/"+search.SLO+"/cancel", nil, http.StatusAccepted, nil)
	f.slo = search.URL

	// The launched run finishes; the others are cancelled.
	deadline := time.Now().Add(90 * time.Second)
	for s := srv.runStatus(t, f.run); s != "succeeded"; s = srv.runStatus(t, f.run) {
		if s != "queued" && s != "running" {
			t.Fatalf("run %d ended %s", f.run, s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s after 90 s", f.run, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, status := range []string{"queued", "running"} {
		var list struct {
			Runs []struct{ ID uint }
		}
		srv.api(t, http.MethodGet, "/api/runs?status="+status, nil, http.StatusOK, &list)
		for _, r := range list.Runs {
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/runs/%d/cancel", srv.URL, r.ID), nil)
			if resp, err := srv.http.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	return f
}

// TestE2ENoSidewaysScroll (issue 23, item 5): in a 1,280 px wide window
// no page of kbench's scrolls sideways, the runs list with a
// "regressed" badge and the 20 + 20 before/after comparison keep every
// column in view (their tables need no scroll bar of their own), and the
// comparison's baseline selector works without a URL edit (item 9).
func TestE2ENoSidewaysScroll(t *testing.T) {
	e2eSkip(t)
	routes := e2ePageRoutes(t)
	for _, r := range routes {
		if e2eWidthPages[r] == nil && e2eWidthNotPages[r] == "" {
			t.Errorf("route %s is in server/routes.go but not in e2eWidthPages: add the URLs that show it (or to e2eWidthNotPages, saying why it is no page)", r)
		}
	}
	for r := range e2eWidthPages {
		if !slices.Contains(routes, r) {
			t.Errorf("e2eWidthPages lists %s, which server/routes.go no longer registers", r)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	srv := startE2EServer(t)
	f := e2eSeedWidth(t, srv) // before the browser, whose context e2eTimeout bounds
	b := startE2EBrowser(t)
	b.do(t, "set the window to 1280 px", chromedp.EmulateViewport(1280, 900))

	// The regressions list first: the runs list badges runs from it.
	b.do(t, "open the regressions", chromedp.Navigate(srv.URL+"/regressions"))
	b.waitFor(t, "a regression listed", `document.readyState === 'complete' && !!document.querySelector('a.before-after')`)

	var urls []string
	for _, r := range routes {
		if pages := e2eWidthPages[r]; pages != nil {
			urls = append(urls, pages(f)...)
		}
	}
	urls = append(urls, e2eWidthExtra...)
	for _, u := range urls {
		b.do(t, "open "+u, chromedp.Navigate(srv.URL+u))
		b.waitFor(t, u+" loaded", `document.readyState === 'complete' && !!document.querySelector('main')`)
		if strings.HasPrefix(u, "/?ids=") {
			// Badges come from the regressions computed in the background.
			for i := 0; i < 20 && !e2eEval[bool](t, b, "look for a badge", `!!document.querySelector('.badge-regressed')`); i++ {
				time.Sleep(500 * time.Millisecond)
				b.do(t, "reload "+u, chromedp.Reload())
				b.waitFor(t, u+" reloaded", `document.readyState === 'complete' && !!document.querySelector('main')`)
			}
			if !e2eEval[bool](t, b, "look for a badge", `!!document.querySelector('.badge-regressed')`) {
				t.Errorf("%s: no regressed badge to measure the list with", u)
			}
		}
		size := e2eEval[[]int](t, b, "measure "+u, `[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth, window.innerWidth]`)
		if size[2] != 1280 {
			t.Fatalf("window %d px wide, want 1280", size[2])
		}
		if size[0] > size[1] {
			t.Errorf("%s scrolls sideways at 1,280 px: %d px wide in a %d px window", u, size[0], size[1])
			b.screenshot(t, "wide-"+strings.NewReplacer("/", "_", "?", "_", "&", "_", "=", "_", ",", "_").Replace(u)[:min(len(u), 40)])
		}
		for _, prefix := range e2eWidthTables {
			if !strings.HasPrefix(u, prefix) {
				continue
			}
			wide := e2eEval[[]string](t, b, "measure the tables of "+u, `Array.from(document.querySelectorAll('main .table-wrap')).
				filter(w => w.scrollWidth > w.clientWidth).map(w => (w.querySelector('table') || w).id + ': ' + w.scrollWidth + ' px in ' + w.clientWidth +
				' (columns: ' + Array.from(w.querySelectorAll('thead th')).map(th => th.textContent.trim().replace(/\s+/g, ' ').slice(0, 30) + ' ' + th.offsetWidth).join(', ') + ')')`)
			if len(wide) > 0 {
				t.Errorf("%s: tables wider than their box at 1,280 px (columns out of view): %q", u, wide)
			}
		}
	}

	// The 20 + 20 comparison: its headers summarise their runs, and its
	// Hodges-Lehmann column (the verdict's interval) is in view.
	b.do(t, "open the before/after comparison", chromedp.Navigate(srv.URL+e2eWidthPages["/compare"](f)[0]))
	b.waitFor(t, "the comparison", `document.readyState === 'complete' && !!document.getElementById('comparison')`)
	heads := e2eEval[[]string](t, b, "read the run summaries", `Array.from(document.querySelectorAll('#comparison thead .col-runs-list')).map(a => a.textContent)`)
	if want := []string{fmt.Sprintf("20 runs, #%d … #%d", f.series[0], f.series[19]), fmt.Sprintf("20 runs, #%d … #%d", f.series[20], f.series[39])}; !slices.Equal(heads, want) {
		t.Errorf("column run summaries %q, want %q", heads, want)
	}
	if !e2eEval[bool](t, b, "see the HL column", `(() => { const c = document.querySelector('#comparison tr[data-metric="record-send-rate"] td.hl');
		return !!c && c.textContent.includes('[') && c.getBoundingClientRect().right <= window.innerWidth; })()`) {
		t.Error("the record-send-rate row's Hodges-Lehmann interval is missing or out of view")
	}

	// The baseline selector of a comparison by run: pick the third column.
	b.do(t, "open a comparison of three runs", chromedp.Navigate(srv.URL+e2eWidthPages["/compare"](f)[1]))
	b.waitFor(t, "the comparison", `document.readyState === 'complete' && !!document.getElementById('baseline-select')`)
	third := fmt.Sprintf("%d,%d,%d", f.run, f.series[0], f.series[39])
	b.do(t, "choose the launched run as the baseline", chromedp.SetValue(chromedp.ID("baseline-select"), third), chromedp.Click(chromedp.ID("set-baseline")))
	b.waitFor(t, "the reordered comparison", fmt.Sprintf(`new URLSearchParams(location.search).get('runs') === %s && document.readyState === 'complete' && !!document.getElementById('comparison')`, e2eJS(third)))
	first := e2eEval[string](t, b, "read the baseline column", `document.querySelector('#comparison thead th.baseline .col-name').textContent`)
	if !strings.HasPrefix(first, fmt.Sprintf("#%d ", f.run)) {
		t.Errorf("baseline column %q after choosing run %d", first, f.run)
	}
	// And a column moves right with its ▶ link.
	b.do(t, "move the baseline right", chromedp.Click(chromedp.CSS(`#comparison thead th.baseline a.col-right`)))
	b.waitFor(t, "the moved column", fmt.Sprintf(`new URLSearchParams(location.search).get('runs') === %s && document.readyState === 'complete'`,
		e2eJS(fmt.Sprintf("%d,%d,%d", f.series[0], f.run, f.series[39]))))
	b.checkConsole(t, regexp.MustCompile(`404 \(Not Found\)`)) // the error page is a 404
}
