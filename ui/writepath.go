package ui

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/kbench/kbench/compare"
	"github.com/kbench/kbench/internal/median"
	"github.com/kbench/kbench/rundoc"
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
	writepathTitle     = "Write-path lab"
	// wpBaseline is the strategy every other is compared with.
	wpBaseline = rundoc.StrategyGather
)

// WritepathResultURL is the page of one preset batch.
func WritepathResultURL(batch string) string { return WritepathPath + "/" + batch }

// WPField is one input of the preset's form.
type WPField struct {
	Name, ID, Label, Value, Placeholder, Help, Error string
	Min, Max                                         string
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
		Sink: fresh || isTrue(values.Get(WPFieldSink))}
	for _, f := range []WPField{
		{Name: WPFieldRecords, Label: "Records per request", Placeholder: "16", Min: "1",
			Help: "each record is its own buffer, plus a request header and a record-batch header"},
		{Name: WPFieldRecordSize, Label: "Record size (bytes)", Placeholder: "256", Min: "1"},
		{Name: WPFieldRequests, Label: "Requests per run", Placeholder: "20000", Min: "1",
			Help: "a fixed amount of work, so the profiles of the strategies compare directly"},
		{Name: WPFieldInFlight, Label: "Requests in flight", Placeholder: "5", Min: "1", Max: "1024"},
		{Name: WPFieldRepetitions, Label: "Repetitions per strategy", Placeholder: "3", Min: "1", Max: "10",
			Help: "runs are interleaved across strategies, so noise hits all alike; 4 or more per strategy allow a significance test"},
	} {
		f.ID = fieldID(f.Name)
		f.Value = values.Get(f.Name)
		if msg, ok := errs[f.Name]; ok {
			f.Error = msg
			v.Errors = append(v.Errors, FormError{Field: f.Name, Label: f.Label, Message: msg, Anchor: "#" + f.ID})
		}
		v.Fields = append(v.Fields, f)
	}
	var other []string
	for name := range errs {
		if !contains([]string{WPFieldRecords, WPFieldRecordSize, WPFieldRequests, WPFieldInFlight, WPFieldRepetitions}, name) {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	for _, name := range other {
		v.Errors = append(v.Errors, FormError{Field: name, Label: name, Message: errs[name]})
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
	med := func(label, metric string) (float64, bool) {
		var xs []float64
		for _, r := range byLabel[label] {
			if r.Status != rundoc.StatusSucceeded {
				continue
			}
			for _, m := range r.Metrics {
				if m.Name == metric {
					xs = append(xs, m.Value)
				}
			}
		}
		if len(xs) == 0 {
			return 0, false
		}
		return median.Of(xs), true
	}
	figure := func(label, metric string) (string, string) {
		x, ok := med(label, metric)
		if !ok {
			return "—", "—"
		}
		b, bok := med(wpBaseline, metric)
		if !bok || b == 0 {
			return FormatNumber(x), "—"
		}
		return FormatNumber(x), formatRatio(x / b)
	}
	for _, label := range order {
		rt := WPRatio{Strategy: label, Baseline: label == wpBaseline}
		rt.RequestsPerSec, rt.RequestsRatio = figure(label, "requests-per-sec")
		rt.SyscallsPerReq, rt.SyscallsRatio = figure(label, "write-syscalls-per-request")
		rt.BytesPerSyscall, _ = figure(label, "bytes-per-write-syscall")
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

	first := func(label string) uint {
		for _, r := range byLabel[label] {
			if r.Status == rundoc.StatusSucceeded {
				if id := WritepathProfile(r); id != 0 {
					return id
				}
			}
		}
		return 0
	}
	if b, t := first(rundoc.StrategyGather), first(rundoc.StrategyPerBuffer); b != 0 && t != 0 {
		v.DiffURL = CompareProfilesURL(b, t, "total", "")
		v.Diff = &FlameGraph{ID: "wp-diff", DataURL: DiffDataURL(b, t, "total", ""), Mode: "diff",
			FocusParam: "focus", SearchParam: "search",
			Label: "Differential flame graph: per-buffer's client CPU against gather's"}
	} else {
		v.NoDiff = "No differential flame graph: gather and per-buffer each need a succeeded run with a client CPU profile."
	}
	v.HasJava = len(byLabel[rundoc.StrategyJavaGather])+len(byLabel[rundoc.StrategyJavaPerBuffer]) > 0
	if b, t := first(rundoc.StrategyJavaGather), first(rundoc.StrategyJavaPerBuffer); b != 0 && t != 0 {
		v.JavaDiffURL = CompareProfilesURL(b, t, "total", "")
		v.JavaDiff = &FlameGraph{ID: "wp-java-diff", DataURL: DiffDataURL(b, t, "total", ""), Mode: "diff",
			FocusParam: "jfocus", SearchParam: "jsearch",
			Label: "Differential flame graph: java-per-buffer's JVM wall profile against java-gather's"}
	} else if v.HasJava {
		v.NoJavaDiff = "No Java differential flame graph: java-gather and java-per-buffer each need a succeeded run with the JVM's wall profile (recorded with --profile cpu)."
	}
	return v
}

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
