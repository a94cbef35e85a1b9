package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

// seedProfiledRuns stores finished runs, one per folded profile ("" for
// a run without one), each with a record count of records, and returns
// their ids.
func seedProfiledRuns(t *testing.T, ts *testServer, records float64, folded ...string) []uint {
	t.Helper()
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var runs []*store.Run
	for i, f := range folded {
		r := &store.Run{Label: fmt.Sprintf("r%d", i), Workload: "producer", Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: &finished,
			Spec:    `{"workload":"producer","params":{"num-records":1000}}`,
			Metrics: []store.Metric{{Name: "records", Value: records, Unit: "records"}}}
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

func joinUints(ids []uint) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

func getDiff(t *testing.T, ts *testServer, query string) client.Diff {
	t.Helper()
	rec := ts.do(t, "GET", "/api/diff?"+query, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("/api/diff?%s: %d %s", query, rec.Code, rec.Body)
	}
	var d client.Diff
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

const (
	foldedA = "main;produce;write 50\nmain;produce;encode 30\n"
	foldedB = "main;produce;writev 40\nmain;produce;encode 30\n"
)

// TestDiffRunSets: five runs of one profile against three of the same
// profile show no change, whatever the normalisation (a sum would read
// −40 %); runs without the profile are skipped and listed.
func TestDiffRunSets(t *testing.T) {
	ts := newTestServer(t, nil)
	base := seedProfiledRuns(t, ts, 1000, foldedA, foldedA, foldedA, foldedA, foldedA, "")
	target := seedProfiledRuns(t, ts, 1000, foldedA, foldedA, foldedA)
	for _, norm := range []string{"total", "work", "none"} {
		d := getDiff(t, ts, fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=%s&sample=samples", joinUints(base), joinUints(target), norm))
		if d.Tree == nil || d.Tree.Value != 80 || d.Tree.Base != 80 {
			t.Errorf("%s: root %+v, want base and target 80 (one run's total)", norm, d.Tree)
		}
		if len(d.Changes) != 0 {
			t.Errorf("%s: identical runs changed: %+v", norm, d.Changes)
		}
		if fmt.Sprint(d.RunsBase) != fmt.Sprint(base[:5]) || fmt.Sprint(d.RunsTarget) != fmt.Sprint(target) ||
			len(d.ProfilesBase) != 5 || len(d.ProfilesTarget) != 3 || d.Kind != "cpu" || d.Role != "client" {
			t.Errorf("%s: runs %v %v profiles %v %v kind %q role %q", norm, d.RunsBase, d.RunsTarget, d.ProfilesBase, d.ProfilesTarget, d.Kind, d.Role)
		}
		if len(d.Skipped) != 1 || d.Skipped[0].RunID != base[5] || d.Skipped[0].Side != "base" || !strings.Contains(d.Skipped[0].Reason, "no cpu profile") {
			t.Errorf("%s: skipped %+v, want run %d of the base", norm, d.Skipped, base[5])
		}
	}
}

// TestDiffRunSetOfOneEqualsPair: a run set of one run a side is the pair
// form of those runs' profiles, figure for figure.
func TestDiffRunSetOfOneEqualsPair(t *testing.T) {
	ts := newTestServer(t, nil)
	base := seedProfiledRuns(t, ts, 1000, foldedA)
	target := seedProfiledRuns(t, ts, 1500, foldedB)
	for _, norm := range []string{"total", "work", "none"} {
		sets := getDiff(t, ts, fmt.Sprintf("base_runs=%d&target_runs=%d&kind=cpu&role=client&normalize=%s", base[0], target[0], norm))
		pair := getDiff(t, ts, fmt.Sprintf("base=%d&target=%d&normalize=%s", sets.ProfilesBase[0], sets.ProfilesTarget[0], norm))
		g, _ := json.Marshal([]any{sets.Tree, sets.Changes, sets.Normalization, sets.WritePaths})
		w, _ := json.Marshal([]any{pair.Tree, pair.Changes, pair.Normalization, pair.WritePaths})
		if string(g) != string(w) {
			t.Errorf("%s: run sets\n%s\npair\n%s", norm, g, w)
		}
		if pair.Base == nil || sets.Base != nil || fmt.Sprint(pair.RunsBase) != fmt.Sprint(base) {
			t.Errorf("%s: pair base %+v runs %v; sets base %+v", norm, pair.Base, pair.RunsBase, sets.Base)
		}
	}
	// normalize=work: base scaled by 1500 / 1000.
	d := getDiff(t, ts, fmt.Sprintf("base_runs=%d&target_runs=%d&kind=cpu&role=client&normalize=work&sample=samples", base[0], target[0]))
	if d.Tree.Base != 120 || d.Normalization.Scale != 1.5 {
		t.Errorf("work: root base %v scale %v, want 120 and 1.5", d.Tree.Base, d.Normalization.Scale)
	}
}

func TestDiffRunSetsRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := seedProfiledRuns(t, ts, 1000, foldedA, foldedB, "")
	var many []string
	for i := 1; i <= 51; i++ {
		many = append(many, fmt.Sprint(i))
	}
	for _, tc := range []struct{ query, field string }{
		{fmt.Sprintf("base_runs=%s&target_runs=%d&kind=cpu&role=client", strings.Join(many, ","), ids[1]), "base_runs"},
		{fmt.Sprintf("base_runs=%d&target_runs=%s&kind=cpu&role=client", ids[0], strings.Join(many[:50], ",")+",99999"), "target_runs"},
		{fmt.Sprintf("base_runs=x&target_runs=%d&kind=cpu&role=client", ids[1]), "base_runs"},
		{fmt.Sprintf("base_runs=%d,-3&target_runs=%d&kind=cpu&role=client", ids[0], ids[1]), "base_runs"},
		{fmt.Sprintf("base_runs=%d&target_runs=99999&kind=cpu&role=client", ids[0]), "target_runs"},
		{fmt.Sprintf("base_runs=&target_runs=%d&kind=cpu&role=client", ids[1]), "base_runs"},
		{fmt.Sprintf("target_runs=%d&kind=cpu&role=client", ids[1]), "base_runs"},
		{fmt.Sprintf("base_runs=%d,%d&target_runs=%d&kind=cpu&role=client", ids[0], ids[0], ids[1]), "base_runs"},
		{fmt.Sprintf("base_runs=%d&target_runs=%d&kind=cpu&role=client", ids[2], ids[1]), "base_runs"},
		{fmt.Sprintf("base_runs=%d&target_runs=%d&role=client", ids[0], ids[1]), "kind"},
		{fmt.Sprintf("base_runs=%d&target_runs=%d&kind=cpu", ids[0], ids[1]), "role"},
		{fmt.Sprintf("base_runs=%d&target_runs=%d&kind=cpu&role=client&normalize=sideways", ids[0], ids[1]), "normalize"},
		{fmt.Sprintf("base_runs=%d&target_runs=%d&kind=cpu&role=client&sample=bogus", ids[0], ids[1]), "sample"},
	} {
		rec := ts.do(t, "GET", "/api/diff?"+tc.query, "")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"`+tc.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.query, rec.Code, rec.Body, tc.field)
		}
	}
}

// TestDiffRunSetsDownloadAndPages: the merged sides download as pprof
// profiles that profiles.Load opens, holding the mean of the runs; the
// page lists the runs and the skipped one; pprof's UI opens on the
// merged difference.
func TestDiffRunSetsDownloadAndPages(t *testing.T) {
	ts := newTestServer(t, nil)
	base := seedProfiledRuns(t, ts, 1000, foldedA, "main;produce;write 150\nmain;produce;encode 30\n", "")
	target := seedProfiledRuns(t, ts, 1000, foldedB)
	q := fmt.Sprintf("base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=none", joinUints(base), joinUints(target))
	rec := ts.do(t, "GET", "/api/diff/profile.pb.gz?side=base&"+q, "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Disposition"), "kbench-base-cpu-client-runs-") {
		t.Fatalf("download: %d %v %.200s", rec.Code, rec.Header(), rec.Body)
	}
	p, err := profiles.Load(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the merged base does not load: %v", err)
	}
	idx, _ := profiles.PickSample(p, "samples")
	if tot, _ := profiles.SampleTotal(p, idx); tot != 130 { // (80 + 180) / 2
		t.Errorf("merged base total %d, want the mean 130", tot)
	}
	if rec := ts.do(t, "GET", "/api/diff/profile.pb.gz?side=middle&"+q, ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"side"`) {
		t.Errorf("side=middle: %d %s", rec.Code, rec.Body)
	}

	page := ts.do(t, "GET", "/compare/profiles?"+q, "")
	body := page.Body.String()
	if page.Code != http.StatusOK {
		t.Fatalf("page: %d %s", page.Code, body)
	}
	for _, want := range []string{`id="runs-base"`, fmt.Sprintf("run #%d", base[1]), `id="runs-skipped"`, fmt.Sprintf("run #%d</a> (base)", base[2]),
		`data-mode="diff"`, "base_runs=" + strings.ReplaceAll(joinUints(base[:2]), ",", "%2C"), `name="base_runs"`, "/diff/runs/cpu/client/", `id="download-base"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	pp := ts.do(t, "GET", fmt.Sprintf("/diff/runs/cpu/client/%s/%s/pprof/top", joinUints(base), joinUints(target)), "")
	if pp.Code != http.StatusOK || !strings.Contains(pp.Body.String(), "produce") {
		t.Errorf("pprof UI of the run sets: %d %v %.300s", pp.Code, pp.Header(), pp.Body)
	}
	if pp := ts.do(t, "GET", fmt.Sprintf("/diff/runs/cpu/client/x/%s/pprof/", joinUints(target)), ""); pp.Code != http.StatusBadRequest {
		t.Errorf("pprof UI with a bad id: %d", pp.Code)
	}
}
