package ui

import (
	"bytes"
	"io/fs"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
	"github.com/kbench/kbench/static"
	"github.com/kbench/kbench/templates"
)

// goldenStatic stands in for the static files in golden tests, so the
// asset URLs' content hashes do not change whenever the CSS or JS does.
var goldenStatic = fstest.MapFS{
	"app.css":             {Data: []byte("/* css */")},
	"run.js":              {Data: []byte("// run")},
	"runs.js":             {Data: []byte("// runs")},
	"new_run.js":          {Data: []byte("// new run")},
	"flamegraph.js":       {Data: []byte("// flame graph")},
	"format.js":           {Data: []byte("// format")},
	"flamegraph.css":      {Data: []byte("/* flame graph */")},
	"flameviews.js":       {Data: []byte("// flame views")},
	"flameviews.css":      {Data: []byte("/* flame views */")},
	"compare.js":          {Data: []byte("// compare")},
	"writepath.css":       {Data: []byte("/* write path */")},
	"favicon.ico":         {Data: []byte("icon")},
	"compare_progress.js": {Data: []byte("// compare progress")},
	"history.css":         {Data: []byte("/* history */")},
	"profile-first.css":   {Data: []byte("/* profile first frame */")},
}

func newTestUI(t *testing.T) *UI {
	t.Helper()
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return u
}

