package server

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
)

// viewsFolded: main.enc called from two sites, a recursive main.rec.
const viewsFoldedRun = `main;send;enc;memmove 30
main;send;enc 10
main;flush;enc;memmove 20
main;flush 5
main;rec;rec;enc 7
main;rec 3
gc 25
`

// The derived views: view=inverted, view=callers/callees with
// function=, view=top with sort= and limit=, on both routes, from the
// whole filtered graph; bad values are 400s naming the parameter.
func TestFlameGraphViews(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "views", viewsFoldedRun)
	u := fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows&sample=samples", id)

	inv := getRows(t, ts, u+"&view=inverted")
	if got := strings.Join(inv.names(1), ","); got != "enc,flush,gc,memmove,rec" || inv.Rows.Levels[0][2] != 100 {
		t.Errorf("inverted: row 1 %s, root %v", got, inv.Rows.Levels[0])
	}
	if got := strings.Join(getRows(t, ts, u+"&view=inverted&zoom=memmove").names(2), ","); got != "enc" {
		t.Errorf("inverted, zoomed into memmove: callers %s", got)
	}

	var callers struct {
		rowsAnswer
		Function *client.TopFunction `json:"function"`
		Rows     struct {
			View string `json:"view"`
		} `json:"rows"`
	}
	rec := ts.do(t, "GET", u+"&view=callers&function=enc", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &callers.rowsAnswer); err != nil || rec.Code != 200 {
		t.Fatalf("callers: %d %s", rec.Code, rec.Body)
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &callers)
	if f := callers.Function; f == nil || f.Name != "enc" || f.Total != 67 || f.Self != 17 || callers.Rows.View != "callers" {
		t.Errorf("callers' function %+v, view %q", callers.Function, callers.Rows.View)
	}
	if root := callers.rowsAnswer.names(0); len(root) != 1 || root[0] != "enc" || callers.rowsAnswer.Rows.Levels[0][2] != 67 {
		t.Errorf("callers' root %v %v", root, callers.rowsAnswer.Rows.Levels[0])
	}
	if got := strings.Join(callers.rowsAnswer.names(1), ","); got != "flush,rec,send" {
		t.Errorf("callers of enc: %s", got)
	}
	if got := strings.Join(getRows(t, ts, u+"&view=callees&function=enc").names(1), ","); got != "memmove" {
		t.Errorf("callees of enc: %s", got)
	}
	// Filters apply first: without the flush stacks, enc has 47.
	var filtered client.FlameGraph
	ts.getJSON(t, u+"&view=callees&function=enc&ignore=flush", &filtered)
	if filtered.Function == nil || filtered.Function.Total != 47 {
		t.Errorf("callees with ignore=flush: %+v", filtered.Function)
	}

	var top client.FlameGraph
	ts.getJSON(t, u+"&view=top&sort=total&limit=3", &top)
	if top.Rows != nil || top.Top == nil || top.Top.Sort != "total" || top.Top.Count != 7 || top.Top.Limit != 3 {
		t.Fatalf("top: %+v", top.Top)
	}
	var got []string
	for _, f := range top.Top.Functions {
		got = append(got, fmt.Sprintf("%s %g %g", f.Name, f.Self, f.Total))
	}
	if strings.Join(got, "; ") != "main 0 75; enc 17 67; memmove 50 50" {
		t.Errorf("top by total: %s", strings.Join(got, "; "))
	}
	ts.getJSON(t, u+"&view=top", &top)
	if top.Top.Sort != "self" || top.Top.Functions[0].Name != "memmove" || len(top.Top.Functions) != 7 {
		t.Errorf("top by self (default): %+v", top.Top)
	}

	for _, c := range []struct{ query, field string }{
		{"&view=sideways", "view"},
		{"&view=callers", "function"},
		{"&view=callees&function=absent", "function"},
		{"&view=top&sort=delta_self", "sort"},
		{"&view=top&sort=cum", "sort"},
		{"&view=top&limit=0", "limit"},
	} {
		rec := ts.do(t, "GET", u+c.query, "")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"`+c.field+`"`) {
			t.Errorf("%s: %d %s, want a 400 naming %s", c.query, rec.Code, rec.Body, c.field)
		}
	}
}

// A diff's top table has the base columns and sorts by the change; its
// inverted view keeps them.
func TestDiffViews(t *testing.T) {
	ts := newTestServer(t, nil)
	base := ts.importRun(t, "base", "main;a 30\nmain;gone 10\n")
	target := ts.importRun(t, "target", "main;a 45\nmain;new 5\n")
	u := fmt.Sprintf("/api/diff?base=%d&target=%d&sample=samples&normalize=none&format=rows", base, target)
	var d client.Diff
	ts.getJSON(t, u+"&view=top&sort=delta_self", &d)
	if d.Top == nil || d.Top.Sort != "delta_self" {
		t.Fatalf("diff top: %+v", d.Top)
	}
	var got []string
	for _, f := range d.Top.Functions {
		got = append(got, fmt.Sprintf("%s %g/%g %g/%g", f.Name, f.Self, f.BaseSelf, f.Total, f.BaseTotal))
	}
	if strings.Join(got, "; ") != "a 45/30 45/30; gone 0/10 0/10; new 5/0 5/0; main 0/0 50/40" {
		t.Errorf("diff top by |Δ self|: %s", strings.Join(got, "; "))
	}
	inv := getRows(t, ts, u+"&view=inverted")
	if inv.Rows.Stride != 7 || strings.Join(inv.names(1), ",") != "a,gone,new" || strings.Join(inv.names(2), ",") != "main,main,main" {
		t.Errorf("inverted diff: %v / %v", inv.names(1), inv.names(2))
	}
	var sw client.Diff
	ts.getJSON(t, u+"&view=callers&function=gone", &sw)
	if sw.Function == nil || sw.Function.BaseTotal != 10 || sw.Function.Total != 0 || sw.Rows == nil || sw.Rows.View != "callers" {
		t.Errorf("diff callers of gone: %+v", sw.Function)
	}
}

// The profile page inlines its inverted first view when view=inverted,
// and never a view its graph does not draw (the top table, a sandwich
// half: the page's scripts ask for those).
func TestProfilePageViews(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "views", viewsFoldedRun)
	inline := func(query string) rowsAnswer {
		t.Helper()
		rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples%s", id, query), "")
		page := rec.Body.String()
		const open = `<script type="application/json" id="flamegraph-data">`
		start := strings.Index(page, open)
		if rec.Code != 200 || start < 0 {
			t.Fatalf("%s: %d, inline view %v", query, rec.Code, start >= 0)
		}
		if !strings.Contains(page, `data-views="sort"`) || !strings.Contains(page, "flameviews.js") {
			t.Errorf("%s: the graph has no views", query)
		}
		body := page[start+len(open):]
		var a rowsAnswer
		if err := json.Unmarshal([]byte(body[:strings.Index(body, "</script>")]), &a); err != nil || a.Rows == nil {
			t.Fatalf("%s: inline view: %v", query, err)
		}
		return a
	}
	if got := strings.Join(inline("&view=inverted").names(1), ","); got != "enc,flush,gc,memmove,rec" {
		t.Errorf("view=inverted: row 1 %s", got)
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&view=inverted", id), "")
	if !strings.Contains(rec.Body.String(), fmt.Sprintf(`data-src="/api/profiles/%d/flamegraph?format=rows&amp;sample=samples&amp;view=inverted"`, id)) {
		t.Error("view=inverted: the graph's data-src draws no inverted view")
	}
	rec = ts.do(t, "GET", fmt.Sprintf("/profiles/%d?sample=samples&view=top", id), "")
	if strings.Contains(rec.Body.String(), "view=top") {
		t.Error("view=top reached the graph's data-src")
	}
	for _, q := range []string{"&view=top&sort=total", "&view=callers", "&sort=delta_self&limit=x", "&sandwich=enc"} {
		if got := strings.Join(inline(q).names(1), ","); got != "gc,main" {
			t.Errorf("%s: row 1 %s, want the flame graph's", q, got)
		}
	}
}

// pageGraphQuery keeps only what the page's own graph draws.
func TestPageGraphQuery(t *testing.T) {
	q := url.Values{"view": {"top"}, "sort": {"total"}, "limit": {"3"}, "function": {"f"}, "zoom": {"a"}, "focus": {"x"}}
	if got := pageGraphQuery(q).Encode(); got != "focus=x&zoom=a" {
		t.Errorf("pageGraphQuery = %s", got)
	}
	q.Set("view", "inverted")
	if got := pageGraphQuery(q).Encode(); got != "focus=x&view=inverted&zoom=a" {
		t.Errorf("pageGraphQuery = %s", got)
	}
}

// getJSON decodes a 200 answer of u into v.
func (ts *testServer) getJSON(t *testing.T, u string, v any) {
	t.Helper()
	rec := ts.do(t, "GET", u, "")
	if rec.Code != 200 {
		t.Fatalf("%s: %d %s", u, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}
