package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// storeValues stores one run per value of metric in series fp@trunk of
// workload, an hour apart from t0, commits w0…; it returns their ids.
func storeValues(t *testing.T, ts *testServer, fp string, workload rundoc.Workload, t0 time.Time, metric, unit string, better rundoc.Better, values ...float64) []uint {
	t.Helper()
	var runs []*store.Run
	for i, v := range values {
		at := t0.Add(time.Duration(i) * time.Hour)
		runs = append(runs, &store.Run{Label: fp, Workload: workload, Status: rundoc.StatusSucceeded, Fingerprint: fp, FinishedAt: &at,
			Meta: store.Meta{"branch": "trunk", "commit": fmt.Sprintf("w%d", i)}, RunAt: at,
			Metrics: []store.Metric{{Name: metric, Value: v, Unit: unit, Better: better}}})
	}
	if err := ts.st.CreateRuns(t.Context(), runs); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// writePathP99 is the write-path preset's request-latency-p99 over 4
// repetitions that put "+1,666.9 %, p 0" on /regressions: Otava splits it
// 1/2/1 with p = 0.
var writePathP99 = []float64{10.5, 185.5, 185.5, 186}

// TestMinSegmentWritePath: the 1/2/1 series is no regression with the
// default min_segment (4): not on /api/regressions nor /regressions, not
// badged; /api/history lists its change points as tentative, and the
// history page shows them as tentative with the reason, the p-value of 0
// as "< 1e-300". With min_segment=1 /api/history gives Otava's raw answer.
func TestMinSegmentWritePath(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := storeValues(t, ts, "fp-wp", rundoc.Writepath, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"request-latency-p99", "ms", rundoc.LowerIsBetter, writePathP99...)

	if a := ts.getRegressions(t, ""); len(a.Regressions) != 0 {
		t.Errorf("regressions %+v, want none from a 1/2/1 series", a.Regressions)
	}
	if a := ts.getRegressions(t, "min_segment=2"); len(a.Regressions) != 0 {
		t.Errorf("min_segment=2: regressions %+v, want none (a side of one run)", a.Regressions)
	}
	if html := ts.do(t, "GET", "/regressions", "").Body.String(); strings.Contains(html, "fp-wp") || !strings.Contains(html, `name="min_segment" value="4"`) {
		t.Error("the regressions page lists the 1/2/1 series, or has no min_segment field showing 4")
	}
	if html := ts.do(t, "GET", fmt.Sprintf("/runs/%d", ids[1]), "").Body.String(); strings.Contains(html, "request-latency-p99 +1") {
		t.Error("the run after the tentative change is badged")
	}

	q := fmt.Sprintf("run=%d&metric=request-latency-p99", ids[0])
	var h struct {
		ChangePoints []map[string]any `json:"change_points"`
		Tentative    []struct {
			Index           int     `json:"index"`
			RunsBefore      int     `json:"runs_before"`
			RunsAfter       int     `json:"runs_after"`
			Tentative       bool    `json:"tentative"`
			TentativeReason string  `json:"tentative_reason"`
			PValue          float64 `json:"p_value"`
		} `json:"tentative_change_points"`
		Params map[string]float64 `json:"params"`
	}
	decodeAnswer(t, ts.do(t, "GET", "/api/history?"+q, ""), &h)
	if len(h.ChangePoints) != 0 || len(h.Tentative) != 2 || h.Params["min_segment"] != 4 {
		t.Fatalf("history: %d change points, %d tentative, params %v; want 0 and 2, min_segment 4", len(h.ChangePoints), len(h.Tentative), h.Params)
	}
	if c := h.Tentative[0]; c.Index != 1 || c.RunsBefore != 1 || c.RunsAfter != 2 || !c.Tentative || c.PValue != 0 || !strings.Contains(c.TentativeReason, "min_segment") {
		t.Errorf("first tentative change point %+v", c)
	}

	page := ts.do(t, "GET", "/history?"+q, "").Body.String()
	for _, want := range []string{`class="chart-mark cp-mark cp-worse cp-tentative"`, `<span class="badge badge-tentative">tentative</span>`,
		"1 run before it and 2 after; a change point is trusted with at least 4 on each side (min_segment)", `<td class="num">&lt; 1e-300</td>`,
		`name="min_segment" value="4"`} {
		if !strings.Contains(page, want) {
			t.Errorf("history page lacks %s", want)
		}
	}
	if strings.Contains(page, `<td class="num">0</td>`) {
		t.Error("history page shows a p-value of 0")
	}

	// Otava's raw answer: both change points, none tentative.
	var raw struct {
		ChangePoints []struct {
			Index     int  `json:"index"`
			Tentative bool `json:"tentative"`
		} `json:"change_points"`
		Tentative []any `json:"tentative_change_points"`
	}
	decodeAnswer(t, ts.do(t, "GET", "/api/history?"+q+"&min_segment=1", ""), &raw)
	if len(raw.ChangePoints) != 2 || raw.ChangePoints[0].Index != 1 || raw.ChangePoints[1].Index != 3 || raw.ChangePoints[0].Tentative || len(raw.Tentative) != 0 {
		t.Errorf("min_segment=1: %+v, want Otava's change points at 1 and 3, none tentative", raw)
	}
}

// TestMinSegmentOtavaParity: /api/history with min_segment=1 gives the
// change points of Otava's published test_div_by_zero (tests/series_test.py:
// two, the first at index 3); with the default min_segment they are
// tentative, their segments being of 3 runs.
func TestMinSegmentOtavaParity(t *testing.T) {
	ts := newTestServer(t, nil)
	storeValues(t, ts, "fp-otava", rundoc.Producer, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "record-send-rate", "records/s", rundoc.HigherIsBetter,
		0.0, 0.0, 0.0, 1.00, 1.12, 0.90, 0.50, 0.51, 0.48, 0.48, 0.55)
	type cp struct {
		Index int `json:"index"`
	}
	indexes := func(cps []cp) []int {
		var out []int
		for _, c := range cps {
			out = append(out, c.Index)
		}
		return out
	}
	var raw, def struct {
		ChangePoints []cp `json:"change_points"`
		Tentative    []cp `json:"tentative_change_points"`
	}
	decodeAnswer(t, ts.do(t, "GET", "/api/history?series=fp-otava%40trunk&min_segment=1", ""), &raw)
	if len(raw.ChangePoints) != 2 || raw.ChangePoints[0].Index != 3 || len(raw.Tentative) != 0 {
		t.Errorf("min_segment=1: change points %v (tentative %v), Otava expects two, the first at 3", indexes(raw.ChangePoints), indexes(raw.Tentative))
	}
	decodeAnswer(t, ts.do(t, "GET", "/api/history?series=fp-otava%40trunk", ""), &def)
	if len(def.ChangePoints) != 0 || !slices.Equal(indexes(def.Tentative), indexes(raw.ChangePoints)) {
		t.Errorf("default: change points %v, tentative %v; want none and Otava's", indexes(def.ChangePoints), indexes(def.Tentative))
	}
}

// TestMinSegmentBadInput: min_segment below 2 is a 400 naming it on the
// pages and /api/regressions; /api/history takes 1 (Otava's raw answer)
// but not 0.
func TestMinSegmentBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := storeValues(t, ts, "fp-bad", rundoc.Producer, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "record-send-rate", "records/s", rundoc.HigherIsBetter, 1, 2, 3)
	run := fmt.Sprintf("run=%d&", ids[0])
	for _, tt := range []struct {
		path string
		code int
	}{
		{"/api/regressions?min_segment=1", 400}, {"/regressions?min_segment=1", 400},
		{"/api/regressions?min_segment=0", 400}, {"/regressions?min_segment=four", 400},
		{"/history?" + run + "min_segment=1", 400}, {"/history?" + run + "min_segment=-3", 400},
		{"/api/history?" + run + "min_segment=0", 400}, {"/api/history?" + run + "min_segment=x", 400},
		{"/api/history?" + run + "min_segment=1", 200}, {"/api/regressions?min_segment=2", 200}, {"/history?" + run + "min_segment=2", 200},
	} {
		rec := ts.do(t, "GET", tt.path, "")
		if rec.Code != tt.code || (tt.code == 400 && !regexp.MustCompile(`\bmin_segment\b`).MatchString(rec.Body.String())) {
			t.Errorf("GET %s = %d %s, want %d (naming min_segment)", tt.path, rec.Code, rec.Body, tt.code)
		}
	}
}