func render(t *testing.T, u *UI, page string, data any) string {
	t.Helper()
	var b bytes.Buffer
	if err := u.Render(&b, page, data); err != nil {
		t.Fatalf("Render(%s): %v", page, err)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

var (
	t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	t1 = t0.Add(3 * time.Second)
	t2 = t1.Add(65*time.Second + 400*time.Millisecond)
)

func finishedRun() *rundoc.Run {
	r := &rundoc.Run{
		ID: 42, Label: "trunk", Workload: "producer", Status: rundoc.StatusSucceeded, Source: rundoc.SourceLaunched,
		Spec:        `{"workload":"producer","params":{"num-records":1000000,"record-size":256,"throughput":-1,"profile":["cpu","heap"]}}`,
		Fingerprint: "abc", GroupID: "g7f3a9c2e1d0", GroupIndex: 2,
		Output:   "900000 records sent, 72900.123456 records/sec (17.80 MB/sec), 827.87 ms avg latency, 1456.13 ms max latency, 776 ms 50th, 1331 ms 95th, 1440 ms 99th, 1455 ms 99.9th.\n",
		Complete: true, RecordsPerSec: ptr(72900.123456), MBPerSec: ptr(17.8), P99Ms: ptr(1440.0),
		CreatedAt: t0, StartedAt: &t1, FinishedAt: &t2,
		Metrics: []rundoc.Metric{
			{Name: "record-send-rate", Value: 72900.123456, Unit: "records/s", Better: rundoc.HigherIsBetter, Help: "acknowledged records / window seconds"},
			{Name: "record-latency-p99", Value: 1440, Unit: "ms", Better: rundoc.LowerIsBetter, Help: "send → acknowledgement"},
			{Name: "batch-size-avg", Value: 16384 * 3.5, Unit: "bytes", Help: "bytes per produce batch"},
			{Name: "records-sent", Value: 900000, Unit: "records"},
		},
		Series: []rundoc.SeriesPoint{
			{T: 5, Records: 350000, Bytes: 89600000, RecordsPerSec: 70000, MBPerSec: 17.09, LatencyAvgMs: 900, LatencyMaxMs: 1456, CPUPercent: 140},
			{T: 10, Records: 400000, Bytes: 102400000, RecordsPerSec: 80000, MBPerSec: 19.53, LatencyAvgMs: 700, LatencyMaxMs: 1300, CPUPercent: 150},
			{T: 12.35, Records: 150000, Bytes: 38400000, RecordsPerSec: 63829.8, MBPerSec: 15.58, LatencyAvgMs: 850, LatencyMaxMs: 1400, CPUPercent: 120},
		},
		Profiles: []rundoc.Profile{
			{ID: 7, RunID: 42, Role: "client", Kind: "cpu", Bytes: 48213, Samples: 1234, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
			{ID: 8, RunID: 42, Role: "broker", Kind: "cpu", Bytes: 1 << 20, Samples: 98765, SHA256: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
		},
	}
	r.SetDocuments(
		`{"kbench_version":"v0.3.0","go_version":"go1.26.8","kafka_go_version":"v0.4.51","os":"linux","arch":"amd64","kernel":"6.8.0","cpu_model":"AMD EPYC 7B13","cores":2,"gomaxprocs":2,"host":"bench-1","broker":"embedded (kfake)"}`,
		`{"warmup_records":100000,"measured_records":900000,"window_seconds":12.3456,"latency_samples":900000,"cpu_samples":24,"cpu_sample_interval_ms":500,"notes":["throughput unthrottled"],"output_notes":["Kafka's line cuts latency percentiles to whole milliseconds, as Kafka's tool does: 50th 776 ms is 776.412 ms (record-latency-p50), 95th 1331 ms is 1,331.790 ms (record-latency-p95), 99.9th 1455 ms is 1,455.020 ms (record-latency-p999); the metrics and result.json hold the precise values."]}`)
	return r
}

func queuedRun() *rundoc.Run {
	return &rundoc.Run{ID: 43, Label: "branch", Workload: "consumer", Status: rundoc.StatusQueued, Source: rundoc.SourceLaunched,
		Spec: `{"workload":"consumer","params":{"mode":"assign"}}`, CreatedAt: t0.Add(time.Minute)}
}

func TestGoldenRunsPage(t *testing.T) {
	u := newTestUI(t)
	fin := *finishedRun()
	q := *queuedRun()
	warm := rundoc.Run{ID: 41, Label: "trunk", Workload: "producer", Status: rundoc.StatusFailed, GroupID: "g7f3a9c2e1d0", Warmup: true,
		Error: "boom", CreatedAt: t0.Add(-time.Minute), StartedAt: &t0, FinishedAt: ptr(t0.Add(850 * time.Millisecond))}
	v := NewRunsView([]rundoc.Run{q, fin, warm}, 123, RunsQuery{Workload: "producer", Label: "trunk", Page: 2, PerPage: 3},
		[]string{"branch", "trunk", ""})
	v.CSRF = "tok"
	v.Flash = "Run #43 queued."
	golden.Check(t, "runs.html", render(t, u, "runs", v))
}

func TestGoldenFinishedRun(t *testing.T) {
	u := newTestUI(t)
	v, err := NewRunView(finishedRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	v.CSRF = "tok"
	golden.Check(t, "run_finished.html", render(t, u, "run", v))
}

func TestGoldenQueuedRun(t *testing.T) {
	u := newTestUI(t)
	v, err := NewRunView(queuedRun(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Live || !v.Queued || v.QueueText != "position 3 in queue" {
		t.Errorf("queued view: Live %v, Queued %v, QueueText %q; want true, true, %q", v.Live, v.Queued, v.QueueText, "position 3 in queue")
	}
	v.CSRF = "tok"
	got := render(t, u, "run", v)
	for _, want := range []string{`action="/runs/43/cancel"`, `name="_csrf" value="tok"`, `data-events-url="/api/runs/43/events"`, `id="progress-bar"`, "position 3 in queue"} {
		if !strings.Contains(got, want) {
			t.Errorf("queued run page lacks %s", want)
		}
	}
	golden.Check(t, "run_queued.html", got)
}

func TestGoldenNewRunErrors(t *testing.T) {
	withFixtureFlags(t)
	u := newTestUI(t)
	values := url.Values{
		"workload":            {"consumer"},
		"label":               {"my branch"},
		"repetitions":         {"99"},
		"warmup_runs":         {"1"},
		"target":              {"bootstrap"},
		"bootstrap-server":    {"kafka-1:9092"},
		"security-protocol":   {"SASL_SSL"},
		"sasl-mechanism":      {"SCRAM-SHA-512"},
		"sasl-username":       {"alice"},
		"sasl-password":       {"s3cret-pw"},
		"messages":            {"abc"},
		"consumer-props":      {"fetch.min.bytes=1\nisolation.level=read_committed"},
		"profile":             {"none", "cpu", "mutex"},
		"show-detailed-stats": {"true"},
		"mode":                {"assign"},
	}
	errs := map[string]string{
		"repetitions":     "must be between 1 and 50",
		"messages":        `"abc" is not a whole number`,
		"consumer.config": "server-side files are not accepted",
	}
	v := NewRunForm(values, errs)
	v.CSRF = "tok"
	got := render(t, u, "new_run", v)
	golden.Check(t, "new_run_errors.html", got)
}

func TestGoldenLineChart(t *testing.T) {
	c := Chart{Title: "Latency", XLabel: "seconds", YLabel: "latency", Unit: "ms",
		Series: []ChartSeries{
			{Name: "average", X: []float64{5, 10, 15, 20}, Y: []float64{1.2, 3.4, 2.2, 0.9}},
			{Name: "maximum", X: []float64{5, 10, 15, 20}, Y: []float64{4, 9.75, 6, 3}},
		}}
	golden.Check(t, "chart.svg", string(LineChart(c))+"\n")
	golden.Check(t, "chart_empty.svg", string(LineChart(Chart{Title: "Records per second", Width: 400, Height: 200}))+"\n")
}

func TestZeroValueViews(t *testing.T) {
	for _, staticFS := range []fs.FS{static.FS, goldenStatic} {
		u, err := New(templates.FS, staticFS)
		if err != nil {
			t.Fatal(err)
		}
		views := map[string]any{
			"runs":             RunsView{},
			"run":              RunView{},
			"new_run":          NewRunFormView{},
			"error":            ErrorView{},
			"login":            LoginView{},
			"import":           ImportView{},
			"profile":          ProfileView{},
			"compare_profiles": CompareProfilesView{},
			"compare":          CompareView{},
			"report":           ReportView{},
			"writepath":        WritepathView{},
			"sweeps":           SweepView{},
			"slos":             SLOView{},
			"history":          HistoryView{},
			"regressions":      RegressionsView{},
			"pprof_local":      PprofLocalView{},
			"series":           SeriesView{},
		}
		for _, p := range u.Pages() {
			v, ok := views[p]
			if !ok {
				t.Errorf("page %s has no zero-value view in this test", p)
				continue
			}
			render(t, u, p, v)
			render(t, u, p, &v) // pointers work too
		}
		for p := range views {
			render(t, u, p, views[p])
		}
	}
}

func TestBuiltViewsRender(t *testing.T) {
	u, err := New(templates.FS, static.FS)
	if err != nil {
		t.Fatal(err)
	}
	rv, _ := NewRunView(finishedRun(), 0)
	running := finishedRun()
	running.Status = rundoc.StatusRunning
	lv, _ := NewRunView(running, 0)
	for _, c := range []struct {
		page string
		data any
	}{
		{"runs", NewRunsView(nil, 0, RunsQuery{}, nil)},
		{"runs", NewRunsView(nil, 0, RunsQuery{Status: "failed"}, nil)},
		{"run", rv},
		{"run", lv},
		{"new_run", NewRunForm(nil, nil)},
		{"error", NewErrorView(404, "run 9 not found")},
		{"error", NewErrorView(500, "")},
	} {
		got := render(t, u, c.page, c.data)
		if !strings.Contains(got, "</html>") {
			t.Errorf("%s: page incomplete", c.page)
		}
	}
}

func TestUserTextEscaped(t *testing.T) {
	u := newTestUI(t)
	const evil = `<script>alert(1)</script>`
	r := finishedRun()
	r.Label = evil
	r.Error = "failed: " + evil + ` & "quotes"`
	r.Status = rundoc.StatusFailed
	r.Output = evil
	r.Metrics = append(r.Metrics, rundoc.Metric{Name: evil, Value: 1, Unit: evil, Help: evil})
	r.Profiles[0].Role = evil
	r.SetDocuments(`{"host":"<script>alert(1)</script>"}`, `{"notes":["<script>alert(1)</script>"]}`)
	r.Spec = `{"label":"<script>alert(1)</script>"}`
	r.Series[0].RecordsPerSec = 1
	rv, err := NewRunView(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	rv.Charts = append(rv.Charts, LineChart(Chart{Title: evil, XLabel: evil, YLabel: evil, Unit: evil,
		Series: []ChartSeries{{Name: evil, X: []float64{1, 2}, Y: []float64{3, 4}}}}))
	rv.Flash = evil
	rows := NewRunsView([]rundoc.Run{*r}, 1, RunsQuery{Label: evil}, []string{evil})
	form := NewRunForm(url.Values{"label": {evil}, "topic": {evil}, "producer-props": {evil}}, map[string]string{"topic": evil, evil: evil})
	ev := NewErrorView(400, evil)
	lv := LoginView{Next: evil, Error: evil}
	for _, c := range []struct {
		page string
		data any
	}{{"run", rv}, {"runs", rows}, {"new_run", form}, {"error", ev}, {"login", lv}} {
		got := render(t, u, c.page, c.data)
		if strings.Contains(got, "<script>alert") {
			t.Errorf("%s page contains unescaped user text", c.page)
		}
		if !strings.Contains(got, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s page does not show the escaped user text", c.page)
		}
	}
	if got := render(t, u, "run", rv); !strings.Contains(got, `<pre class="error-text">failed: &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34;</pre>`) {
		t.Errorf("error text not shown escaped in a <pre>")
	}
}

func TestPasswordNeverRendered(t *testing.T) {
	u := newTestUI(t)
	const pw = "hunter2-very-secret"
	values := url.Values{"workload": {"producer"}, "sasl-password": {pw}, "sasl-username": {"bob"}}
	for _, errs := range []map[string]string{nil, {"sasl-password": "wrong"}, {"label": "bad"}} {
		v := NewRunForm(values, errs)
		got := render(t, u, "new_run", v)
		if strings.Contains(got, pw) {
			t.Errorf("errs %v: the password appears in the page", errs)
		}
		if !strings.Contains(got, `type="password" id="f-sasl-password" name="sasl-password" value=""`) {
			t.Errorf("errs %v: no empty password input", errs)
		}
		if !strings.Contains(got, `value="bob"`) {
			t.Errorf("errs %v: username not kept", errs)
		}
	}
}

var externalURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)

func TestNoExternalURLs(t *testing.T) {
	check := func(name string, fsys fs.FS) {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			s := string(data)
			for _, bad := range []string{"http://", "https://"} {
				if strings.Contains(strings.ToLower(s), bad) {
					t.Errorf("%s/%s references %s", name, p, bad)
				}
			}
			for _, m := range regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']//`).FindAllString(s, -1) {
				t.Errorf("%s/%s has a protocol-relative URL: %s", name, p, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check("templates", templates.FS)
	check("static", static.FS)

	// Rendered pages, charts included, load nothing from elsewhere either.
	u := newTestUI(t)
	rv, _ := NewRunView(finishedRun(), 0)
	for _, got := range []string{
		render(t, u, "run", rv),
		render(t, u, "runs", NewRunsView([]rundoc.Run{*finishedRun()}, 1, RunsQuery{}, nil)),
		render(t, u, "new_run", NewRunForm(nil, nil)),
	} {
		if m := externalURL.FindString(got); m != "" {
			t.Errorf("rendered page references %s", m)
		}
	}
}

// TestStrictCSP checks what a Content-Security-Policy of script-src 'self'
// (and no unsafe-inline styles) needs: no inline scripts, no inline event
// handlers, no javascript: URLs, no style attributes.
func TestStrictCSP(t *testing.T) {
	u := newTestUI(t)
	rv, _ := NewRunView(finishedRun(), 0)
	lv, _ := NewRunView(queuedRun(), 1)
	pages := map[string]string{
		"run":     render(t, u, "run", rv),
		"live":    render(t, u, "run", lv),
		"runs":    render(t, u, "runs", NewRunsView([]rundoc.Run{*finishedRun()}, 1, RunsQuery{}, nil)),
		"new_run": render(t, u, "new_run", NewRunForm(nil, map[string]string{"label": "x"})),
		"error":   render(t, u, "error", NewErrorView(500, "x")),
		"login":   render(t, u, "login", LoginView{Error: "wrong token"}),
		"import":  render(t, u, "import", ImportView{Error: "profile: x.txt: not a profile"}),
	}
	inlineScript := regexp.MustCompile(`<script(\s[^>]*)?>`)
	handler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	for name, got := range pages {
		for _, tag := range inlineScript.FindAllString(got, -1) {
			if !strings.Contains(tag, ` src="/static/`) {
				t.Errorf("%s: inline or foreign script %s", name, tag)
			}
		}
		if m := handler.FindString(got); m != "" {
			t.Errorf("%s: inline event handler %q", name, m)
		}
		if strings.Contains(got, "javascript:") || strings.Contains(got, " style=") {
			t.Errorf("%s: javascript: URL or style attribute", name)
		}
	}
}

// TestPostFormsHaveCSRF checks every POST form carries the _csrf field.
func TestPostFormsHaveCSRF(t *testing.T) {
	u := newTestUI(t)
	lv, _ := NewRunView(queuedRun(), 1)
	lv.CSRF = "tok-123"
	form := NewRunForm(nil, nil)
	form.CSRF = "tok-123"
	forms := regexp.MustCompile(`(?s)<form[^>]*method="post"[^>]*>.*?</form>`)
	n := 0
	login := LoginView{Page: Page{CSRF: "tok-123"}, Next: "/runs/1"}
	for _, got := range []string{render(t, u, "run", lv), render(t, u, "new_run", form), render(t, u, "login", login)} {
		for _, f := range forms.FindAllString(got, -1) {
			n++
			if !strings.Contains(f, `<input type="hidden" name="_csrf" value="tok-123">`) {
				t.Errorf("POST form without _csrf: %.120s…", f)
			}
		}
	}
	if n != 3 {
		t.Errorf("found %d POST forms, want 3 (cancel, new run, login)", n)
	}
}

func TestNewFailsFast(t *testing.T) {
	good, err := fs.Sub(templates.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		data, err := fs.ReadFile(good, name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	base := func() fstest.MapFS {
		m := fstest.MapFS{}
		for _, n := range []string{"layout.html", "runs.html", "run.html", "new_run.html", "error.html", "_abtest.html"} {
			m[n] = &fstest.MapFile{Data: read(n)}
		}
		return m
	}
	broken := base()
	broken["run.html"] = &fstest.MapFile{Data: []byte(`{{define "content"}}{{.Oops`)}
	missing := base()
	delete(missing, "error.html")
	noLayout := base()
	delete(noLayout, "layout.html")
	badEscape := base()
	badEscape["run.html"] = &fstest.MapFile{Data: []byte(`{{define "content"}}<a {{if .ID}}href="{{else}}title="{{end}}x">{{end}}`)}
	noContent := base()
	noContent["extra.html"] = &fstest.MapFile{Data: []byte(`hello`)}
	for name, fsys := range map[string]fstest.MapFS{"broken": broken, "escaping": badEscape, "missing page": missing, "no layout": noLayout, "no content": noContent} {
		if _, err := New(fsys, goldenStatic); err == nil {
			t.Errorf("%s: New succeeded, want an error", name)
		}
	}
	if _, err := New(base(), goldenStatic); err != nil {
		t.Errorf("New with every template: %v", err)
	}

	u := newTestUI(t)
	if err := u.Render(&bytes.Buffer{}, "nope", nil); err == nil {
		t.Error("Render of an unknown page succeeded")
	}
	// A missing static file fails at render time, never silently.
	u2, err := New(templates.FS, fstest.MapFS{"app.css": {Data: []byte("")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := u2.Render(&bytes.Buffer{}, "runs", RunsView{}); err == nil {
		t.Error("Render with runs.js missing succeeded")
	}
}
