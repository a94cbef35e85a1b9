package server

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
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
