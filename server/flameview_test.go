package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// rowsAnswer is what the tests read of a format=rows answer.
type rowsAnswer struct {
	Total      float64             `json:"total"`
	BaseTotal  float64             `json:"base_total"`
	WholeTotal float64             `json:"whole_total"`
	Labels     map[string][]string `json:"labels"`
	Variants   map[string][]string `json:"name_variants"`
	Rows       *struct {
		Names       []string    `json:"names"`
		Levels      [][]float64 `json:"levels"`
		Stride      int         `json:"stride"`
		Width       int         `json:"width"`
		Order       string      `json:"order"`
		Zoom        string      `json:"zoom"`
		ZoomMissing bool        `json:"zoom_missing"`
		Frames      int         `json:"frames"`
		Sent        int         `json:"sent"`
		Match       *struct {
			Total     float64 `json:"total"`
			Zoom      float64 `json:"zoom"`
			Count     int     `json:"count"`
			BaseTotal float64 `json:"base_total"`
			Names     []int   `json:"names"`
		} `json:"match"`
	} `json:"rows"`
}

// names lists the frame names of row d, "other" for a folded run.
func (a rowsAnswer) names(d int) []string {
	var out []string
	if d >= len(a.Rows.Levels) {
		return nil
	}
	lv, st := a.Rows.Levels[d], a.Rows.Stride
	for i := 0; i+st <= len(lv); i += st {
		if ni := int(lv[i+st-1]); ni >= 0 {
			out = append(out, a.Rows.Names[ni])
		} else {
			out = append(out, "other")
		}
	}
	return out
}

func getRows(t *testing.T, ts *testServer, u string) rowsAnswer {
	t.Helper()
	rec := ts.do(t, "GET", u, "")
	if rec.Code != 200 {
		t.Fatalf("%s: %d %s", u, rec.Code, rec.Body)
	}
	var a rowsAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.Rows == nil {
		t.Fatalf("%s: %v %.300s", u, err, rec.Body)
	}
	return a
}

