package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// seedLabelled stores finished runs labelled label, one per folded
// profile ("" for none), each having moved 1000 records.
func seedLabelled(t *testing.T, ts *testServer, label string, folded ...string) []uint {
	t.Helper()
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var runs []*store.Run
	for _, f := range folded {
		r := &store.Run{Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: &finished,
			Spec: `{"workload":"producer","params":{"num-records":1000}}`,
			Metrics: []store.Metric{{Name: "records", Value: 1000, Unit: "records"},
				{Name: "record-send-rate", Value: 1000, Unit: "records/s", Better: "higher"}}}
		if f != "" {
			r.Profiles = []store.Profile{foldedProfile(t, f)}
		}
		runs = append(runs, r)
	}
	if err := ts.st.CreateRuns(context.Background(), runs); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

func plantedFolded(n int) (base, target []string) {
	run := func(hot, steady, other int) string {
		return fmt.Sprintf("main;work;hot %d\nmain;work;steady %d\nmain;other %d\n", hot, steady, other)
	}
	base = []string{run(1000, 500, 500), run(1010, 505, 495), run(990, 495, 502)}
	target = []string{run(1500, 499, 501), run(1490, 503, 497), run(1510, 501, 499)}
	return base[:n], target[:n]
}

var inlineDataRE = regexp.MustCompile(`(?s)<script type="application/json" id="profiles-diff-data">(.*?)</script>`)

// inlineDiff returns the rows answer a page inlines for its Profiles
// section, decoded strictly as client.Diff.
func inlineDiff(t *testing.T, page string) client.Diff {
	t.Helper()
	m := inlineDataRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page inlines no diff")
	}
	dec := json.NewDecoder(strings.NewReader(m[1]))
	dec.DisallowUnknownFields()
	var d client.Diff
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the inline diff does not decode: %v", err)
	}
	return d
}

// TestCompareProfilesSection: a comparison of 3 runs against 3 draws the
// first column's cpu diff from the page (the rows API's answer inlined,
// with the verdicts: the planted change significant, an unchanged
// function not), lists the top changes with q values and carries them in
// its Markdown; the report shows the same section and its .md export the
// same table.
func TestCompareProfilesSection(t *testing.T) {
	ts := newTestServer(t, nil)
	bf, tf := plantedFolded(3)
	base := seedLabelled(t, ts, "trunk", bf...)
	target := seedLabelled(t, ts, "branch", tf...)
	runs := joinUints(append(append([]uint{}, base...), target...))
	rec := ts.do(t, "GET", "/compare?by=label&runs="+runs, "")
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("/compare: %d %s", rec.Code, page)
	}
	d := inlineDiff(t, page)
	if d.Significance == nil || !d.Significance.Decided || d.Rows == nil || len(d.Rows.Significant) != len(d.Rows.Names) ||
		fmt.Sprint(d.RunsBase) != fmt.Sprint(base) || fmt.Sprint(d.RunsTarget) != fmt.Sprint(target) || d.Normalization.Mode != "work" {
		t.Fatalf("inline diff: significance %+v, runs %v %v, normalization %+v", d.Significance, d.RunsBase, d.RunsTarget, d.Normalization)
	}
	api := getDiff(t, ts, fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=work&format=rows&width=%d",
		joinUints(base), joinUints(target), defaultPruneWidth))
	g, _ := json.Marshal(d)
	w, _ := json.Marshal(api)
	if !bytes.Equal(g, w) {
		t.Errorf("the inline diff differs from the API's first view:\n%s\n%s", g, w)
	}
	for _, want := range []string{`id="profiles-heading"`, `data-src="/api/diff?base_runs=`, `normalize=work`, `<tr class="sig-yes sig-grew">`,
		`<td class="fn">hot</td>`, `<tr class="sig-no">`, "### Profiles: client cpu: branch against trunk", "| `hot` |"} {
		if !strings.Contains(html.UnescapeString(page), html.UnescapeString(want)) {
			t.Errorf("the compare page lacks %s", want)
		}
	}
	if strings.Contains(page, `id="profiles-banner"`) {
		t.Error("a decided diff shows the undecided banner")
	}

	rec = ts.do(t, "POST", "/api/reports", fmt.Sprintf(`{"title":"planted","runs":[%s],"by":"label"}`, runs))
	var created struct{ Slug string }
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &created) != nil {
		t.Fatalf("POST /api/reports = %d %s", rec.Code, rec.Body)
	}
	rp := ts.do(t, "GET", "/r/"+created.Slug, "").Body.String()
	if inlineDiff(t, rp).Significance == nil || strings.Contains(rp, "Differential flame graphs") {
		t.Error("the report's Profiles section does not draw the diff, or the old section is still there")
	}
	md := ts.do(t, "GET", "/r/"+created.Slug+".md", "").Body.String()
	if !strings.Contains(md, "### Profiles: client cpu: branch against trunk") || !strings.Contains(md, "| `hot` |") || !strings.Contains(md, "/record") {
		t.Errorf("the report's Markdown lacks the top changes:\n%s", md)
	}
}

// TestCompareProfilesSectionUndecided: 2 runs against 2 show the diff
// with the banner naming the runs per side that would decide, and no
// verdicts; runs without profiles say so.
func TestCompareProfilesSectionUndecided(t *testing.T) {
	ts := newTestServer(t, nil)
	bf, tf := plantedFolded(2)
	base := seedLabelled(t, ts, "trunk", bf...)
	target := seedLabelled(t, ts, "branch", tf...)
	page := ts.do(t, "GET", "/compare?by=label&runs="+joinUints(append(base, target...)), "").Body.String()
	d := inlineDiff(t, page)
	if d.Significance == nil || d.Significance.Decided || d.Rows.Significant != nil {
		t.Errorf("inline diff: significance %+v, verdicts %v", d.Significance, d.Rows.Significant)
	}
	if !strings.Contains(page, `id="profiles-banner"`) || !strings.Contains(page, "3 runs per side") {
		t.Error("an undecided diff lacks the banner")
	}

	none := append(seedLabelled(t, ts, "a", "", ""), seedLabelled(t, ts, "b", "", "")...)
	page = ts.do(t, "GET", "/compare?by=label&runs="+joinUints(none), "").Body.String()
	if !strings.Contains(page, `id="profiles-none"`) || strings.Contains(page, "flamegraph.js") {
		t.Error("runs without profiles: the section does not say so, or the page loads the flame graph")
	}
}
