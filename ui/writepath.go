package ui

import (
	"fmt"
	"github.com/kbench/kbench/internal/numfmt"
	"net/url"
	"sort"
	"strings"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/internal/rundoc"
)

// Paths and fields of the write-path lab.
const (
	WritepathPath      = "/writepath"
	WPFieldRecords     = "records-per-request"
	WPFieldRecordSize  = "record-size"
	WPFieldRequests    = "requests"
	WPFieldRepetitions = "repetitions"
	WPFieldInFlight    = "in-flight"
	WPFieldSink        = "sink"
	WPFieldDuration    = "duration"
	writepathTitle     = "Write-path lab"
	// wpBaseline is the strategy every other is compared with.
	wpBaseline = rundoc.StrategyGather
)

// WPDefaultSeconds is how long each run of the preset measures unless a
// number of requests is given: one second over the shortest window whose
// figures are not flagged (compare.MinWindowSeconds), so that the
// preset's defaults raise no "short window" warning. The window only ever
// lasts longer than the duration asked; the second is margin for the
// stored window's rounding.
const WPDefaultSeconds = compare.MinWindowSeconds + 1

// WritepathResultURL is the page of one preset batch.
func WritepathResultURL(batch string) string { return WritepathPath + "/" + batch }

// WPField is one input of the preset's form.
type WPField struct {
	Name, ID, Label, Value, Placeholder, Help, Error string
	Min, Max                                         string
	// Errors are every message of the field; Error is set when any.
	Errors []string
}

// WPRunStatus is one run of a batch, for the progress list.
type WPRunStatus struct {
	Link       RunLink
	Strategy   string
	Repetition int
	Status     string
	Error      string
}

// WPRatio is one strategy's medians and their ratio to gather's.
type WPRatio struct {
	Strategy        string
	Baseline        bool
	RequestsPerSec  string
	RequestsRatio   string
	SyscallsPerReq  string
	SyscallsRatio   string
	BytesPerSyscall string
	// CPUPerRequest is the client's CPU time per answered request, in
	// µs (process-cpu-seconds / requests-sent of each run, the median
	// of the runs), and CPURatio its ratio to gather's: what a strategy
	// costs the client whatever the request rate it reached.
	CPUPerRequest string
	CPURatio      string
}

// WPPanel is one strategy's write-path panel, from the client CPU profile
// of its first run that has one.
type WPPanel struct {
	Strategy   string
	ProfileURL string
	Paths      *WritePathsView
	// WritesPerRequest is the median of the strategy's measured
	// write-syscalls-per-request ("" when unknown). A profile shows which
	// system call wrote (writev, or write of one buffer), not how many a
	// request took: copy's one write per request and per-buffer's one per
	// buffer are both "single", and only this figure tells them apart.
	WritesPerRequest string
	// OneWrite: WritesPerRequest is 1 (the template's singular).
	OneWrite bool
}

// WritepathView is /writepath (the explanation and the preset's form) and
// /writepath/<batch> (Result: the batch's progress, then its comparison).
type WritepathView struct {
	Page
	Action      string
	Fields      []WPField
	Sink        bool
	Errors      []FormError
	Strategies  []string
	Result      bool
	Batch       string
	Refresh     bool // some run is not final: the page reloads itself
	Runs        []WPRunStatus
	Done, Total int
	Table       ComparisonTable
	HasTable    bool
	Ratios      []WPRatio
	Panels      []WPPanel
	// DiffURL compares per-buffer's client CPU profile with gather's;
	// NoDiff says why there is none.
	DiffURL string
	NoDiff  string
	// Diff is the same differential flame graph, drawn on the page.
	Diff *FlameGraph
	// HasJava: the batch has Java strategies' runs; JavaDiffURL and
	// JavaDiff compare java-per-buffer's wall profile with java-gather's,
	// NoJavaDiff says why there is none.
	HasJava     bool
	JavaDiffURL string
	JavaDiff    *FlameGraph
	NoJavaDiff  string
	// NoJava, on the form, says why the preset leaves the Java strategies
	// out (no JDK here); "" when it runs them.
	NoJava string
	// DefaultSeconds is WPDefaultSeconds, for the form's explanation.
	DefaultSeconds string
	// Past lists earlier batches of the lab, newest first, on the form's
	// page; PastMore says that older ones exist beyond them.
	Past     []WPBatchRow
	PastMore bool
	// SaveTitle is the default title of the batch's report; SaveRuns
	// its runs ("1,2,3"), compared by label (Save as report).
	SaveTitle, SaveRuns string
	// NoSave says why the batch cannot be saved as a report ("" when
	// it can: SaveRuns is set).
	NoSave string
}

