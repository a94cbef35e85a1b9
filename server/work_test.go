package server

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// clientCPU is the id of a run's client CPU profile.
func clientCPU(t *testing.T, r apiRun) uint {
	t.Helper()
	for _, p := range r.Profiles {
		if p.Role == "client" && p.Kind == "cpu" {
			return p.ID
		}
	}
	t.Fatalf("run %d has no client CPU profile: %+v", r.ID, r.Profiles)
	return 0
}

// measuredRecords is the record count a run's measurement holds.
func measuredRecords(t *testing.T, r apiRun) float64 {
	t.Helper()
	var m struct {
		MeasuredRecords float64 `json:"measured_records"`
	}
	if err := json.Unmarshal(r.Measurement, &m); err != nil || m.MeasuredRecords <= 0 {
		t.Fatalf("run %d: measurement %s (%v)", r.ID, r.Measurement, err)
	}
	return m.MeasuredRecords
}

// TestWorkNormalisationWritePath: write-path runs store how many records
// their measured requests carried, so their profiles compare per record;
// and when a run has no record count the reasons are sentences, one per
// reason.
func TestWorkNormalisationWritePath(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	gather := ts.createRun(t, `{"workload":"writepath","label":"g","params":{"sink":true,"requests":300,"strategy":"gather","records-per-request":16,"profile":"cpu"}}`)
	perBuffer := ts.createRun(t, `{"workload":"writepath","label":"pb","params":{"sink":true,"requests":300,"strategy":"per-buffer","records-per-request":8,"profile":"cpu"}}`)
	g, pb := ts.waitFinal(t, gather), ts.waitFinal(t, perBuffer)
	checkWritepathRun(t, g)
	checkWritepathRun(t, pb)
	base, target := clientCPU(t, g), clientCPU(t, pb)

	rec := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&normalize=work", base, target), "")
	if rec.Code != 200 {
		t.Fatalf("per-record normalisation of write-path runs: %d %s", rec.Code, rec.Body)
	}
	var diff struct {
		Normalization struct {
			Mode    string
			Scale   float64
			Explain string
		}
	}
	json.Unmarshal(rec.Body.Bytes(), &diff)
	want := measuredRecords(t, pb) / measuredRecords(t, g)
	if diff.Normalization.Mode != "work" || math.Abs(diff.Normalization.Scale-want) > 1e-9 || !strings.Contains(diff.Normalization.Explain, "per record") {
		t.Errorf("normalization %+v, want work with scale %v", diff.Normalization, want)
	}
	page := ts.do(t, "GET", fmt.Sprintf("/compare/profiles?base=%d&target=%d&normalize=work", base, target), "").Body.String()
	if strings.Contains(page, `value="work" disabled`) || !strings.Contains(page, `value="work" checked`) {
		t.Errorf("the compare page does not offer per-record normalisation for write-path runs")
	}

	// Imported runs have no record count: one reason when one run lacks
	// it, one sentence for both, never two reasons run together.
	imp1, imp2 := ts.importRun(t, "a", foldedGather), ts.importRun(t, "b", foldedSingle)
	reason := regexp.MustCompile(`(?s)<span id="norm-work-reason" class="norm-reason">(.*?)</span>`)
	for _, tc := range []struct {
		base, target uint
		want         string
	}{
		{imp1, target, "Unavailable: the base run (run 3) has no record count."},
		{base, imp2, "Unavailable: the target run (run 4) has no record count."},
		{imp1, imp2, "Unavailable: neither run has a record count (runs 3 and 4)."},
	} {
		page := ts.do(t, "GET", fmt.Sprintf("/compare/profiles?base=%d&target=%d", tc.base, tc.target), "").Body.String()
		m := reason.FindStringSubmatch(page)
		if m == nil || m[1] != tc.want {
			t.Errorf("profiles %d and %d: reason %q, want %q", tc.base, tc.target, m, tc.want)
		}
		api := ts.do(t, "GET", fmt.Sprintf("/api/diff?base=%d&target=%d&normalize=work", tc.base, tc.target), "")
		if body := api.Body.String(); api.Code != 400 || strings.Contains(body, `\n`) || !strings.Contains(body, strings.TrimPrefix(tc.want, "Unavailable: ")) {
			t.Errorf("profiles %d and %d: API %d %s, want 400 saying %q", tc.base, tc.target, api.Code, body, tc.want)
		}
	}
}