// decodeAnswer decodes a 200 answer into out.
func decodeAnswer(t *testing.T, rec interface {
	Result() *http.Response
}, out any) {
	t.Helper()
	resp := rec.Result()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseHistoryQuery: any query either fails or gives a query whose
// min_segment is at the floor asked for or above (or unset), whose x is
// one of the axes, and which parses back to itself from its own URL.
func FuzzParseHistoryQuery(f *testing.F) {
	for _, s := range []string{"run=1", "series=a%40b&min_segment=1", "run=2&min_segment=0&x=time", "run=3&x=commit&window=30&max_pvalue=1e-9",
		"fingerprint=f&branch=b&min_segment=99999999999999999999", "run=1&x=%00"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, api bool) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		floor := minSegmentFloor
		if api {
			floor = minSegmentFloorRaw
		}
		q, err := parseHistoryQuery(v, floor)
		if err != nil {
			return
		}
		if q.Options.MinSegment != 0 && q.Options.MinSegment < floor {
			t.Fatalf("%q: min_segment %d below %d accepted", raw, q.Options.MinSegment, floor)
		}
		if !slices.Contains([]string{"", ui.XIndex, ui.XTime, ui.XCommit}, q.X) {
			t.Fatalf("%q: x %q accepted", raw, q.X)
		}
		again, err := parseHistoryQuery(q.Values(), floor)
		if err != nil || again.Options != q.Options || (again.X != q.X && !(q.X == ui.XIndex && again.X == "")) {
			t.Fatalf("%q: %+v does not round-trip through %q: %+v, %v", raw, q, q.Values().Encode(), again, err)
		}
	})
}
