package server

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// cursorBackends runs f on a server over SQLite and over PostgreSQL
// (skipped without KBENCH_TEST_POSTGRES), as the store's tests do.
func cursorBackends(t *testing.T, f func(t *testing.T, ts *testServer)) {
	for _, b := range []string{"sqlite", "postgres"} {
		t.Run(b, func(t *testing.T) {
			dsn := ""
			if b == "postgres" {
				dsn = pgtest.URL(t)
			}
			f(t, newTestServerOn(t, dsn, nil))
		})
	}
}

// storeRuns stores n runs, labels alternating trunk and branch, and
// returns their ids newest first, as the list shows them.
func storeRuns(t *testing.T, ts *testServer, n int) []uint {
	t.Helper()
	var ids []uint
	for i := 0; i < n; i++ {
		r := &store.Run{Label: []string{"trunk", "branch"}[i%2], Workload: "producer", Status: "succeeded"}
		if err := ts.st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
			t.Fatal(err)
		}
		ids = append([]uint{r.ID}, ids...)
	}
	return ids
}

type apiRunsPage struct {
	Runs   []struct{ ID uint }
	Total  int64
	Offset int64
	Next   *string
	Prev   *string
}

func (ts *testServer) runsPage(t *testing.T, target string) apiRunsPage {
	t.Helper()
	rec := ts.do(t, "GET", target, "")
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
	}
	var p apiRunsPage
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return p
}

func (p apiRunsPage) ids() []uint {
	out := []uint{}
	for _, r := range p.Runs {
		out = append(out, r.ID)
	}
	return out
}

// TestAPIRunsCursor: following next from the first page of GET
// /api/runs returns every run exactly once, newest first, while runs are
// added between pages; prev leads back; offset still pages as before; a
// filter is kept in the links.
func TestAPIRunsCursor(t *testing.T) {
	cursorBackends(t, func(t *testing.T, ts *testServer) {
		want := storeRuns(t, ts, 23)
		var got []uint
		var pages []apiRunsPage
		target := "/api/runs?limit=5"
		for len(pages) < 10 {
			p := ts.runsPage(t, target)
			if p.Offset != int64(len(got)+len(pages)) {
				t.Errorf("page %d: offset %d, want %d (runs before it, and those added)", len(pages)+1, p.Offset, len(got)+len(pages))
			}
			pages = append(pages, p)
			got = append(got, p.ids()...)
			storeRuns(t, ts, 1) // a run added while the list is read
			if p.Next == nil {
				break
			}
			target = *p.Next
		}
		if !slices.Equal(got, want) {
			t.Errorf("walking next: got %v, want %v", got, want)
		}
		if len(pages) != 5 || pages[0].Prev != nil || pages[4].Next != nil {
			t.Errorf("got %d pages, first prev %v, last next %v; want 5, nil, nil", len(pages), pages[0].Prev, pages[4].Next)
		}
		// prev of page 3 is page 2, as it was read.
		if p := ts.runsPage(t, *pages[2].Prev); !slices.Equal(p.ids(), pages[1].ids()) {
			t.Errorf("prev of page 3: got %v, want page 2 %v", p.ids(), pages[1].ids())
		}
		// offset pages count from the newest, the added runs included.
		all := ts.runsPage(t, "/api/runs?limit=500").ids()
		if p := ts.runsPage(t, "/api/runs?limit=5&offset=5"); !slices.Equal(p.ids(), all[5:10]) || p.Offset != 5 || p.Next == nil {
			t.Errorf("offset=5: got %v (offset %d, next %v), want %v", p.ids(), p.Offset, p.Next, all[5:10])
		}
		// Filtered: the links keep the filter.
		var trunk []uint
		for target := "/api/runs?limit=4&label=trunk"; ; {
			p := ts.runsPage(t, target)
			trunk = append(trunk, p.ids()...)
			if p.Next == nil {
				break
			}
			if !strings.Contains(*p.Next, "label=trunk") {
				t.Fatalf("next %q drops the filter", *p.Next)
			}
			target = *p.Next
		}
		if f := ts.runsPage(t, "/api/runs?limit=500&label=trunk"); !slices.Equal(trunk, f.ids()) {
			t.Errorf("label=trunk by cursor: got %v, want %v", trunk, f.ids())
		}
	})
}

// TestRunsCursorBadInput: a cursor that is not a run id, two cursors,
// or a cursor with an offset or page number is a 400 naming the field,
// on the API and on the page.
func TestRunsCursorBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	storeRuns(t, ts, 3)
	for _, tc := range []struct{ target, field string }{
		{"/api/runs?before=abc", "before"},
		{"/api/runs?after=0", "after"},
		{"/api/runs?before=-4", "before"},
		{"/api/runs?before=99999999999", "before"},
		{"/api/runs?before=3&after=1", "after"},
		{"/api/runs?before=3&offset=5", "offset"},
		{"/?before=x", "before"},
		{"/?after=1.5", "after"},
		{"/?page=2&before=3", "page"},
	} {
		rec := ts.do(t, "GET", tc.target, "")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), tc.field) {
			t.Errorf("GET %s: %d %s; want 400 naming %s", tc.target, rec.Code, rec.Body, tc.field)
		}
	}
}

var pageLinkRe = regexp.MustCompile(`<a href="([^"]*)" rel="(prev|next)">`)

// TestRunsPageCursorLinks: the runs page's next and previous links are
// cursors; following next shows every run once, newest first, with the
// page number counted; previous leads back; ?page=N still works.
func TestRunsPageCursorLinks(t *testing.T) {
	cursorBackends(t, func(t *testing.T, ts *testServer) {
		want := storeRuns(t, ts, 12)
		page := func(target string) (ids []uint, links map[string]string, body string) {
			rec := ts.do(t, "GET", target, "")
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", target, rec.Code)
			}
			body = rec.Body.String()
			for _, m := range runRowRe.FindAllStringSubmatch(body, -1) {
				var id uint
				fmt.Sscan(m[1], &id)
				ids = append(ids, id)
			}
			links = map[string]string{}
			for _, m := range pageLinkRe.FindAllStringSubmatch(body, -1) {
				links[m[2]] = html.UnescapeString(m[1])
			}
			return ids, links, body
		}
		var got []uint
		var targets []string
		target := "/?per_page=5"
		for n := 1; n <= 5; n++ {
			ids, links, body := page(target)
			if !strings.Contains(body, fmt.Sprintf("page %d of 3", n)) {
				t.Errorf("GET %s does not say page %d of 3", target, n)
			}
			targets = append(targets, target)
			got = append(got, ids...)
			if links["next"] == "" {
				break
			}
			if !strings.Contains(links["next"], "before=") {
				t.Errorf("next link %q is not a cursor", links["next"])
			}
			target = links["next"]
		}
		if !slices.Equal(got, want) {
			t.Errorf("following next: got %v, want %v", got, want)
		}
		if len(targets) != 3 {
			t.Fatalf("got %d pages, want 3", len(targets))
		}
		_, links, _ := page(targets[2])
		if ids, _, _ := page(links["prev"]); !slices.Equal(ids, want[5:10]) {
			t.Errorf("previous of page 3: got %v, want %v", ids, want[5:10])
		}
		if ids, _, body := page("/?per_page=5&page=2"); !slices.Equal(ids, want[5:10]) || !strings.Contains(body, "page 2 of 3") {
			t.Errorf("?page=2: got %v, want %v on page 2 of 3", ids, want[5:10])
		}
	})
}