// The row view (format=rows) sends the frames wide enough to draw at a
// width and zoom, the rest folded into runs, with a search's totals over
// every frame; bad parameters are 400s naming the parameter.
func TestFlameGraphRows(t *testing.T) {
	ts := newTestServer(t, nil)
	var b strings.Builder
	b.WriteString("main.main;main.wide 1000\n")
	for i := range 50 {
		fmt.Fprintf(&b, "main.main;main.n%02d;main.hidden 1\n", i)
	}
	id := ts.importRun(t, "narrow", b.String())
	base := fmt.Sprintf("/api/profiles/%d/flamegraph?sample=samples", id)
	get := func(query string) rowsAnswer { t.Helper(); return getRows(t, ts, base+query) }

	// 1 sample of 1050 at 100 px is 0.1 px: the 50 narrow frames are one run.
	a := get("&format=rows&width=100&search=" + url.QueryEscape("hidden"))
	r := a.Rows
	if r.Frames != 1+1+1+50*2 || r.Sent != 3 || r.Width != 100 || r.Stride != 5 || r.Order != "name" || len(r.Levels) != 3 {
		t.Fatalf("rows at 100 px: %+v", r)
	}
	if got := strings.Join(a.names(2), ","); got != "other,main.wide" || r.Levels[2][1] != 50 || r.Levels[2][3] != 50 {
		t.Errorf("the narrow siblings: %s %v, want a run of width 50 folding 50 frames, then main.wide", got, r.Levels[2])
	}
	if m := r.Match; m == nil || m.Total != 50 || m.Count != 50 || len(m.Names) != 0 || a.Total != 1050 || a.WholeTotal != 1050 {
		t.Errorf("search hidden: %+v, want 50 frames worth 50, none of them sent", m)
	}
	// The default width (the page's), a zoom into a narrow frame, left-heavy.
	if a := get("&format=rows"); a.Rows.Width != defaultPruneWidth || a.Rows.Match != nil {
		t.Errorf("default width %d, want %d", a.Rows.Width, defaultPruneWidth)
	}
	z := get("&format=rows&width=100&search=hidden&zoom=" + url.QueryEscape("main.main;main.n07"))
	if z.Rows.Zoom != "main.main;main.n07" || z.Rows.ZoomMissing || strings.Join(z.names(3), ",") != "main.hidden" || z.Rows.Match.Zoom != 1 {
		t.Errorf("zoomed: %+v, want main.n07's subtree", z.Rows)
	}
	if lh := get("&format=rows&width=100&order=left-heavy"); strings.Join(lh.names(2), ",") != "main.wide,other" || lh.Rows.Order != "left-heavy" {
		t.Errorf("left-heavy: %v", lh.names(2))
	}
	// Filters: focus keeps the stacks through a frame, only_matching those
	// a search matches; the totals say what was kept of the whole.
	if f := get("&format=rows&focus=" + url.QueryEscape(`^main\.n0[0-4]$`)); f.Total != 5 || f.WholeTotal != 1050 || len(f.Rows.Levels[2]) != 5*5 {
		t.Errorf("focus: total %v of %v, row 2 %v", f.Total, f.WholeTotal, f.names(2))
	}
	if f := get("&format=rows&only_matching=1&search=wide"); f.Total != 1000 || strings.Join(f.names(2), ",") != "main.wide" {
		t.Errorf("only matching: total %v, row 2 %v", f.Total, f.names(2))
	}
	if f := get("&format=rows&ignore=wide&hide=" + url.QueryEscape(`^main\.n`)); f.Total != 50 || strings.Join(f.names(2), ",") != "main.hidden" {
		t.Errorf("ignore+hide: total %v, row 2 %v", f.Total, f.names(2))
	}
	if f := get("&format=rows&show_from=hidden"); f.Total != 50 || strings.Join(f.names(1), ",") != "main.hidden" {
		t.Errorf("show_from: total %v, row 1 %v", f.Total, f.names(1))
	}
	// The whole tree's formats are unchanged.
	if rec := ts.do(t, "GET", base+"&format=compact", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"compact"`) {
		t.Errorf("compact: %d", rec.Code)
	}

	for _, c := range []struct{ query, field string }{
		{"&format=rows&width=0", "width"},
		{"&format=rows&width=abc", "width"},
		{"&format=rows&width=70000", "width"},
		{"&format=rows&search=" + url.QueryEscape("(?=x)"), "search"},
		{"&format=rows&focus=" + url.QueryEscape("a("), "focus"},
		{"&format=rows&ignore=" + url.QueryEscape("(?!x)"), "ignore"},
		{"&format=rows&hide=" + url.QueryEscape(`(a)\1`), "hide"},
		{"&format=rows&show_from=" + strings.Repeat("a", maxSearchLen+1), "show_from"},
		{"&format=rows&tagfocus=" + url.QueryEscape("thread=a("), "tagfocus"},
		{"&format=rows&tagignore=" + url.QueryEscape("state="), "tagignore"},
		{"&format=rows&order=heavy", "order"},
		{"&format=rows&only_matching=yes", "only_matching"},
		{"&format=pruned", "format"},
		{"&format=match&search=x", "format"},
		{"&format=svg", "format"},
	} {
		rec := ts.do(t, "GET", base+c.query, "")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"`+c.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.query, rec.Code, rec.Body, c.field)
		}
	}
}

// labelledPprof is a pprof profile whose samples carry thread and state
// labels, as JFR profiles do.
func labelledPprof(t *testing.T) []byte {
	t.Helper()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, PeriodType: &profile.ValueType{Type: "samples", Unit: "count"}, Period: 1}
	for i, name := range []string{"main", "send", "recv"} {
		f := &profile.Function{ID: uint64(i + 1), Name: name}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}})
	}
	add := func(leaf int, v int64, thread, state string) {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{p.Location[leaf], p.Location[0]}, Value: []int64{v},
			Label: map[string][]string{"thread": {thread}, "state": {state}}})
	}
	add(1, 10, "sender", "RUNNABLE")
	add(2, 20, "reader", "RUNNABLE")
	add(2, 7, "reader", "WAITING")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Label filters: the answer lists the string labels, tagfocus/tagignore
