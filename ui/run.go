package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// RunView is a run's page. While the run is queued or running (Live) it
// shows progress fed by run.js over Server-Sent Events; once final, its
// result: output, metrics, charts, how it was measured, where, and the
// profiles.
type RunView struct {
	Page
	ID uint
	// Regressions badge the run when its series regressed at it.
	Regressions []RegressionBadge
	Label       string
	Workload    string
	Status      string
	StatusClass string
	Source      string
	Error       string
	Created     string
	Started     string
	Finished    string
	Duration    string
	Group       string // "a1b2c3d4 rep 2", "a1b2c3d4 warm-up" or ""
	GroupTitle  string
	GroupURL    string // the runs list narrowed to the group
	// Meta are the run's tags, commit, branch and version first, then
	// the others by key. Ran is when an imported run happened (its
	// given time), "" for a launched run, whose start says it. Series is
	// the run's series key.
	Meta   []MetaTag
	Ran    string
	Series string
	// HistoryURL is the history of the run's series (in its headline
	// metric), "" for a run without a series.
	HistoryURL string

	// Fleet is the section of a fleet run's parent (SetFleet), nil for
	// any other run. A parent's page does not follow it live: no process
	// of its own reports progress.
	Fleet *FleetView

	Queued        bool
	QueuePosition int
	QueueText     string // "position 3 in queue"

	// Live is true while the run may still change (queued or running):
	// the page then shows progress, live charts, live output and a Cancel
	// form, and run.js subscribes to EventsURL. NewRunView sets it to
	// !run.Final(); the server may override it.
	Live  bool
	Final bool
	// The live progress line: Elapsed since the run started, and
	// LeftLabel Left, the time left ("left", for a run of --duration:
	// what remains of its measured window) or the ETA of a run of a
	// count (from its progress). The server renders them (SetLiveTiming)
	// and run.js keeps them current from StartedAtMs (0 while queued),
	// ServerNowMs (the page's clock, against the browser's) and
	// RunSeconds (the run's --duration; "" for a count).
	Elapsed, Left, LeftLabel string
	StartedAtMs, ServerNowMs int64
	RunSeconds               string
	EventsURL                string
	CancelURL                string
	// DeleteURL is where the Delete form of a final run posts. UsedBy are
	// the reports that use the run: while there are any the page names
	// them instead of offering the form (SetUsedBy fills it in).
	DeleteURL string
	UsedBy    []ReportLink
	// LiveCharts are the live section's chart boxes as the page first
	// shows them (LiveChartsOf); run.js refreshes them from
	// LiveChartsURL as intervals arrive.
	LiveCharts    template.HTML
	LiveChartsURL string

	// Complete is false when the run stopped before its result was whole.
	Complete bool
	// Incomplete marks a final run whose result is partial or missing.
	Incomplete bool

	Output string
	// HideEmpty leaves out the sections with nothing to show: set for
	// imported runs, where an empty one only says what was not imported,
	// and kept off for kbench's own runs, where it says the run recorded
	// nothing.
	HideEmpty bool
	// ProfilesOnly: an import of profiles alone (no Kafka tool output),
	// whose page says so instead of showing empty sections.
	ProfilesOnly bool
	// NoIntervals: the run has no interval series (Charts are empty).
	NoIntervals bool
	// OutputNotes say, with the run's numbers, where Kafka's output shows
	// other figures than the metrics (whole-millisecond times and
	// percentiles, as Kafka computes them); shown beside the output.
	OutputNotes []string
	// Warnings say why some figures deserve less trust: a short window,
	// percentiles on few samples (compare.RunWarnings).
	Warnings []string
	// EmbeddedNote says the run ran on the embedded broker, and what it
	// cannot measure there (rundoc.EmbeddedBrokerNote); "" otherwise.
	EmbeddedNote string
	KeyFigures   []DefItem
	Metrics      []MetricRow
	Charts       []template.HTML
	// Spectra are the run's latency histograms drawn by percentile
	// (SetHistograms), and its quantile curves (an OMB import's) beside
	// them, SpectraCurves saying so; HistogramsURL is the histograms'
	// API, "" when the run has none.
	Spectra       []template.HTML
	SpectraCurves bool
	HistogramsURL string
	// OMBURL is the run as an OpenMessaging Benchmark result (omb.json),
	// for OMB's chart scripts; "" until the run is final.
	OMBURL string
	// curves are the run's quantile curves (its measurement's).
	curves      []rundoc.QuantileCurve
	Measurement []DefItem
	Notes       []string
	Environment []DefItem
	// Config is the client configuration the run recorded, after
	// defaults (environment.config), its mode first; ConfigRecorded is
	// false when there is none (imported runs, older runs).
	Config         []DefItem
	ConfigRecorded bool
	// APIVersions are the ranges the target answered to ApiVersions,
	// "Produce (key 0)": "3–11"; APIVersionsFrom the server that answered.
	APIVersions     []DefItem
	APIVersionsFrom string
	// Raw JSON shown as is when it could not be decoded.
	MeasurementRaw string
	EnvironmentRaw string
	Spec           string // pretty-printed JSON
	Profiles       []ProfileRow
	// FlameGraph is the run's first CPU profile (the client's first),
	// drawn inline; nil when the run has no CPU profile.
	FlameGraph *RunFlameGraph
	// ProfileWindows, when set, are the windows of the run's windowed
	// client CPU profile (SetProfileWindows): a drag over an interval
	// chart links to the flame graph of the windows it covers.
	ProfileWindows *ProfileWindows
}

