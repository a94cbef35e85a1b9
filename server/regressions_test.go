package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// regressionsAnswer is /api/regressions' answer, as the client reads it.
type regressionsAnswer = client.Regressions

func (ts *testServer) getRegressions(t *testing.T, query string) regressionsAnswer {
	t.Helper()
	rec := ts.do(t, "GET", "/api/regressions?"+query, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/regressions?%s = %d %s", query, rec.Code, rec.Body)
	}
	var a regressionsAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// stepSeries stores n runs of series fp@trunk (producer), the first half
// with metric at from, the rest at to (±1% of alternating noise), a day
// apart from t0, commits s0…; it returns their ids in time order.
func stepSeries(t *testing.T, ts *testServer, fp string, t0 time.Time, n int, metric, unit string, better rundoc.Better, from, to float64) []uint {
	t.Helper()
	var runs []*store.Run
	for i := 0; i < n; i++ {
		v := from
		if i >= n/2 {
			v = to
		}
		v *= 1 + 0.01*float64(i%3-1)
		at := t0.Add(time.Duration(i) * 24 * time.Hour)
		runs = append(runs, &store.Run{Label: fp, Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Fingerprint: fp, FinishedAt: &at,
			Meta: store.Meta{"branch": "trunk", "commit": fmt.Sprintf("s%d", i)}, RunAt: at,
			Metrics: []store.Metric{{Name: metric, Value: v, Unit: unit, Better: better}}})
	}
	if err := ts.st.CreateRuns(t.Context(), runs); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, n)
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// TestRegressions: the regressions list names, across every series, the
// change points that made a headline metric worse by its direction
// (KAFKA-14020's drop in record-send-rate, a rise of p99 latency) and not
// an improvement, newest first, with the commit range, change, p-value
// and before/after comparison; the threshold drops the smaller one; the
// page shows the same, and a series imported after the list was read
// appears in the next one.
func TestRegressions(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := backfillKafka14020(t, ts)
	better := stepSeries(t, ts, "fp-better", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 105000, 115000)
	latency := stepSeries(t, ts, "fp-latency", time.Date(2022, 3, 1, 0, 0, 0, 0, time.UTC), 40, "record-latency-p99", "ms", rundoc.LowerIsBetter, 10, 11)
	_ = better

	a := ts.getRegressions(t, "")
	// KAFKA-14020's (in both its headline metrics, records/s and MB/s)
	// is the newer.
	if len(a.Regressions) != 3 || a.Regressions[0].Metric != "mb-per-sec" || a.Regressions[0].RunID != ids[20] {
		t.Fatalf("regressions %+v, want 3", a.Regressions)
	}
	k := a.Regressions[1]
	if k.Metric != "record-send-rate" || k.RunID != ids[20] || k.Index != 20 || k.CommitBefore != "c19" || k.CommitAfter != "c20" ||
		math.Abs(k.ChangePct-(-8.7)) > 1 || k.PValue == nil || *k.PValue > 0.001 || k.Before < k.After ||
		!strings.HasPrefix(k.CompareURL, "/compare?") || !strings.Contains(k.CompareURL, "by=change") ||
		!strings.HasPrefix(k.HistoryURL, "/history?") || !strings.Contains(k.HistoryURL, "metric=record-send-rate") {
		t.Errorf("KAFKA-14020 regression %+v", k)
	}
	l := a.Regressions[2]
	if l.Series != "fp-latency@trunk" || l.Metric != "record-latency-p99" || l.RunID != latency[20] || l.CommitBefore != "s19" ||
		l.CommitAfter != "s20" || math.Abs(l.ChangePct-10) > 1 || !l.Time.Before(k.Time) {
		t.Errorf("latency regression %+v", l)
	}
	if h := ts.history(t, k.HistoryURL[len("/history?"):]); len(h.ChangePoints) != 1 || h.ChangePoints[0].RunID != k.RunID {
		t.Errorf("its history_url gives %+v", h.ChangePoints)
	}
	if a := ts.getRegressions(t, "threshold=9.5"); len(a.Regressions) != 1 || a.Regressions[0].Metric != "record-latency-p99" {
		t.Errorf("threshold=9.5: %+v", a.Regressions)
	}
	if a := ts.getRegressions(t, "threshold=20"); len(a.Regressions) != 0 {
		t.Errorf("threshold=20: %+v", a.Regressions)
	}
	if a := ts.getRegressions(t, "max_pvalue=1e-300"); len(a.Regressions) != 0 {
		t.Errorf("max_pvalue=1e-300: %+v", a.Regressions)
	}
	if rec := ts.do(t, "GET", "/api/regressions", ""); !strings.Contains(rec.Body.String(), `"regressions":[{"series":`) {
		t.Errorf("answer %s", rec.Body)
	}

	rec := ts.do(t, "GET", "/regressions?threshold=5", "")
	html := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /regressions = %d %s", rec.Code, html)
	}
	for _, want := range []string{`<code>c19..c20</code>`, `<code>s19..s20</code>`, `class="before-after" href="/compare?`,
		`<a href="/regressions" aria-current="page">Regressions</a>`, `name="threshold" value="5"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Index(html, "c19..c20") > strings.Index(html, "s19..s20") {
		t.Error("page not newest first")
	}

	// A write: the next list holds the new series' regression.
	stepSeries(t, ts, "fp-late", time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 200, 150)
	if a := ts.getRegressions(t, ""); len(a.Regressions) != 4 || a.Regressions[0].Series != "fp-late@trunk" || math.Abs(a.Regressions[0].ChangePct+25) > 1 {
		t.Errorf("after a new series: %+v", a.Regressions)
	}
	if html := ts.do(t, "GET", "/regressions", "").Body.String(); !strings.Contains(html, "fp-late@trunk") {
		t.Error("the page still shows the list before the write")
	}
}

// TestRegressionsBadInput: bad parameters are 400s naming the field.
func TestRegressionsBadInput(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, tt := range []struct{ query, field string }{
		{"threshold=-1", "threshold"},
		{"threshold=five", "threshold"},
		{"threshold=NaN", "threshold"},
		{"threshold=Inf", "threshold"},
		{"window=1", "window"},
		{"max_pvalue=0", "max_pvalue"},
		{"max_pvalue=2", "max_pvalue"},
		{"min_magnitude=-1", "min_magnitude"},
	} {
		for _, path := range []string{"/api/regressions?", "/regressions?"} {
			rec := ts.do(t, "GET", path+tt.query, "")
			if rec.Code != http.StatusBadRequest || !regexp.MustCompile(`\b`+tt.field+`\b`).MatchString(rec.Body.String()) {
				t.Errorf("GET %s%s = %d %s, want 400 naming %s", path, tt.query, rec.Code, rec.Body, tt.field)
			}
		}
	}
}

// TestRegressionBadges: the runs list and the run page badge the run at
// which its series regressed, linking to the before/after comparison,
// and no other run.
func TestRegressionBadges(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := stepSeries(t, ts, "fp-badge", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	badge := regexp.MustCompile(`<a class="badge badge-regressed" href="(/compare\?[^"]+)"[^>]*>regressed: record-send-rate -8\.[0-9]%</a>`)
	list := ts.do(t, "GET", "/?per_page=100", "").Body.String()
	if n := len(badge.FindAllString(list, -1)); n != 1 {
		t.Fatalf("runs list has %d badges, want 1:\n%s", n, list)
	}
	row := regexp.MustCompile(`(?s)<tr data-run-id="(\d+)".*?</tr>`)
	for _, m := range row.FindAllStringSubmatch(list, -1) {
		if has := badge.MatchString(m[0]); has != (m[1] == fmt.Sprint(ids[20])) {
			t.Errorf("run %s badged %v", m[1], has)
		}
	}
	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", ids[20]), "").Body.String()
	if m := badge.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "by=change") {
		t.Errorf("run %d page lacks the badge", ids[20])
	}
	if page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", ids[21]), "").Body.String(); badge.MatchString(page) {
		t.Errorf("run %d page has a badge", ids[21])
	}
}