// filter on them, on the profile and the diff routes alike.
func TestFlameGraphLabelFilters(t *testing.T) {
	ts := newTestServer(t, nil)
	imp := func(label string) uint {
		rec := ts.upload(t, "/api/import", map[string][]byte{label + ".pb.gz": labelledPprof(t)}, map[string]string{"label": label, "kind": "cpu"})
		var r apiRun
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &r) != nil || len(r.Profiles) != 1 {
			t.Fatalf("import %s: %d %s", label, rec.Code, rec.Body)
		}
		return r.Profiles[0].ID
	}
	a, b := imp("a"), imp("b")
	u := fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows", a)
	all := getRows(t, ts, u)
	if fmt.Sprint(all.Labels) != "map[state:[RUNNABLE WAITING] thread:[reader sender]]" || all.Total != 37 {
		t.Errorf("labels %v, total %v", all.Labels, all.Total)
	}
	for _, c := range []struct {
		query string
		total float64
	}{
		{"&tagfocus=" + url.QueryEscape("thread=^reader$"), 27},
		{"&tagfocus=" + url.QueryEscape("thread=^reader$") + "&tagfocus=" + url.QueryEscape("state=WAIT"), 7},
		{"&tagignore=" + url.QueryEscape("state=^RUNNABLE$"), 7},
	} {
		if got := getRows(t, ts, u+c.query); got.Total != c.total || got.WholeTotal != 37 || fmt.Sprint(got.Labels) != fmt.Sprint(all.Labels) {
			t.Errorf("%s: total %v of %v, want %v of 37", c.query, got.Total, got.WholeTotal, c.total)
		}
	}
	d := getRows(t, ts, fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&normalize=none&tagfocus=%s", a, b, url.QueryEscape("thread=sender")))
	if d.Rows.Stride != 7 || d.Total != 10 || d.BaseTotal != 10 || d.WholeTotal != 37 || len(d.Labels) != 2 {
		t.Errorf("diff with tagfocus: %+v", d)
	}
}