// ProfileWindows is what the run page's script needs to turn a time
// range into a windowed profile's selection: the windows' names
// ("0-2 2-4 …"), the profile's page and its flame graph API.
type ProfileWindows struct {
	Names      string
	ProfileURL string
	FlameAPI   string
}

// WindowRange is one window of a windowed profile: its label value
// ("10-12") and the whole seconds it spans.
type WindowRange struct {
	Name       string
	Start, End int
}

// SetProfileWindows records the windows of profile id, the run's
// windowed client CPU profile; none leaves the page without selection.
func (v *RunView) SetProfileWindows(id uint, windows []WindowRange) {
	if len(windows) == 0 {
		return
	}
	names := make([]string, len(windows))
	for i, w := range windows {
		names[i] = w.Name
	}
	v.ProfileWindows = &ProfileWindows{Names: strings.Join(names, " "), ProfileURL: ProfileURL(id),
		FlameAPI: "/api/profiles/" + strconv.FormatUint(uint64(id), 10) + "/flamegraph"}
}

// ReportLink names a report and links to it.
type ReportLink struct {
	Title string
	URL   string
}

// SetUsedBy records the reports that use the run (store.ReportsUsingRun).
func (v *RunView) SetUsedBy(reports []rundoc.Report) {
	v.UsedBy = nil
	for _, r := range reports {
		title := r.Title
		if title == "" {
			title = "report " + r.Slug
		}
		v.UsedBy = append(v.UsedBy, ReportLink{Title: title, URL: ReportURL(r.Slug, "")})
	}
}

// DefItem is one term and value of a definition list.
type DefItem struct {
	Term  string
	Value string
}

// MetricRow is one line of a run's metrics table.
type MetricRow struct {
	Name  string
	Value string // formatted with its unit
	Unit  string
	Arrow string // ↑, ↓ or ""
	// Better says which way is better, in words ("higher is better").
	Better rundoc.Better
	Help   string
}

// ProfileRow is one profile of a run.
type ProfileRow struct {
	ID          uint
	Role        string
	Kind        string
	Size        string
	Samples     string
	SHA256      string
	SHA256Short string
	DownloadURL string
	FileName    string // the download attribute: run12-client-cpu.pb.gz
	URL         string // the profile's page, with its flame graph
}

// ProfileDownloadURL is where a profile's gzipped pprof bytes are served.
func ProfileDownloadURL(id uint) string {
	return "/api/profiles/" + strconv.FormatUint(uint64(id), 10) + "/download"
}

