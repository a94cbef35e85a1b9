package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/storetest"
)

// TestDeleteRunForm: the run page of a finished run has a Delete form; its
// POST needs the CSRF token, deletes the run and its files like DELETE
// /api/runs/{id}, and is refused (409) for a run a report uses (the page
// names the report instead of offering the button) or one not finished.
func TestDeleteRunForm(t *testing.T) {
	ts := newTestServer(t, nil)
	ctx := context.Background()
	now := time.Now().UTC()
	free := storetest.FinishedRun(t, ts.st, ts.dir, "free", now)
	used := storetest.FinishedRun(t, ts.st, ts.dir, "used", now)
	rep := &rundoc.Report{Title: "the <weekly> report", RunIDs: []uint{used.ID}, By: "run"}
	if err := ts.st.CreateReport(ctx, rep); err != nil {
		t.Fatal(err)
	}
	queued := &store.Run{Label: "waiting"}
	if err := ts.st.CreateRuns(ctx, []*store.Run{queued}); err != nil {
		t.Fatal(err)
	}
	deleteURL := func(id uint) string { return fmt.Sprintf("/runs/%d/delete", id) }

	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", free.ID), "").Body.String()
	if !strings.Contains(page, `action="`+deleteURL(free.ID)+`"`) {
		t.Errorf("the run page has no delete form posting to %s", deleteURL(free.ID))
	}
	page = ts.do(t, "GET", fmt.Sprintf("/runs/%d", used.ID), "").Body.String()
	if strings.Contains(page, `action="`+deleteURL(used.ID)+`"`) || !strings.Contains(page, `href="/r/`+rep.Slug+`"`) ||
		!strings.Contains(page, "the &lt;weekly&gt; report") {
		t.Errorf("the page of a run a report uses offers to delete it or does not link the report")
	}
	page = ts.do(t, "GET", fmt.Sprintf("/runs/%d", queued.ID), "").Body.String()
	if strings.Contains(page, `action="`+deleteURL(queued.ID)+`"`) {
		t.Errorf("the page of a queued run offers to delete it")
	}

	// Without the CSRF token: refused, nothing deleted.
	if rec := ts.do(t, "POST", deleteURL(free.ID), "", "Content-Type", "application/x-www-form-urlencoded"); rec.Code != http.StatusForbidden {
		t.Errorf("POST without CSRF token = %d, want 403", rec.Code)
	}
	if rec := ts.formPost(t, deleteURL(used.ID), url.Values{}); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), rep.Slug) {
		t.Errorf("delete of a report's run = %d, want 409 naming the report:\n%s", rec.Code, rec.Body)
	}
	if rec := ts.formPost(t, deleteURL(queued.ID), url.Values{}); rec.Code != http.StatusConflict {
		t.Errorf("delete of a queued run = %d, want 409", rec.Code)
	}
	if rec := ts.formPost(t, deleteURL(999999), url.Values{}); rec.Code != http.StatusNotFound {
		t.Errorf("delete of an unknown run = %d, want 404", rec.Code)
	}
	for _, id := range []uint{free.ID, used.ID, queued.ID} {
		if rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), ""); rec.Code != http.StatusOK {
			t.Fatalf("run %d is gone before its delete was accepted", id)
		}
	}

	rec := ts.formPost(t, deleteURL(free.ID), url.Values{})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		t.Fatalf("delete = %d to %q, want 303 to the runs list", rec.Code, rec.Header().Get("Location"))
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", free.ID), ""); rec.Code != http.StatusNotFound {
		t.Errorf("deleted run: GET = %d, want 404", rec.Code)
	}
	if _, err := os.Stat(storetest.RunDir(ts.dir, free.ID)); !os.IsNotExist(err) {
		t.Errorf("the deleted run's files are still there: %v", err)
	}
	if _, err := os.Stat(storetest.RunDir(ts.dir, used.ID)); err != nil {
		t.Errorf("the kept run's files: %v", err)
	}
}