// The diff route answers rows with the base columns; search, zoom,
// width and order are its parameters too.
func TestDiffRows(t *testing.T) {
	ts := newTestServer(t, nil)
	base := ts.importRun(t, "base", "main;a 30\nmain;gone 10\n")
	target := ts.importRun(t, "target", "main;a 45\nmain;new 5\n")
	u := fmt.Sprintf("/api/diff?base=%d&target=%d&sample=samples&normalize=none&format=rows&width=500&search=%s", base, target, url.QueryEscape("^(a|gone)$"))
	d := getRows(t, ts, u)
	if d.Rows.Stride != 7 || strings.Join(d.names(2), ",") != "a,gone,new" || d.Total != 50 || d.BaseTotal != 40 || d.Rows.Width != 500 {
		t.Fatalf("diff rows: %+v %v", d.Rows, d.names(2))
	}
	// gone: only in the base, drawn at its base width (value 0, base 10).
	if g := d.Rows.Levels[2][7:14]; g[1] != 10 || g[2] != 0 || g[4] != 10 {
		t.Errorf("gone: %v", g)
	}
	if m := d.Rows.Match; m.Total != 45 || m.BaseTotal != 40 || m.Count != 2 || len(m.Names) != 2 {
		t.Errorf("diff search: %+v", m)
	}
	z := getRows(t, ts, u+"&zoom=main%3Bnew&order=left-heavy")
	if z.Rows.Zoom != "main;new" || z.Rows.Order != "left-heavy" || strings.Join(z.names(2), ",") != "other,new,other" {
		t.Errorf("diff zoomed left-heavy: %+v %v", z.Rows, z.names(2))
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&zoom=x&width=-1", base, target), "")
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"width"`) {
		t.Errorf("bad width: %d %s", rec.Code, rec.Body)
	}
}

// The profile page carries its first view inline, inert, in rows, for
// the script to draw without a request.
func TestProfilePageInlinesFirstView(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&zoom=main.main&search=%s&order=left-heavy", id, url.QueryEscape("</script>|Write")), "")
	if rec.Code != 200 {
		t.Fatalf("%d", rec.Code)
	}
	page := rec.Body.String()
	start := strings.Index(page, `<script type="application/json" id="flamegraph-data">`)
	if start < 0 {
		t.Fatal("no inline first view")
	}
	body := page[start+len(`<script type="application/json" id="flamegraph-data">`):]
	body = body[:strings.Index(body, "</script>")]
	var a rowsAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.Rows == nil {
		t.Fatalf("inline view: %v: %.200s", err, body)
	}
	if a.Rows.Zoom != "main.main" || a.Rows.Width != defaultPruneWidth || a.Rows.Match.Total != 30 || a.Rows.Order != "left-heavy" {
		t.Errorf("inline view: %+v", a.Rows)
	}
	if !strings.Contains(page, `data-src="/api/profiles/`+fmt.Sprint(id)+`/flamegraph?format=rows&amp;order=left-heavy&amp;sample=samples"`) {
		t.Error("the graph's data-src is not the rows API with the page's order")
	}
	// A filter the server cannot read: no inline view, so that the page
	// asks and shows the 400 naming it.
	rec = ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&ignore=%s", id, url.QueryEscape("a(")), "")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), `id="flamegraph-data"`) || !strings.Contains(rec.Body.String(), "ignore=a%28") {
		t.Errorf("bad filter: %d, want the page without an inline view, the filter in data-src", rec.Code)
	}
}

// Legacy zoom links: a focus= that is a zoom path of the page's graph
// (and base_focus, target_focus, focus-N, jfocus) redirects 301 to the
// zoom name with every other parameter kept; a focus= that is no zoom
// path is pprof's focus regexp and filters.
func TestLegacyFocusRedirects(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)
	other := ts.importRun(t, "single", foldedSingle)
	for _, c := range []struct{ from, to string }{
		{fmt.Sprintf("/profiles/%d?sample=samples&focus=main.main&search=Write", id), fmt.Sprintf("/profiles/%d?sample=samples&search=Write&zoom=main.main", id)},
		{fmt.Sprintf("/profiles/%d?focus=%s", id, url.QueryEscape("main.main;net.(*conn).Write")), fmt.Sprintf("/profiles/%d?zoom=%s", id, url.QueryEscape("main.main;net.(*conn).Write"))},
		{fmt.Sprintf("/compare/profiles?base=%d&target=%d&base_focus=main.main&target_focus=x", id, other),
			fmt.Sprintf("/compare/profiles?base=%d&base_zoom=main.main&target=%d&target_zoom=x", id, other)},
		{fmt.Sprintf("/compare/profiles?base=%d&target=%d&focus=main.main", id, other), fmt.Sprintf("/compare/profiles?base=%d&target=%d&zoom=main.main", id, other)},
		{"/r/some-report?focus-1=main.main&search-1=x", "/r/some-report?search-1=x&zoom-1=main.main"},
		{"/writepath/b1?jfocus=a&focus=b", "/writepath/b1?jzoom=a&zoom=b"},
		{fmt.Sprintf("/runs/%d?focus=main.main", id), fmt.Sprintf("/runs/%d?zoom=main.main", id)},
	} {
		rec := ts.do(t, "GET", c.from, "")
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != c.to {
			t.Errorf("%s: %d to %q, want 301 to %q", c.from, rec.Code, rec.Header().Get("Location"), c.to)
		}
	}
	// Not a zoom path: pprof's focus, which the page passes to its graph.
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&focus=%s", id, url.QueryEscape("Write$")), "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "focus=Write%24") || !strings.Contains(rec.Body.String(), `id="fg-focus" name="focus" value="Write$"`) {
		t.Errorf("focus regexp page: %d", rec.Code)
	}
	// The comparison passes its filters and order to its three graphs.
	rec = ts.do(t, "GET", fmt.Sprintf("/compare/profiles?base=%d&target=%d&focus=Write&order=left-heavy", id, other), "")
	if n := strings.Count(rec.Body.String(), "focus=Write&amp;format=rows&amp;"); rec.Code != 200 || n != 3 || strings.Count(rec.Body.String(), "order=left-heavy") != 3 || !strings.Contains(rec.Body.String(), `value="left-heavy" checked`) {
		t.Errorf("compare page with filters: %d, %d graphs filtered", rec.Code, n)
	}
	// With zoom= present, focus= is never a zoom.
	if rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?zoom=main.main&focus=main.main", id), ""); rec.Code != 200 {
		t.Errorf("zoom and focus: %d", rec.Code)
	}
}

// TestFlameGraphSearchOnServer: every flame graph's search runs on the
// server (the pages never run an expression from a link): format=rows of
// a profile and of a diff answer the frame names a search matches, with
// Go's RE2, so the expression that freezes a JavaScript regexp
// (^(.+)+#$, exponential backtracking) is answered like any other. An
// expression RE2 cannot read, or a longer one than maxSearchLen, is a 400
// naming search.
func TestFlameGraphSearchOnServer(t *testing.T) {
	ts := newTestServer(t, nil)
	long := "github.com/segmentio/kafka-go/protocol.(*encoder).writeCompactArray"
	base := ts.importRun(t, "base", "main.main;"+long+";main.handler# 5\nmain.main;"+long+" 3\n")
	target := ts.importRun(t, "target", "main.main;main.other;main.tail# 2\nmain.main;"+long+" 3\n")
	routes := map[string]string{
		"profile": fmt.Sprintf("/api/profiles/%d/flamegraph?sample=samples&format=rows", base),
		"diff":    fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows", base, target),
	}
	want := map[string][]string{"profile": {"main.handler#"}, "diff": {"main.handler#", "main.tail#"}}
	for route, u := range routes {
		a := getRows(t, ts, u+"&search="+url.QueryEscape(`^(.+)+#$`))
		var names []string
		for _, i := range a.Rows.Match.Names {
			names = append(names, a.Rows.Names[i])
		}
		if strings.Join(names, "|") != strings.Join(want[route], "|") {
			t.Errorf("%s: ^(.+)+#$ matched %q, want %q", route, names, want[route])
		}
		for _, c := range []struct{ name, search string }{
			{"look-ahead", `main\.d(?=39)`},
			{"back-reference", `(a)\1`},
			{"unbalanced", `a(`},
			{"too long", strings.Repeat("a", maxSearchLen+1)},
			{"huge repeat", `(x{1000}){1000}`},
		} {
			rec := ts.do(t, "GET", u+"&search="+url.QueryEscape(c.search), "")
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"search"`) {
				t.Errorf("%s, %s: %d %.300s, want 400 naming search", route, c.name, rec.Code, rec.Body)
			}
		}
		if a := getRows(t, ts, u); a.Rows.Match != nil {
			t.Errorf("%s without search: a match %+v", route, a.Rows.Match)
		}
	}
	// An expression of exactly maxSearchLen bytes is a search.
	if rec := ts.do(t, "GET", routes["profile"]+"&search="+strings.Repeat("a", maxSearchLen), ""); rec.Code != 200 {
		t.Errorf("a %d-byte search: %d %s", maxSearchLen, rec.Code, rec.Body)
	}
	// The profile page inlines the frames its search matches, so the page
	// highlights them without running the expression or asking again.
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&search=%s", base, url.QueryEscape(`^(.+)+#$`)), "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"names":["root","main.main","github.com/segmentio/kafka-go/protocol.(*encoder).writeCompactArray","main.handler#"]`) ||
		!strings.Contains(rec.Body.String(), `"count":1,"names":[3]`) {
		t.Errorf("profile page: %d, the inline view lacks the matched names", rec.Code)
	}
}

// TestPprofPivotLinks: pprof's flame graph runs its p= parameter (pivots)
// as a JavaScript regular expression; a link whose p could backtrack for
// minutes (^(.+)+#$) is a 400 naming p, while the pivots pprof's own links
// hold (anchored, quoted frame names joined by |) open as before.
func TestPprofPivotLinks(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)
	other := ts.importRun(t, "single", foldedSingle)
	for _, c := range []struct {
		p    string
		code int
	}{
		{`^main\.main$`, 200},
		{`^net\.\(\*conn\)\.Write$|^main\.main$`, 200},
		{`^(.+)+#$`, 400},
		{`(a|a)*b`, 400},
		{`.*.*.*.*.*x`, 400},
		{`x(?=y)`, 400},
		{strings.Repeat("a", maxSearchLen+1), 400},
	} {
		for _, base := range []string{fmt.Sprintf("/profiles/%d/pprof/flamegraph", id), fmt.Sprintf("/diff/%d/%d/pprof/flamegraph", id, other)} {
			rec := ts.do(t, "GET", base+"?p="+url.QueryEscape(c.p), "")
			if rec.Code != c.code {
				t.Errorf("%s?p=%s: %d, want %d", base, c.p, rec.Code, c.code)
			}
			if c.code == 400 && !strings.Contains(rec.Body.String(), "p: ") {
				t.Errorf("%s?p=%s: the refusal does not name p: %.300s", base, c.p, rec.Body)
			}
		}
	}
}

// A profile whose JVM lambda is named with two addresses (two class
// loads) draws it as one frame, and the answer lists the names merged, for
// the tooltip; on both routes.
func TestRowsNameVariants(t *testing.T) {
	ts := newTestServer(t, nil)
	a, b := "Foo$$Lambda$7+0x00007fb8c4a1b2c8.495053715.run", "Foo$$Lambda$7+0x00007f38aa001000.12.run"
	id := ts.importRun(t, "lambdas", "main;"+a+" 5\nmain;"+b+" 3\nmain;0x4a1b2c 2\n")
	for _, u := range []string{
		fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows", id),
		fmt.Sprintf("/api/diff?base=%d&target=%d&format=rows&normalize=none", id, id),
	} {
		got := getRows(t, ts, u)
		if v := got.Variants["Foo$$Lambda$7.run"]; len(v) != 2 || v[0] != b || v[1] != a || len(got.Variants) != 1 {
			t.Errorf("%s: name_variants %v, want both raw names of Foo$$Lambda$7.run only", u, got.Variants)
		}
		n := 0
		for _, name := range got.Rows.Names {
			if strings.Contains(name, "Lambda") {
				n++
				if name != "Foo$$Lambda$7.run" {
					t.Errorf("%s: frame %q", u, name)
				}
			}
			if name == "0x4a1b2c" {
				n += 10
			}
		}
		if n != 11 {
			t.Errorf("%s: names %q, want the lambda once and the address-only frame as it was", u, got.Rows.Names)
		}
	}
}