// ProfileFileName is the file name a profile downloads as.
func ProfileFileName(runID uint, role, kind string) string {
	return "run" + strconv.FormatUint(uint64(runID), 10) + "-" + fileSafe(role) + "-" + fileSafe(kind) + ".pb.gz"
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func fileSafe(s string) string {
	s = unsafeFileChars.ReplaceAllString(s, "_")
	if s == "" {
		return "_"
	}
	return s
}

// NewRunView builds a run's page. queuePosition is the run's 1-based place
// in the queue (0 when unknown or not queued). Stored JSON that does not
// decode is shown raw rather than failing the page; the error is for a
// nil run.
func NewRunView(run *rundoc.Run, queuePosition int) (RunView, error) {
	if run == nil {
		return RunView{}, errors.New("ui: no run")
	}
	r := run
	v := RunView{
		Page:        Page{Title: "Run #" + strconv.FormatUint(uint64(r.ID), 10)},
		ID:          r.ID,
		Label:       r.Label,
		Workload:    string(r.Workload),
		Status:      string(r.Status),
		StatusClass: statusClass(r.Status),
		Source:      string(r.Source),
		Error:       r.Error,
		Created:     FormatTime(r.CreatedAt),
		Started:     formatTimePtr(r.StartedAt),
		Finished:    formatTimePtr(r.FinishedAt),
		Duration:    runDuration(r),
		Final:       r.Final(),
		Live:        !r.Final(),
		Complete:    r.Complete,
		Incomplete:  r.Final() && !r.Complete,
		Output:      r.Output,
		EventsURL:   "/api/runs/" + strconv.FormatUint(uint64(r.ID), 10) + "/events",
		CancelURL:   runURL(r.ID) + "/cancel",
	}
	if r.Final() {
		v.DeleteURL = runURL(r.ID) + "/delete"
	}
	v.Elapsed, v.Left, v.LeftLabel = dash, dash, "ETA"
	if r.StartedAt != nil {
		v.StartedAtMs = r.StartedAt.UnixMilli()
	}
	if d := specDuration(r.Spec); d > 0 {
		v.RunSeconds, v.LeftLabel = strconv.FormatFloat(d, 'f', -1, 64), "left"
	}
	v.Meta, v.Series = metaTags(r.Meta), r.SeriesKey
	if r.SeriesKey != "" {
		v.HistoryURL = RunHistoryURL(r.ID)
	}
	if r.Source == rundoc.SourceImported && !r.Time.IsZero() {
		v.Ran = FormatTime(r.Time)
	}
	if r.Label != "" {
		v.Title += " · " + r.Label
	}
	v.Group, v.GroupTitle = groupMarker(r)
	if r.GroupID != "" {
		v.GroupURL = RunsQuery{Group: r.GroupID}.URL()
	}
	if r.Status == rundoc.StatusQueued {
		v.Queued = true
		v.QueuePosition = queuePosition
		if queuePosition > 0 {
			v.QueueText = "position " + strconv.Itoa(queuePosition) + " in queue"
		} else {
			v.QueueText = "waiting in the queue"
		}
	}

	if r.RecordsPerSec != nil {
		v.KeyFigures = append(v.KeyFigures, DefItem{"Throughput", FormatValue(*r.RecordsPerSec, "records/s")})
	}
	if r.MBPerSec != nil {
		v.KeyFigures = append(v.KeyFigures, DefItem{"Data rate", FormatValue(*r.MBPerSec, "MB/s")})
	}
	if r.P99Ms != nil {
		v.KeyFigures = append(v.KeyFigures, DefItem{"p99 latency", FormatValue(*r.P99Ms, "ms")})
	}

	for _, m := range r.Metrics {
		row := MetricRow{Name: m.Name, Value: FormatValue(m.Value, m.Unit), Unit: m.Unit, Help: m.Help}
		switch m.Better {
		case rundoc.HigherIsBetter:
			row.Arrow, row.Better = "↑", "higher is better"
		case rundoc.LowerIsBetter:
			row.Arrow, row.Better = "↓", "lower is better"
		}
		v.Metrics = append(v.Metrics, row)
	}

	series := r.Series
	v.Charts = seriesCharts(chartSeries(r.Series))
	if m := r.Measurement; m != nil {
		v.curves = m.Curves
		v.Charts = append(v.Charts, windowCharts(m.Windows)...)
	}
	if r.Final() {
		v.OMBURL = "/api/runs/" + strconv.FormatUint(uint64(r.ID), 10) + "/omb.json"
	}
	v.NoIntervals = len(series) == 0
	v.HideEmpty = r.Source == rundoc.SourceImported
	v.ProfilesOnly = v.HideEmpty && r.Output == "" && len(r.Metrics) == 0 && len(r.Series) == 0 && len(r.Profiles) > 0
	if v.Live {
		v.LiveCharts, v.LiveChartsURL = LiveChartsOf(r), LiveChartsURL(r.ID)
	}

	for _, w := range compare.RunWarnings(*r) {
		v.Warnings = append(v.Warnings, w.Text)
	}
	if r.DocumentErr != nil {
		// Show what was stored, as stored, rather than nothing: each
		// document that did not decode (the other is shown as read).
		if r.Measurement == nil {
			v.MeasurementRaw = r.Documents.Measurement
		}
		if r.Environment == nil {
			v.EnvironmentRaw = r.Documents.Environment
		}
	}
	if m := r.Measurement; m != nil {
		v.Measurement, v.Notes = measurementItems(*m, r.Metrics)
		v.OutputNotes = m.OutputNotes
		if !r.MeasuredByKbench() {
			// kbench measured nothing of imported tool output: only what
			// the importer noted about the output is true.
			v.Measurement = nil
		}
	}
	if e := r.Environment; e != nil {
		v.Environment = environmentItems(*e)
		v.setConfig(*e)
	}
	if r.OnEmbeddedBroker() {
		v.EmbeddedNote = rundoc.EmbeddedBrokerNote
	}
	v.Spec = prettyJSON(r.Spec)

	for _, p := range r.Profiles {
		row := ProfileRow{
			ID:          p.ID,
			Role:        string(p.Role),
			Kind:        string(p.Kind),
			Size:        FormatBytes(p.Bytes),
			Samples:     FormatInt(p.Samples),
			SHA256:      p.SHA256,
			SHA256Short: p.SHA256,
			DownloadURL: ProfileDownloadURL(p.ID),
			FileName:    ProfileFileName(r.ID, string(p.Role), string(p.Kind)),
			URL:         ProfileURL(p.ID),
		}
		if len(row.SHA256Short) > 12 {
			row.SHA256Short = row.SHA256Short[:12]
		}
		v.Profiles = append(v.Profiles, row)
	}
	v.FlameGraph = runFlameGraph(v.Profiles)
	return v, nil
}

// Volatile reports whether the page changes with the time alone (a live
// run's elapsed time): such a page is rendered afresh every time.
func (v RunView) Volatile() bool { return v.Live }

// specDuration is a stored spec's --duration in seconds; 0 for a run of
// a count, and for a spec that does not read.
func specDuration(spec string) float64 {
	file, err := rundoc.ParseSpecFile([]byte(spec))
	if err != nil {
		return 0
	}
	var d float64
	if raw, ok := file.Params["duration"]; !ok || json.Unmarshal(raw, &d) != nil {
		return 0
	}
	return d
}

// SetLiveTiming renders a live run's progress line at now: the time since
// it started and, for a run of --duration, the time left. phase and
// window are its latest progress ("measure" and the measured window's
// seconds, as the run reports them; "" when none came yet): while it
// measures, the time left is what remains of the window; before, the
// whole duration is still to come after the start-up or warm-up.
func (v *RunView) SetLiveTiming(now time.Time, phase string, window float64) {
	v.ServerNowMs = now.UnixMilli()
	if !v.Live || v.StartedAtMs == 0 {
		return
	}
	elapsed := now.Sub(time.UnixMilli(v.StartedAtMs))
	v.Elapsed = FormatDuration(elapsed.Round(time.Second))
	d, err := strconv.ParseFloat(v.RunSeconds, 64)
	if err != nil || d <= 0 {
		return
	}
	total := time.Duration(d * float64(time.Second))
	switch phase {
	case "measure":
		left := total - time.Duration(window*float64(time.Second))
		if left <= 0 {
			v.Left = "any moment"
			return
		}
		v.Left = FormatDuration(left.Round(time.Second))
	case "finishing":
		v.Left = "any moment"
	case "warmup", "prefill":
		v.Left = FormatDuration(total) + " after the warm-up"
	default:
		v.Left = FormatDuration(total) + " after start-up"
	}
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return dash
	}
	return FormatTime(*t)
}

