package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestReportNotesMarkdown: a report's notes are Markdown, rendered safely
// on the page and kept as Markdown text in the Markdown export.
func TestReportNotesMarkdown(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedCompare(t, ts)
	notes := "**Noisy** broker host.\n\n- rerun\n\n<script>alert(1)</script>\n\nSee [details](javascript:alert(2))"
	req, _ := json.Marshal(map[string]any{"title": "Notes", "runs": ids[:2], "notes": notes})
	rec := ts.do(t, "POST", "/api/reports", string(req))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/reports = %d %s", rec.Code, rec.Body)
	}
	var created struct{ Slug string }
	json.Unmarshal(rec.Body.Bytes(), &created)

	page := ts.do(t, "GET", "/r/"+created.Slug, "").Body.String()
	// The notes' box; the page's "Copy Markdown" box holds the Markdown.
	_, page, _ = strings.Cut(page, `id="report-notes">`)
	page, _, _ = strings.Cut(page, "</div>")
	for _, want := range []string{"<strong>Noisy</strong> broker host.", "<li>rerun</li>", "&lt;script&gt;alert(1)&lt;/script&gt;", "<p>See details</p>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report's notes lack %q", want)
		}
	}
	for _, bad := range []string{"**Noisy**", "<script>alert", "javascript:"} {
		if strings.Contains(page, bad) {
			t.Errorf("the report's notes hold %q", bad)
		}
	}
	md := ts.do(t, "GET", fmt.Sprintf("/r/%s.md", created.Slug), "").Body.String()
	if !strings.Contains(md, notes) {
		t.Errorf("the Markdown export does not keep the notes as written:\n%s", md)
	}
}

// TestReportExportParts: every export names the run parts it reads; one
// without an entry would read none and lose what it quotes.
func TestReportExportParts(t *testing.T) {
	for ext := range reportExports {
		if _, ok := reportExportParts[ext]; !ok {
			t.Errorf("export %s reads no declared run parts", ext)
		}
	}
	if !reportExportParts[".md"].Output {
		t.Error("the Markdown export quotes the runs' output but does not read it")
	}
}
