package server

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

var runRowRe = regexp.MustCompile(`<tr data-run-id="(\d+)" data-status="([a-z]+)"`)

// TestRunsListByIDs: the runs list narrowed to some runs (?ids=, as the
// list's refresh asks) shows exactly those rows, as the full list renders
// them, and keeps the narrowing in the filter form.
func TestRunsListByIDs(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedCompare(t, ts)
	rows := func(target string) (ids []string, body string) {
		rec := ts.do(t, "GET", target, "")
		if rec.Code != 200 {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
		for _, m := range runRowRe.FindAllStringSubmatch(rec.Body.String(), -1) {
			ids = append(ids, m[1])
		}
		return ids, rec.Body.String()
	}
	all, full := rows("/")
	if len(all) != 3 {
		t.Fatalf("the full list shows runs %v, want 3", all)
	}
	some, narrowed := rows(fmt.Sprintf("/?ids=%d,%d&per_page=2", ids[2], ids[0]))
	want := []string{fmt.Sprint(ids[2]), fmt.Sprint(ids[0])} // newest first, as the full list
	if !slices.Equal(some, want) {
		t.Errorf("?ids=%d,%d shows runs %v, want %v", ids[2], ids[0], some, want)
	}
	if !regexp.MustCompile(`<input type="hidden" name="ids" value="` + fmt.Sprintf("%d,%d", ids[2], ids[0]) + `">`).MatchString(narrowed) {
		t.Error("the filter form drops the ids narrowing")
	}
	// A row reads the same in both lists.
	row := regexp.MustCompile(`(?s)<tr data-run-id="` + fmt.Sprint(ids[0]) + `".*?</tr>`)
	if a, b := row.FindString(full), row.FindString(narrowed); a == "" || a != b {
		t.Errorf("run %d's row differs:\nfull list %s\nby ids    %s", ids[0], a, b)
	}
}

// TestRunsListWorkloadFilter: the workload filter offers every workload a
// stored run may have (rundoc.AllWorkloads, e2e among them), and choosing
// one lists only that workload's runs.
func TestRunsListWorkloadFilter(t *testing.T) {
	ts := newTestServer(t, nil)
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	byWorkload := map[rundoc.Workload]uint{}
	for _, w := range rundoc.AllWorkloads() {
		r := &store.Run{Label: "w-" + string(w), Workload: w, Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: &finished}
		if err := ts.st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
			t.Fatal(err)
		}
		byWorkload[w] = r.ID
	}
	rec := ts.do(t, "GET", "/", "")
	if rec.Code != 200 {
		t.Fatalf("GET / = %d", rec.Code)
	}
	sel := regexp.MustCompile(`(?s)<select id="filter-workload" name="workload">(.*?)</select>`).FindStringSubmatch(rec.Body.String())
	if sel == nil {
		t.Fatal("the runs list has no workload filter")
	}
	var offered []string
	for _, m := range regexp.MustCompile(`<option value="([^"]*)"`).FindAllStringSubmatch(sel[1], -1) {
		if m[1] != "" {
			offered = append(offered, m[1])
		}
	}
	var want []string
	for _, w := range rundoc.AllWorkloads() {
		want = append(want, string(w))
	}
	if !slices.Equal(offered, want) {
		t.Errorf("workload filter offers %v, want every workload %v", offered, want)
	}
	for _, w := range rundoc.AllWorkloads() {
		rec := ts.do(t, "GET", "/?workload="+string(w), "")
		if rec.Code != 200 {
			t.Fatalf("GET /?workload=%s = %d", w, rec.Code)
		}
		var ids []string
		for _, m := range runRowRe.FindAllStringSubmatch(rec.Body.String(), -1) {
			ids = append(ids, m[1])
		}
		if !slices.Equal(ids, []string{fmt.Sprint(byWorkload[w])}) {
			t.Errorf("?workload=%s lists runs %v, want only run %d", w, ids, byWorkload[w])
		}
		if !strings.Contains(rec.Body.String(), `<option value="`+string(w)+`" selected>`) {
			t.Errorf("?workload=%s: the filter does not show %s chosen", w, w)
		}
	}
}