// windowAxis labels the X axis of every interval chart.
const windowAxis = "seconds into the measured window"

// maxChartPoints bounds the points a line of an interval chart draws: about
// one per pixel of a chart's plot area. A longer series (a run keeps up to
// rundoc.MaxSeriesPoints) is drawn with consecutive intervals merged
// (rundoc.MergeSeries: records add up, rates are averaged over time, maxima
// kept), which keeps pages small and loses nothing the width could show.
// The live charts have the same bound.
const maxChartPoints = 600

// chartSeries is what a chart draws of a stored series: in order, merged
// down to maxChartPoints.
func chartSeries(stored []rundoc.SeriesPoint) []rundoc.SeriesPoint {
	// A run's series is in time order (rundoc.Run.Series).
	if len(stored) <= maxChartPoints {
		return stored
	}
	return rundoc.MergeSeries(stored, (len(stored)+maxChartPoints-1)/maxChartPoints)
}

// seriesCharts draws a run's interval series: records/s, MB/s, and
// latency and CPU when the run recorded them.
func seriesCharts(pts []rundoc.SeriesPoint) []template.HTML {
	if len(pts) == 0 {
		return []template.HTML{LineChart(Chart{Title: "Interval data", XLabel: windowAxis})}
	}
	n := len(pts)
	t := make([]float64, n)
	rps, mbs, avg, mx, cpu := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	p50, p99, p999 := make([]float64, n), make([]float64, n), make([]float64, n)
	hasLatency, hasCPU, hasPercentiles, approx := false, false, false, false
	for i, p := range pts {
		t[i], rps[i], mbs[i], avg[i], mx[i], cpu[i] = p.T, p.RecordsPerSec, p.MBPerSec, p.LatencyAvgMs, p.LatencyMaxMs, p.CPUPercent
		p50[i], p99[i], p999[i] = p.LatencyP50Ms, p.LatencyP99Ms, p.LatencyP999Ms
		hasLatency = hasLatency || p.LatencyAvgMs > 0 || p.LatencyMaxMs > 0
		hasPercentiles = hasPercentiles || p.LatencyP50Ms > 0
		approx = approx || p.PercentilesApprox
		hasCPU = hasCPU || p.CPUPercent > 0
	}
	charts := []template.HTML{
		LineChart(Chart{Title: "Records per second", XLabel: windowAxis, YLabel: "throughput", Unit: "records/s",
			Series: []ChartSeries{{Name: "records/s", X: t, Y: rps}}, Selectable: true}),
		LineChart(Chart{Title: "MB per second", XLabel: windowAxis, YLabel: "data rate", Unit: "MB/s",
			Series: []ChartSeries{{Name: "MB/s", X: t, Y: mbs}}, Selectable: true}),
	}
	if hasLatency {
		lines := []ChartSeries{{Name: "average", X: t, Y: avg}}
		title := "Latency"
		if hasPercentiles {
			lines = append(lines, ChartSeries{Name: "p50", X: t, Y: p50}, ChartSeries{Name: "p99", X: t, Y: p99}, ChartSeries{Name: "p99.9", X: t, Y: p999})
			if approx {
				// A merged point cannot know its percentiles: it draws the
				// largest of those it merges.
				title = "Latency (percentiles of merged intervals are their parts' largest: upper bounds)"
			}
		}
		lines = append(lines, ChartSeries{Name: "maximum", X: t, Y: mx})
		charts = append(charts, LineChart(Chart{Title: title, XLabel: windowAxis, YLabel: "latency", Unit: "ms",
			Series: lines, Selectable: true}))
	}
	if hasCPU {
		charts = append(charts, LineChart(Chart{Title: "Process CPU", XLabel: windowAxis, YLabel: "CPU", Unit: "%",
			Series: []ChartSeries{{Name: "CPU", X: t, Y: cpu}}, Selectable: true}))
	}
	return charts
}

