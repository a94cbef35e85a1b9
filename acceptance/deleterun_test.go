package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eImportRun imports folded stacks as a new run and returns its id.
func (s *e2eServer) e2eImportRun(t *testing.T, label string) uint {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", label)
	w, _ := mw.CreateFormFile("profile", label+".collapsed")
	io.WriteString(w, "main.main;main.work 10\n")
	mw.Close()
	resp, err := s.http.Post(s.URL+"/api/import", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run struct{ ID uint }
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &run) != nil || run.ID == 0 {
		t.Fatalf("import %s: %d %s", label, resp.StatusCode, data)
	}
	return run.ID
}

// TestE2EDeleteRun deletes a run from its page in Chromium: the Delete
// disclosure opens, its button posts the form (CSRF token included, no
// script needed), the browser lands on the runs list without the run, and
// the run's page is gone. A run a report uses offers no button and links
// the report instead.
func TestE2EDeleteRun(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	free := srv.e2eImportRun(t, "to-delete")
	kept := srv.e2eImportRun(t, "in-a-report")
	baseline := srv.e2eImportRun(t, "baseline")
	var rep struct{ Slug string }
	srv.api(t, http.MethodPost, "/api/reports", map[string]any{"title": "Kept for the report", "runs": []uint{baseline, kept}}, http.StatusCreated, &rep)

	b.do(t, "open the run in a report", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, kept)),
		chromedp.WaitVisible(chromedp.CSS("section.delete-run")))
	if n := e2eEval[int](t, b, "count delete forms", `document.querySelectorAll('form.delete-form').length`); n != 0 {
		t.Errorf("the page of a run a report uses has %d delete forms, want none", n)
	}
	if href := e2eEval[string](t, b, "read the report link", `(document.querySelector('section.delete-run a') || {}).getAttribute?.('href') || ''`); href != "/r/"+rep.Slug {
		t.Errorf("the delete section links %q, want the report /r/%s", href, rep.Slug)
	}

	b.do(t, "open the free run", chromedp.Navigate(fmt.Sprintf("%s/runs/%d", srv.URL, free)),
		chromedp.WaitVisible(chromedp.CSS("section.delete-run summary")))
	if vis := e2eEval[bool](t, b, "is the button hidden", `document.querySelector('form.delete-form button').checkVisibility()`); vis {
		t.Error("the delete button shows before the disclosure is opened")
	}
	b.do(t, "open the delete disclosure", chromedp.Click(chromedp.CSS("section.delete-run summary")),
		chromedp.WaitVisible(chromedp.CSS("form.delete-form button")))
	b.screenshot(t, "run-delete-confirm")
	b.do(t, "confirm the delete", chromedp.Click(chromedp.CSS("form.delete-form button")))
	b.waitFor(t, "the runs list", `location.pathname === '/' && document.readyState === 'complete' && !!document.querySelector('p.count')`)
	listed := e2eEval[[]string](t, b, "read the runs table",
		`Array.from(document.querySelectorAll('table.runs-table tbody a[href^="/runs/"]')).map(a => a.textContent.trim())`)
	for _, id := range listed {
		if id == fmt.Sprintf("#%d", free) {
			t.Errorf("the runs list still shows the deleted run: %v", listed)
		}
	}
	if !strings.Contains(strings.Join(listed, " "), fmt.Sprintf("#%d", kept)) {
		t.Errorf("the runs list lost the kept run: %v", listed)
	}
	srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d", free), nil, http.StatusNotFound, nil)
	b.checkConsole(t)
}
