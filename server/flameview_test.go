package server

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The pruned view (format=pruned) sends the frames wide enough to draw at
// a width and zoom, with the rest as runs; format=match searches every
// frame; bad parameters are 400s naming the parameter.
func TestFlameGraphPrunedAndMatch(t *testing.T) {
	ts := newTestServer(t, nil)
	var b strings.Builder
	b.WriteString("main.main;main.wide 1000\n")
	for i := range 50 {
		fmt.Fprintf(&b, "main.main;main.n%02d;main.hidden 1\n", i)
	}
	id := ts.importRun(t, "narrow", b.String())
	base := fmt.Sprintf("/api/profiles/%d/flamegraph?sample=samples", id)

	type answer struct {
		Total  int64 `json:"total"`
		Pruned *struct {
			Names        []string `json:"names"`
			Nodes        []int64  `json:"nodes"`
			Width        int      `json:"width"`
			Focus        string   `json:"focus"`
			FocusMissing bool     `json:"focus_missing"`
			Frames       int      `json:"frames"`
			Sent         int      `json:"sent"`
		} `json:"pruned"`
		Match *struct {
			Total int64 `json:"total"`
			Zoom  int64 `json:"zoom"`
			Count int   `json:"count"`
		} `json:"match"`
	}
	get := func(query string) answer {
		t.Helper()
		rec := ts.do(t, "GET", base+query, "")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", query, rec.Code, rec.Body)
		}
		var a answer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}

	// 1 sample of 1050 at 100 px is 0.1 px: the 50 narrow frames are one run.
	a := get("&format=pruned&width=100&search=" + url.QueryEscape("hidden"))
	p := a.Pruned
	if p == nil || p.Frames != 1+1+1+50*2 || p.Sent != 3 || p.Width != 100 || len(p.Nodes) != 4*4 {
		t.Fatalf("pruned at 100 px: %+v", p)
	}
	if p.Nodes[8] != -1 || p.Nodes[9] != 50 || p.Nodes[10] != 50 {
		t.Errorf("the narrow siblings: %v, want a run (-1) of value 50 holding 50 frames", p.Nodes[8:12])
	}
	if a.Match == nil || a.Match.Total != 50 || a.Match.Count != 50 {
		t.Errorf("search hidden: %+v, want 50 frames worth 50, none of them sent", a.Match)
	}
	// The default width (the page's) and a zoom into a narrow frame.
	if a := get("&format=pruned"); a.Pruned.Width != defaultPruneWidth {
		t.Errorf("default width %d, want %d", a.Pruned.Width, defaultPruneWidth)
	}
	z := get("&format=pruned&width=100&focus=" + url.QueryEscape("main.main;main.n07"))
	if z.Pruned.Focus != "main.main;main.n07" || z.Pruned.FocusMissing || !strings.Contains(strings.Join(z.Pruned.Names, ","), "main.hidden") {
		t.Errorf("zoomed: %+v, want main.n07's subtree", z.Pruned)
	}
	if m := get("&format=match&search=hidden&focus=" + url.QueryEscape("main.main;main.n07")); m.Pruned != nil || m.Match == nil || m.Match.Zoom != 1 || m.Total != 1050 {
		t.Errorf("match: %+v", m)
	}
	// The whole tree's formats are unchanged.
	if rec := ts.do(t, "GET", base+"&format=compact", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"compact"`) {
		t.Errorf("compact: %d", rec.Code)
	}

	for _, c := range []struct{ query, field string }{
		{"&format=pruned&width=0", "width"},
		{"&format=pruned&width=abc", "width"},
		{"&format=pruned&width=70000", "width"},
		{"&format=pruned&search=" + url.QueryEscape("(?=x)"), "search"},
		{"&format=match", "search"},
		{"&format=match&search=" + url.QueryEscape("a("), "search"},
		{"&format=svg", "format"},
	} {
		rec := ts.do(t, "GET", base+c.query, "")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"`+c.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.query, rec.Code, rec.Body, c.field)
		}
	}
}

// The profile page carries its first view inline, inert, for the script
// to draw without a request.
func TestProfilePageInlinesFirstView(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "gather", foldedGather)
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&focus=main.main&search=%s", id, url.QueryEscape("</script>|Write")), "")
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
	var a struct {
		Pruned struct {
			Focus string `json:"focus"`
			Width int    `json:"width"`
		} `json:"pruned"`
		Match struct {
			Total int64 `json:"total"`
		} `json:"match"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("inline view: %v: %.200s", err, body)
	}
	if a.Pruned.Focus != "main.main" || a.Pruned.Width != defaultPruneWidth || a.Match.Total != 30 {
		t.Errorf("inline view: %+v", a)
	}
	if !strings.Contains(page, `data-view-src="/api/profiles/`) {
		t.Error("no data-view-src")
	}
}

// TestFlameGraphSearchOnServer: every flame graph's search runs on the
// server (the pages never run an expression from a link): format=match of
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
		"profile": fmt.Sprintf("/api/profiles/%d/flamegraph?sample=samples&format=match", base),
		"diff":    fmt.Sprintf("/api/diff?base=%d&target=%d&format=match", base, target),
	}
	want := map[string][]string{"profile": {"main.handler#"}, "diff": {"main.handler#", "main.tail#"}}
	for route, u := range routes {
		rec := ts.do(t, "GET", u+"&search="+url.QueryEscape(`^(.+)+#$`), "")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", route, rec.Code, rec.Body)
		}
		var a struct {
			Names []string `json:"matched_names"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if strings.Join(a.Names, "|") != strings.Join(want[route], "|") {
			t.Errorf("%s: ^(.+)+#$ matched %q, want %q", route, a.Names, want[route])
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
		if rec := ts.do(t, "GET", u, ""); rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"search"`) {
			t.Errorf("%s without search: %d %s", route, rec.Code, rec.Body)
		}
	}
	// An expression of exactly maxSearchLen bytes is a search.
	if rec := ts.do(t, "GET", routes["profile"]+"&search="+strings.Repeat("a", maxSearchLen), ""); rec.Code != 200 {
		t.Errorf("a %d-byte search: %d %s", maxSearchLen, rec.Code, rec.Body)
	}
	// The profile page inlines the names its search matches, so the page
	// highlights them without running the expression or asking again.
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&search=%s", base, url.QueryEscape(`^(.+)+#$`)), "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"matched_names":["main.handler#"]`) {
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