// measurementItems lists how the figures were taken; the sample counts
// name the figures that rest on them (compare.SampledFigures).
func measurementItems(m rundoc.Measurement, metrics []rundoc.Metric) ([]DefItem, []string) {
	latencyFigures, cpuFigures := compare.SampledFigures(metrics)
	behind := func(names []string) string {
		if len(names) == 0 {
			return ""
		}
		return " (behind " + strings.Join(names, ", ") + ")"
	}
	num := FormatInt
	items := []DefItem{{"Warm-up records", num(m.WarmupRecords) + " (not measured)"}}
	if m.PrefillRecords > 0 {
		items = append(items, DefItem{"Prefill records", num(m.PrefillRecords)})
	}
	items = append(items,
		DefItem{"Measured records", num(m.MeasuredRecords)},
		DefItem{"Measured window", FormatNumber(m.WindowSeconds) + " s"},
	)
	if m.LatencySamples > 0 {
		items = append(items, DefItem{"Latency samples", num(m.LatencySamples) + behind(latencyFigures)})
	}
	cpu := num(int64(m.CPUSamples))
	if m.CPUSampleMs > 0 {
		cpu += ", one every " + FormatDuration(time.Duration(m.CPUSampleMs)*time.Millisecond)
	}
	items = append(items, DefItem{"CPU samples", cpu + behind(cpuFigures)})
	return items, m.Notes
}

