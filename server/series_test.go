package server

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// seriesRow returns the /series table row of series key.
func seriesRow(t *testing.T, page, key string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<tr data-series="` + regexp.QuoteMeta(key) + `">.*?</tr>`)
	row := re.FindString(page)
	if row == "" {
		t.Fatalf("/series has no row for %s", key)
	}
	return row
}

// TestSeriesIndex: /series lists every series by name (the label with the
// workload, or the workload and its settings) with its key, workload, run
// count, the headline metric's newest value with its unit, a sparkline
// and the newest change point, the most recently run first; it is linked
// from the navigation. A later write re-reads only the series it touched.
func TestSeriesIndex(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := backfillKafka14020(t, ts)
	stepSeries(t, ts, "fp-latency", time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC), 40, "record-latency-p99", "ms", rundoc.LowerIsBetter, 10, 11)
	at := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	unlabelled := &store.Run{Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Fingerprint: "fp-nolabel", FinishedAt: &at, RunAt: at,
		Spec:    `{"workload":"producer","params":{"topic":"t1","record-size":100,"throughput":20000,"props":{"acks":"all"},"profile":["cpu"]}}`,
		Metrics: []store.Metric{{Name: "record-send-rate", Value: 19876.5, Unit: "records/s", Better: rundoc.HigherIsBetter}}}
	if err := ts.st.CreateRuns(t.Context(), []*store.Run{unlabelled}); err != nil {
		t.Fatal(err)
	}

	rec := ts.do(t, "GET", "/series", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /series = %d %s", rec.Code, rec.Body)
	}
	page := rec.Body.String()
	if !strings.Contains(page, `<a href="/series" aria-current="page">Series</a>`) {
		t.Error("/series is not in the navigation, or not marked current")
	}
	k := seriesRow(t, page, "imported:producer:perf@trunk")
	for _, want := range []string{`>perf (producer) on trunk</a>`, `<td class="num">60</td>`, `<td>record-send-rate</td>`,
		` records/s</td>`, `<svg class="sparkline"`, `class="sparkline-cp"`, `<span class="delta-worse">-8.`, fmt.Sprintf("%% at #%d</span>", ids[20]),
		`href="/history?metric=record-send-rate&amp;series=imported%3Aproducer%3Aperf%40trunk"`} {
		if !strings.Contains(k, want) {
			t.Errorf("KAFKA-14020 row lacks %s:\n%s", want, k)
		}
	}
	if n := strings.Count(k, "<polyline"); n != 1 {
		t.Errorf("%d sparklines in the row, want 1", n)
	}
	lat := seriesRow(t, page, "fp-latency@trunk")
	if !strings.Contains(lat, `>fp-latency (producer) on trunk</a>`) || !strings.Contains(lat, `<td>record-latency-p99</td>`) || !strings.Contains(lat, " ms</td>") {
		t.Errorf("latency row:\n%s", lat)
	}
	nl := seriesRow(t, page, "fp-nolabel")
	if !strings.Contains(nl, `>producer acks=all record-size=100 throughput=20000</a>`) || !strings.Contains(nl, "19,876 records/s") || !strings.Contains(nl, "<td>—</td>") {
		t.Errorf("unlabelled row:\n%s", nl)
	}
	// Newest first: the unlabelled run (2023), KAFKA-14020 (2022), the latency step (2021).
	if a, b, c := strings.Index(page, `data-series="fp-nolabel"`), strings.Index(page, `data-series="imported:producer:perf@trunk"`), strings.Index(page, `data-series="fp-latency@trunk"`); !(a < b && b < c) {
		t.Errorf("rows not newest first: %d %d %d", a, b, c)
	}

	// A run added to one series: the index reads that series alone.
	lists := ts.seriesIndex.rows.Lists()
	stepSeries(t, ts, "fp-new", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 2, "record-send-rate", "records/s", rundoc.HigherIsBetter, 5000, 5000)
	page = ts.do(t, "GET", "/series", "").Body.String()
	seriesRow(t, page, "fp-new@trunk")
	seriesRow(t, page, "imported:producer:perf@trunk")
	if ts.seriesIndex.rows.Lists() != lists {
		t.Errorf("the index listed every series again after a write to one (%d → %d lists)", lists, ts.seriesIndex.rows.Lists())
	}

	// The regressions list names the series, keeping the key.
	var regs struct {
		Regressions []struct{ Series, Name string } `json:"regressions"`
	}
	decodeAnswer(t, ts.do(t, "GET", "/api/regressions", ""), &regs)
	if len(regs.Regressions) == 0 || regs.Regressions[0].Name != "perf (producer) on trunk" || regs.Regressions[0].Series != "imported:producer:perf@trunk" {
		t.Errorf("regressions %+v, want KAFKA-14020's named perf (producer) on trunk", regs.Regressions)
	}
	if !strings.Contains(ts.do(t, "GET", "/regressions", "").Body.String(), `<span class="series-name">perf (producer) on trunk</span>`) {
		t.Error("the regressions page does not name the series")
	}

	// The history names the series too.
	h := ts.do(t, "GET", fmt.Sprintf("/history?run=%d", ids[3]), "").Body.String()
	if !strings.Contains(h, `<span class="series-name">perf (producer) on trunk</span>`) {
		t.Error("the history page does not name the series")
	}
}

// TestHistoryXAxis: x=time draws the points by when they ran, with date
// ticks; x=commit labels the axis with the commits; index is the default;
// the select offers the three, the chosen one selected; anything else is
// a 400 naming x.
func TestHistoryXAxis(t *testing.T) {
	ts := newTestServer(t, nil)
	ids := backfillKafka14020(t, ts)
	base := fmt.Sprintf("/history?run=%d", ids[0])
	get := func(q string) string {
		rec := ts.do(t, "GET", base+q, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s%s = %d %s", base, q, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	index, tm, commit := get(""), get("&x=time"), get("&x=commit")
	if !strings.Contains(index, "runs in time order (index)") || !strings.Contains(index, `<option value="index" selected>`) {
		t.Error("the default axis is not the run index")
	}
	if !strings.Contains(tm, `>time (UTC)</text>`) || !strings.Contains(tm, `>2022-06-01</text>`) || !strings.Contains(tm, `<option value="time" selected>`) {
		t.Error("x=time: no time axis with date ticks")
	}
	if !strings.Contains(commit, `>commit (runs in time order)</text>`) || !strings.Contains(commit, `>c0</text>`) || !strings.Contains(commit, `<option value="commit" selected>`) {
		t.Error("x=commit: no commit axis")
	}
	// The change point's mark sits between its runs on every axis.
	for name, page := range map[string]string{"index": index, "time": tm, "commit": commit} {
		if !strings.Contains(page, `class="chart-mark cp-mark cp-worse"`) {
			t.Errorf("%s: no change-point mark", name)
		}
	}
	// Time: points a day apart are evenly spaced, the mark half-way
	// between runs 19 and 20, as on the index axis.
	cx := regexp.MustCompile(`<circle class="chart-point" cx="([0-9.]+)"`)
	if a, b := cx.FindAllStringSubmatch(index, -1), cx.FindAllStringSubmatch(tm, -1); len(a) != 60 || len(b) != 60 || a[20][1] != b[20][1] {
		t.Errorf("time axis: %d and %d points, point 20 at %v vs %v", len(a), len(b), a[20], b[20])
	}
	if rec := ts.do(t, "GET", base+"&x=banana", ""); rec.Code != http.StatusBadRequest || !regexp.MustCompile(`\bx\b`).MatchString(rec.Body.String()) {
		t.Errorf("x=banana: %d %s, want 400 naming x", rec.Code, rec.Body)
	}
	if !strings.Contains(ts.do(t, "GET", base+"&x=time&window=30", "").Body.String(), `href="/api/history?run=`) {
		t.Error("no JSON link")
	}
}
