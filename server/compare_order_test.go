package server

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	baselineOption = regexp.MustCompile(`<option value="([0-9,]+)"( selected)?>([^<]*)</option>`)
	colNames       = regexp.MustCompile(`<span class="col-name">([^<]*)</span>`)
	colLink        = func(class string) *regexp.Regexp {
		return regexp.MustCompile(`<a class="` + regexp.QuoteMeta(class) + `" href="([^"]+)"`)
	}
)

// TestCompareBaselineSelector (issue 23, item 9): the comparison page
// offers a baseline selector (a plain GET form, no script needed) and
// links that move a column left or right or make it the baseline; each
// only rewrites the order of the runs parameter, and the page it leads
// to has that column first, as the baseline.
func TestCompareBaselineSelector(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedCompare(t, ts) // trunk, branch, other
	a, b, c := ids[0], ids[1], ids[2]
	page := func(target string) string {
		t.Helper()
		rec := ts.do(t, "GET", target, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	body := page(fmt.Sprintf("/compare?runs=%d,%d,%d", a, b, c))

	i := strings.Index(body, `<form class="baseline-form"`)
	if i < 0 {
		t.Fatal("the comparison page has no baseline selector")
	}
	form := body[i:]
	form = form[:strings.Index(form, "</form>")]
	if !strings.Contains(form, `method="get" action="/compare"`) || !strings.Contains(form, `<select id="baseline-select" name="runs">`) ||
		!strings.Contains(form, `id="set-baseline"`) {
		t.Fatalf("baseline form:\n%s", form)
	}
	var got []string
	for _, m := range baselineOption.FindAllStringSubmatch(form, -1) {
		got = append(got, m[1]+m[2]+" "+html.UnescapeString(m[3]))
	}
	want := []string{
		fmt.Sprintf("%d,%d,%d selected #%d trunk", a, b, c, a),
		fmt.Sprintf("%d,%d,%d #%d branch", b, a, c, b),
		fmt.Sprintf("%d,%d,%d #%d other", c, a, b, c),
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("baseline options %q, want %q", got, want)
	}

	links := func(class string) []string {
		var out []string
		for _, m := range colLink(class).FindAllStringSubmatch(body, -1) {
			u, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u.Query().Get("runs"))
		}
		return out
	}
	for _, tt := range []struct {
		class string
		want  []string
	}{
		{"col-make-baseline", []string{fmt.Sprintf("%d,%d,%d", b, a, c), fmt.Sprintf("%d,%d,%d", c, a, b)}},
		{"col-move col-left", []string{fmt.Sprintf("%d,%d,%d", b, a, c), fmt.Sprintf("%d,%d,%d", a, c, b)}},
		{"col-move col-right", []string{fmt.Sprintf("%d,%d,%d", b, a, c), fmt.Sprintf("%d,%d,%d", a, c, b)}},
	} {
		if got := links(tt.class); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s links: runs %q, want %q", tt.class, got, tt.want)
		}
	}

	// Follow "make baseline" of the third column: it comes first, as the
	// baseline, in the page and in the API.
	m := colLink("col-make-baseline").FindAllStringSubmatch(body, -1)
	next := page(html.UnescapeString(m[1][1]))
	names := colNames.FindAllStringSubmatch(next, -1)
	if len(names) != 3 || names[0][1] != fmt.Sprintf("#%d other", c) ||
		!strings.Contains(next, fmt.Sprintf(`<span class="col-name">#%d other</span> <span class="tag">baseline</span>`, c)) {
		t.Errorf("after make baseline: columns %q", names)
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/api/compare?runs=%d,%d,%d", c, a, b), "")
	var doc struct {
		Columns []struct {
			Name     string
			Baseline bool
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || len(doc.Columns) != 3 || !doc.Columns[0].Baseline ||
		doc.Columns[0].Name != fmt.Sprintf("#%d other", c) {
		t.Errorf("API columns %+v (%v)", doc.Columns, err)
	}

	// The form keeps the other settings: by and hide_unchanged.
	body = page(fmt.Sprintf("/compare?runs=%d,%d&by=label&hide_unchanged=1", a, b))
	for _, w := range []string{`<input type="hidden" name="by" value="label">`, `<input type="hidden" name="hide_unchanged" value="1">`,
		fmt.Sprintf(`<option value="%d,%d">branch</option>`, b, a)} {
		if !strings.Contains(body, w) {
			t.Errorf("by label, hide unchanged: page lacks %q", w)
		}
	}

	// Before/after a change point splits at a fixed run: no reordering.
	body = page(fmt.Sprintf("/compare?runs=%d,%d,%d&by=change&at=%d", a, b, c, b))
	if strings.Contains(body, `id="baseline-select"`) || strings.Contains(body, `class="col-move`) {
		t.Error("a comparison by change offers to reorder its columns")
	}
}