func environmentItems(e rundoc.Environment) []DefItem {
	var items []DefItem
	add := func(term, value string) {
		if value != "" {
			items = append(items, DefItem{term, value})
		}
	}
	count := func(n int) string {
		if n <= 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	add("kbench", e.KbenchVersion)
	add("kbench build", e.KbenchBuild)
	add("Go", e.GoVersion)
	add("kafka-go", e.KafkaGoVersion)
	osArch := e.OS
	if e.Arch != "" {
		osArch = strings.TrimPrefix(osArch+"/"+e.Arch, "/")
	}
	add("OS/arch", osArch)
	add("Kernel", e.Kernel)
	add("CPU model", e.CPUModel)
	add("Cores", count(e.Cores))
	add("GOMAXPROCS", count(e.GOMAXPROCS))
	add("Host", e.Host)
	if la := e.LoadAverage; la != nil {
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
		add("Load average at start", f(la.Load1)+", "+f(la.Load5)+", "+f(la.Load15)+" (1, 5, 15 min)")
	}
	add("Broker", e.Broker)
	if t := e.Target; t != nil {
		add("Target", t.Kind)
		add("Broker release", t.ReleaseGuess)
	}
	return items
}

// setConfig fills in the recorded configuration and API ranges.
func (v *RunView) setConfig(e rundoc.Environment) {
	if c := e.Config; c != nil {
		v.ConfigRecorded = true
		if c.Mode != "" {
			v.Config = append(v.Config, DefItem{"Mode", c.Mode})
		}
		for _, s := range c.Settings {
			v.Config = append(v.Config, DefItem{s.Name, s.Value})
		}
	}
	if t := e.Target; t != nil {
		v.APIVersionsFrom = t.APIVersionsFrom
		for _, a := range t.APIVersions {
			name := a.Name
			if name == "" {
				name = "API"
			}
			v.APIVersions = append(v.APIVersions, DefItem{fmt.Sprintf("%s (key %d)", name, a.Key), fmt.Sprintf("%d–%d", a.Min, a.Max)})
		}
	}
}

// prettyJSON indents stored JSON, or returns it unchanged if it is not JSON.
func prettyJSON(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}

// MetaTag is one key=value of a run's metadata.
type MetaTag struct{ Key, Value string }

// metaTags lists metadata for the page: the well-known keys first, in
// the order a reader looks for them, then the others by key.
func metaTags(m map[string]string) []MetaTag {
	var out []MetaTag
	known := []string{rundoc.MetaCommit, rundoc.MetaBranch, rundoc.MetaVersion}
	for _, k := range known {
		if v, ok := m[k]; ok {
			out = append(out, MetaTag{k, v})
		}
	}
	var rest []string
	for k := range m {
		if !slices.Contains(known, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, MetaTag{k, m[k]})
	}
	return out
}

// SetHistograms draws the run's whole-window latency histograms by
// percentile, with its quantile curves beside them; a histogram that
// does not decode is said in the run's warnings instead.
func (v *RunView) SetHistograms(hs []rundoc.Histogram) {
	if len(hs) == 0 && len(v.curves) == 0 {
		return
	}
	charts, problems := runSpectrumCharts(hs, v.curves)
	v.Spectra, v.SpectraCurves = charts, len(v.curves) > 0
	if len(hs) > 0 {
		v.HistogramsURL = "/api/runs/" + uintStr(v.ID) + "/histograms"
	}
	for _, p := range problems {
		v.Warnings = append(v.Warnings, "a stored latency histogram cannot be drawn: "+p)
	}
}

// SetFleet makes v the page of a fleet's parent: its fleet section, and
// no live progress (the shards' pages have theirs).
func (v *RunView) SetFleet(f *FleetView) {
	v.Fleet = f
	if f != nil {
		v.Live = false
	}
}