// SetStrategies sets the strategies the preset runs and, when the Java
// ones are left out, why (noJava, jdk.Find's error).
func (v *WritepathView) SetStrategies(strategies []string, noJava error) {
	v.Strategies = strategies
	if noJava != nil {
		v.NoJava = "The Java strategies (" + strings.Join(rundoc.JavaWritepathStrategies(), ", ") + ") are left out: this server found no JDK (" + noJava.Error() + ")."
	}
}

// NewWritepathForm builds the lab's page with its form; values are what
// was submitted (empty: the defaults), errs the bad fields' messages.
func NewWritepathForm(values url.Values, errs map[string]string) WritepathView {
	fresh := len(values) == 0
	v := WritepathView{Page: Page{Title: writepathTitle}, Action: WritepathPath, Strategies: rundoc.WritepathStrategies(),
		Sink: fresh || isTrue(values.Get(WPFieldSink)), DefaultSeconds: FormatNumber(WPDefaultSeconds)}
	for _, f := range []WPField{
		{Name: WPFieldRecords, Label: "Records per request", Placeholder: "16", Min: "1",
			Help: "each record is its own buffer, plus a request header and a record-batch header"},
		{Name: WPFieldRecordSize, Label: "Record size (bytes)", Placeholder: "256", Min: "1"},
		{Name: WPFieldDuration, Label: "Seconds per run", Placeholder: FormatNumber(WPDefaultSeconds), Min: "0.001",
			Help: fmt.Sprintf("the measured window of each run; shorter than %s s and its figures are flagged as unreliable", FormatNumber(compare.MinWindowSeconds))},
		{Name: WPFieldRequests, Label: "Requests per run", Placeholder: "none", Min: "1",
			Help: "instead of seconds: a fixed amount of work per run (leave seconds empty)"},
		{Name: WPFieldInFlight, Label: "Requests in flight", Placeholder: "5", Min: "1", Max: "1024"},
		{Name: WPFieldRepetitions, Label: "Repetitions per strategy", Placeholder: "3", Min: "1", Max: "10",
			Help: "runs are interleaved across strategies, so noise hits all alike; 4 or more per strategy allow a significance test"},
	} {
		f.ID = fieldID(f.Name)
		f.Value = values.Get(f.Name)
		if msg, ok := errs[f.Name]; ok {
			f.Errors = ErrorLines(msg)
			f.Error = strings.Join(f.Errors, " ")
			for _, m := range f.Errors {
				v.Errors = append(v.Errors, FormError{Field: f.Name, Label: f.Label, Message: m, Anchor: "#" + f.ID})
			}
		}
		v.Fields = append(v.Fields, f)
	}
	var other []string
	for name := range errs {
		if !contains([]string{WPFieldRecords, WPFieldRecordSize, WPFieldDuration, WPFieldRequests, WPFieldInFlight, WPFieldRepetitions}, name) {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	for _, name := range other {
		for _, m := range ErrorLines(errs[name]) {
			v.Errors = append(v.Errors, FormError{Field: name, Label: name, Message: m})
		}
	}
	return v
}

// AllFinal reports whether every run has finished, one way or another.
func AllFinal(runs []rundoc.Run) bool {
	for _, r := range runs {
		if !r.Status.Final() {
			return false
		}
	}
	return true
}

// WritepathProfile is the profile of a write-path run's client that the
// lab shows: its CPU profile, or for a Java strategy the JVM's wall
// profile (Flight Recorder's samples of the window); 0 without either.
func WritepathProfile(r *rundoc.Run) uint {
	if id := clientCPU(r); id != 0 {
		return id
	}
	for _, p := range r.Profiles {
		if p.Role == rundoc.RoleClient && p.Kind == rundoc.KindWall {
			return p.ID
		}
	}
	return 0
}

// NewWritepathResult builds a batch's page. table is nil while runs are
// unfinished; panels maps strategies to their write-path reports.
func NewWritepathResult(batch string, runs []rundoc.Run, table *compare.Table, panels map[string]*WritePaths) WritepathView {
	v := WritepathView{Page: Page{Title: "Write-path comparison"}, Result: true, Batch: batch, Total: len(runs)}
	for i := range runs {
		r := &runs[i]
		v.Runs = append(v.Runs, WPRunStatus{Link: runLink(r), Strategy: r.Label, Repetition: r.GroupIndex, Status: string(r.Status), Error: r.Error})
		if r.Status.Final() {
			v.Done++
		}
	}
	sort.SliceStable(v.Runs, func(i, j int) bool { return v.Runs[i].Link.ID < v.Runs[j].Link.ID })
	v.Refresh = v.Done < v.Total
	// The report compares by label in the lab's order: gather, the
	// baseline, first.
	ids := make([]string, len(runs))
	for i := range runs {
		ids[i] = uintStr(runs[i].ID)
	}
	v.SaveRuns, v.SaveTitle = strings.Join(ids, ","), "Write-path comparison "+batch
	if table == nil {
		return v
	}
	v.HasTable = true
	v.Table = NewComparisonTable(table, runs)

	// Ratios to gather, from the medians of each strategy's succeeded runs.
	var order []string
	byLabel := map[string][]*rundoc.Run{}
	for i := range runs {
		r := &runs[i]
		if _, ok := byLabel[r.Label]; !ok {
			order = append(order, r.Label)
		}
		byLabel[r.Label] = append(byLabel[r.Label], r)
	}
	// medOf is the median of a figure of the label's succeeded runs that
	// have it.
	medOf := func(label string, of func(r *rundoc.Run) (float64, bool)) (float64, bool) {
		var xs []float64
		for _, r := range byLabel[label] {
			if r.Status != rundoc.StatusSucceeded {
				continue
			}
			if x, ok := of(r); ok {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			return 0, false
		}
		return median.Of(xs), true
	}
	metric := func(r *rundoc.Run, name string) (float64, bool) {
		m, ok := r.Metric(name)
		return m.Value, ok
	}
	med := func(label, name string) (float64, bool) {
		return medOf(label, func(r *rundoc.Run) (float64, bool) { return metric(r, name) })
	}
	cpuPerRequest := func(r *rundoc.Run) (float64, bool) {
		cpu, ok := metric(r, "process-cpu-seconds")
		n, nok := metric(r, "requests-sent")
		if !ok || !nok || n <= 0 {
			return 0, false
		}
		return cpu / n * 1e6, true
	}
	figureOf := func(label string, of func(r *rundoc.Run) (float64, bool)) (string, string) {
		x, ok := medOf(label, of)
		if !ok {
			return "—", "—"
		}
		b, bok := medOf(wpBaseline, of)
		if !bok || b == 0 {
			return FormatNumber(x), "—"
		}
		return FormatNumber(x), formatRatio(x / b)
	}
	figure := func(label, name string) (string, string) {
		return figureOf(label, func(r *rundoc.Run) (float64, bool) { return metric(r, name) })
	}
	for _, label := range order {
		rt := WPRatio{Strategy: label, Baseline: label == wpBaseline}
		rt.RequestsPerSec, rt.RequestsRatio = figure(label, "requests-per-sec")
		rt.SyscallsPerReq, rt.SyscallsRatio = figure(label, "write-syscalls-per-request")
		rt.BytesPerSyscall, _ = figure(label, "bytes-per-write-syscall")
		rt.CPUPerRequest, rt.CPURatio = figureOf(label, cpuPerRequest)
		v.Ratios = append(v.Ratios, rt)
	}

	for _, label := range order {
		wp := panels[label]
		if wp == nil {
			continue
		}
		var pid uint
		for _, r := range byLabel[label] {
			if pid = WritepathProfile(r); pid != 0 {
				break
			}
		}
		panel := WPPanel{Strategy: label, ProfileURL: ProfileURL(pid), Paths: newWritePathsView(*wp, wp.Unit)}
		if x, ok := med(label, "write-syscalls-per-request"); ok {
			panel.WritesPerRequest, panel.OneWrite = FormatNumber(x), FormatNumber(x) == "1"
		}
		v.Panels = append(v.Panels, panel)
	}

	// The diffs merge every succeeded run of a strategy that has the
	// profile of the kind its first such run has (client CPU, else the
	// JVM's wall profile): the mean of the repetitions, not one of them.
	profiled := func(label string) (ids []uint, kind string) {
		for _, r := range byLabel[label] {
			if r.Status != rundoc.StatusSucceeded {
				continue
			}
			id := WritepathProfile(r)
			if id == 0 {
				continue
			}
			for _, p := range r.Profiles {
				if p.ID == id && (kind == "" || string(p.Kind) == kind) {
					kind = string(p.Kind)
					ids = append(ids, r.ID)
				}
			}
		}
		return ids, kind
	}
	pair := func(base, target string) (b, t []uint, kind string, ok bool) {
		b, bk := profiled(base)
		t, tk := profiled(target)
		return b, t, tk, len(b) > 0 && len(t) > 0 && bk == tk
	}
	if b, t, kind, ok := pair(rundoc.StrategyGather, rundoc.StrategyPerBuffer); ok {
		v.DiffURL = CompareRunSetsURL(b, t, kind, string(rundoc.RoleClient), wpDiffNormalize, "")
		v.Diff = &FlameGraph{ID: "wp-diff", DataURL: DiffRunSetsDataURL(b, t, kind, string(rundoc.RoleClient), wpDiffNormalize), Mode: "diff",
			ZoomParam: "zoom", SearchParam: "search",
			Label: "Differential flame graph: per-buffer's client CPU against gather's"}
	} else {
		v.NoDiff = "No differential flame graph: gather and per-buffer each need a succeeded run with a client CPU profile."
	}
	v.HasJava = len(byLabel[rundoc.StrategyJavaGather])+len(byLabel[rundoc.StrategyJavaPerBuffer]) > 0
	if b, t, kind, ok := pair(rundoc.StrategyJavaGather, rundoc.StrategyJavaPerBuffer); ok {
		v.JavaDiffURL = CompareRunSetsURL(b, t, kind, string(rundoc.RoleClient), wpDiffNormalize, "")
		v.JavaDiff = &FlameGraph{ID: "wp-java-diff", DataURL: DiffRunSetsDataURL(b, t, kind, string(rundoc.RoleClient), wpDiffNormalize), Mode: "diff",
			ZoomParam: "jzoom", SearchParam: "jsearch",
			Label: "Differential flame graph: java-per-buffer's JVM wall profile against java-gather's"}
	} else if v.HasJava {
		v.NoJavaDiff = "No Java differential flame graph: java-gather and java-per-buffer each need a succeeded run with the JVM's wall profile (recorded with --profile cpu)."
	}
	return v
}

// wpDiffNormalize is how the lab's differential flame graphs scale the
// two profiles: per record ("work"), since runs measured for a duration
// did different amounts of work; a record is the same bytes under every
// strategy, so per record is per request.
const wpDiffNormalize = "work"

// formatRatio writes a ratio to the baseline: "×1.00", "×0.094", "×11.2".
func formatRatio(r float64) string {
	switch {
	case r >= 10:
		return fmt.Sprintf("×%.1f", r)
	case r >= 0.1:
		return fmt.Sprintf("×%.2f", r)
	}
	return fmt.Sprintf("×%.3f", r)
}

// WPBatchRow is one earlier batch of the lab, in the form page's list.
type WPBatchRow struct {
	Batch, URL string
	// Created is when the batch was submitted (its first run's
	// creation); Params the parameters its runs share ("16 × 256 B
	// records a request, 6 s a run, 5 in flight, sink").
	Created, Params string
	// Runs, Finished and Succeeded count its runs; Status sums them up
	// ("24 runs, all succeeded", "3 of 24 finished").
	Runs, Finished, Succeeded int
	Status                    string
}

// NewWPBatchRow builds a batch's row from its counts and its first run
// (nil when it could not be read).
func NewWPBatchRow(batch string, runs, finished, succeeded int, first *rundoc.Run) WPBatchRow {
	row := WPBatchRow{Batch: batch, URL: WritepathResultURL(batch), Runs: runs, Finished: finished, Succeeded: succeeded}
	switch {
	case finished < runs:
		row.Status = fmt.Sprintf("%d of %d runs finished", finished, runs)
	case succeeded == runs:
		row.Status = fmt.Sprintf("%d %s, all succeeded", runs, numfmt.Plural(runs, "run", "runs"))
	default:
		row.Status = fmt.Sprintf("%d %s, %d succeeded", runs, numfmt.Plural(runs, "run", "runs"), succeeded)
	}
	if first == nil {
		return row
	}
	row.Created = FormatTime(first.CreatedAt)
	file, err := rundoc.ParseSpecFile([]byte(first.Spec))
	if err != nil {
		return row
	}
	spec, err := rundoc.SpecFromParams(file.Workload, file.Params)
	if err != nil {
		return row
	}
	parts := []string{fmt.Sprintf("%d × %d B records a request", spec.RecordsPerRequest, spec.RecordSize)}
	if spec.Duration > 0 {
		parts = append(parts, FormatNumber(spec.Duration)+" s a run")
	} else {
		parts = append(parts, FormatInt(spec.Requests)+" requests a run")
	}
	parts = append(parts, fmt.Sprintf("%d in flight", spec.InFlight))
	if spec.Sink {
		parts = append(parts, "sink")
	} else {
		parts = append(parts, "embedded broker")
	}
	row.Params = strings.Join(parts, ", ")
	return row
}
