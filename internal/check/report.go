package check

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// The report `kbench check` prints (--json shows it as is).
type (
	// Report is the decision over every candidate series.
	Report struct {
		// Verdict is "regression", "undecided" or "ok"; ExitCode the
		// command's exit code (1, 3 or 0).
		Verdict   string         `json:"verdict"`
		ExitCode  int            `json:"exit_code"`
		Threshold float64        `json:"threshold_pct"`
		Params    Params         `json:"params"`
		Series    []SeriesReport `json:"series"`
	}
	// Params are the change-point test's parameters the report was
	// decided with.
	Params struct {
		Window       int     `json:"window"`
		MaxPValue    float64 `json:"max_pvalue"`
		MinMagnitude float64 `json:"min_magnitude"`
		MinSegment   int     `json:"min_segment"`
	}
	// SeriesReport is the decision of one series' candidates.
	SeriesReport struct {
		SeriesKey  string `json:"series_key"`
		Workload   string `json:"workload"`
		Candidates []uint `json:"candidates"`
		// Baseline says where the baseline came from: "history",
		// "runs", "label=L", "branch=B" or "report=SLUG".
		Baseline string         `json:"baseline"`
		Results  []MetricReport `json:"results"`
		// Functions are the functions that moved from the baseline's
		// runs to the candidates' (their CPU profiles of the client),
		// as the server names a regression's; FunctionNaming says from
		// which runs and whether that is done. Absent when the server
		// names no functions.
		Functions      []wire.MovedFunction `json:"functions,omitempty"`
		FunctionNaming *wire.FunctionNaming `json:"function_naming,omitempty"`
	}
	// MetricReport is a Result as the report shows it.
	MetricReport struct {
		Metric    string        `json:"metric"`
		Unit      string        `json:"unit"`
		Better    rundoc.Better `json:"better"`
		Baseline  Side          `json:"baseline"`
		Candidate Side          `json:"candidate"`
		ChangePct *float64      `json:"change_pct"`
		PValue    *float64      `json:"p_value"`
		Method    string        `json:"method"`
		Verdict   string        `json:"verdict"`
		Reason    string        `json:"reason"`
	}
	// Side is a Summary as the report shows it: Value nil without values.
	Side struct {
		N     int      `json:"n"`
		Stat  string   `json:"stat"`
		Value *float64 `json:"value"`
		Runs  []uint   `json:"runs"`
	}
)

func toSide(s Summary) Side {
	r := Side{N: s.N, Stat: s.Stat, Runs: s.RunIDs}
	if r.Runs == nil {
		r.Runs = []uint{}
	}
	if s.N > 0 {
		v := s.Value
		r.Value = &v
	}
	return r
}

// Assess judges the candidates (in time order, as Candidates returns
// them) series by series against bl, on metrics (none: each workload's
// headline metrics), reading baselines from src. opts are used as given,
// so the report shows them: the command fills every field from its
// flags. An error means it could not decide.
func Assess(ctx context.Context, src Source, cands []Run, bl Baseline, metrics []string, opts Options) (Report, error) {
	cp := opts.ChangePoint
	rep := Report{Threshold: opts.Threshold, Params: Params{cp.Window, cp.MaxPValue, cp.MinMagnitude, cp.MinSegment}, Series: []SeriesReport{}}
	for _, group := range groupBySeries(cands) {
		sr, err := assessSeries(ctx, src, group, bl, metrics, opts)
		if err != nil {
			return rep, err
		}
		rep.Series = append(rep.Series, sr)
	}
	rep.Verdict, rep.ExitCode = overall(rep.Series)
	return rep, nil
}

// overall is the verdict over every metric: any regression wins, then
// any undecided metric.
func overall(series []SeriesReport) (string, int) {
	undecided := false
	for _, s := range series {
		for _, r := range s.Results {
			switch r.Verdict {
			case VerdictRegression:
				return "regression", 1
			case VerdictUndecided:
				undecided = true
			}
		}
		if len(s.Results) == 0 {
			undecided = true
		}
	}
	if undecided || len(series) == 0 {
		return "undecided", 3
	}
	return "ok", 0
}

// assessSeries decides one series' candidates.
func assessSeries(ctx context.Context, src Source, cands []Run, bl Baseline, metricNames []string, opts Options) (SeriesReport, error) {
	first := cands[0]
	sr := SeriesReport{SeriesKey: first.SeriesKey, Workload: string(first.Workload), Baseline: "history", Results: []MetricReport{}}
	candIDs := map[uint]bool{}
	for _, r := range cands {
		sr.Candidates = append(sr.Candidates, r.ID)
		candIDs[r.ID] = true
	}
	explicit := len(metricNames) > 0
	if !explicit {
		metricNames = compare.HeadlineMetrics(string(first.Workload))
	}
	// The baseline runs of an explicit --baseline, fetched once.
	var baseRuns []Run
	switch bl.Kind {
	case "runs", "label", "report":
		var err error
		baseRuns, err = explicitBaseline(ctx, src, bl, first, candIDs, opts.ChangePoint.Window)
		if err != nil {
			return sr, err
		}
		sr.Baseline = bl.Kind
		if bl.Kind != "runs" {
			sr.Baseline += "=" + bl.Value
		}
	case "branch":
		sr.Baseline = "branch=" + bl.Value
	}
	var inputs []Input
	for _, name := range metricNames {
		in := Input{Metric: name}
		for _, r := range cands {
			if v, unit, better, ok := metric(r, name); ok {
				in.Candidates = append(in.Candidates, Point{RunID: r.ID, Value: v})
				if in.Unit == "" && in.Better == "" {
					in.Unit, in.Better = unit, better
				}
			}
		}
		if len(in.Candidates) == 0 && !explicit {
			continue // not a figure this workload's runs have
		}
		switch bl.Kind {
		case "":
			h, err := src.History(ctx, HistoryQuery{Metric: name, Run: first.ID, ChangePoint: opts.ChangePoint})
			if err != nil {
				return sr, err
			}
			in.Baseline = historyBaseline(h, first, candIDs)
		case "branch":
			h, err := src.History(ctx, HistoryQuery{Metric: name, Fingerprint: first.Fingerprint, Branch: bl.Value, ChangePoint: opts.ChangePoint})
			if err != nil {
				return sr, err
			}
			in.Baseline = historyBaseline(h, first, candIDs)
		default:
			for _, r := range baseRuns {
				if v, _, _, ok := metric(r, name); ok {
					in.Baseline = append(in.Baseline, Point{RunID: r.ID, Value: v})
				}
			}
		}
		inputs = append(inputs, in)
	}
	results, err := Decide(inputs, opts)
	if err != nil {
		return sr, err
	}
	for _, r := range results {
		sr.Results = append(sr.Results, MetricReport{Metric: r.Metric, Unit: r.Unit, Better: r.Better,
			Baseline: toSide(r.Baseline), Candidate: toSide(r.Candidate), ChangePct: r.ChangePct, PValue: r.PValue,
			Method: r.Method, Verdict: r.Verdict, Reason: r.Reason})
	}
	if fs, ok := src.(FunctionSource); ok {
		if err := nameFunctions(ctx, fs, &sr); err != nil {
			return sr, err
		}
	}
	return sr, nil
}

// nameFunctions names the functions that moved from the series'
// baseline runs (those of its first result with any, in time order, the
// last MaxFunctionRuns) to its candidates (the first MaxFunctionRuns).
func nameFunctions(ctx context.Context, fs FunctionSource, sr *SeriesReport) error {
	var base []uint
	for _, r := range sr.Results {
		if len(r.Baseline.Runs) > 0 {
			base = r.Baseline.Runs
			break
		}
	}
	if len(base) == 0 || len(sr.Candidates) == 0 {
		return nil
	}
	base = base[max(0, len(base)-MaxFunctionRuns):]
	f, err := fs.Functions(ctx, base, sr.Candidates[:min(len(sr.Candidates), MaxFunctionRuns)])
	if err != nil {
		return fmt.Errorf("name the functions that moved: %w", err)
	}
	if f.Status == "" { // a server that names no functions
		return nil
	}
	sr.Functions, sr.FunctionNaming = f.Functions, &f.FunctionNaming
	return nil
}

// Markdown renders the report for a pull-request comment, its runs
// linked on the server at base.
func (rep Report) Markdown(base string) string {
	var b strings.Builder
	headline := map[string]string{"regression": "❌ regression", "undecided": "⚠️ undecided", "ok": "✅ no regression"}[rep.Verdict]
	fmt.Fprintf(&b, "### kbench check: %s\n\n", headline)
	fmt.Fprintf(&b, "Threshold %s%%; change-point test: window %d, max p-value %s, min magnitude %s, min segment %d.\n",
		strconv.FormatFloat(rep.Threshold, 'g', -1, 64), rep.Params.Window,
		strconv.FormatFloat(rep.Params.MaxPValue, 'g', -1, 64), strconv.FormatFloat(rep.Params.MinMagnitude, 'g', -1, 64), rep.Params.MinSegment)
	for _, s := range rep.Series {
		fmt.Fprintf(&b, "\n**%s** %s, series `%s`; baseline: %s.\n\n", s.Workload, mdRunLinks(s.Candidates, base), s.SeriesKey, baselineText(s.Baseline))
		if len(s.Results) == 0 {
			b.WriteString("No metric to check.\n")
			continue
		}
		b.WriteString("| metric | unit | baseline | candidate | change | p-value | method | verdict |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, r := range s.Results {
			change, p := "—", "—"
			if r.ChangePct != nil {
				change = compare.FormatDelta(*r.ChangePct)
			}
			if r.PValue != nil {
				p = formatPValue(*r.PValue)
			}
			verdict := r.Verdict
			if verdict == VerdictRegression {
				verdict = "**" + verdict + "**"
			}
			method := map[string]string{MethodMannWhitney: "Mann-Whitney", MethodChangePoint: "change point", "": "—"}[r.Method]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(r.Metric), mdCell(r.Unit),
				sideText(r.Baseline), sideText(r.Candidate), change, p, method, verdict)
		}
		for _, r := range s.Results {
			if r.Verdict == VerdictRegression || r.Verdict == VerdictUndecided {
				fmt.Fprintf(&b, "\n- %s: %s", mdCell(r.Metric), mdCell(r.Reason))
			}
		}
		b.WriteString("\n")
		if line := functionsLine(s.Functions, s.FunctionNaming, base); line != "" {
			b.WriteString("\n" + line + "\n")
		}
	}
	return b.String()
}

// functionsLine is the report's line on the functions that moved: the
// top three with their change, "" when no run has profiles or the server
// names none.
func functionsLine(fs []wire.MovedFunction, n *wire.FunctionNaming, base string) string {
	if n == nil || n.Status == wire.FunctionsNoProfiles {
		return ""
	}
	link := ""
	if n.DiffURL != "" {
		link = fmt.Sprintf(" ([differential flame graph](%s%s))", base, n.DiffURL)
	}
	runs := fmt.Sprintf("%d baseline runs against %d candidates with CPU profiles", len(n.RunsBase), len(n.RunsTarget))
	switch n.Status {
	case wire.FunctionsComputing:
		return "Functions that moved: still being named on the server (" + runs + "); run again to see them" + link + "."
	case wire.FunctionsNamed:
		if len(fs) == 0 {
			return "Functions that moved: none significantly (" + runs + ")" + link + "."
		}
		var parts []string
		for _, f := range fs[:min(3, len(fs))] {
			parts = append(parts, fmt.Sprintf("`%s` %s", strings.ReplaceAll(f.Name, "`", "'"), compare.FormatDelta(f.DeltaPct)))
		}
		per := "per record"
		if n.Normalize != "work" {
			per = "as shares of the total"
		}
		return "Functions that moved (" + runs + ", " + per + "): " + mdCell(strings.Join(parts, ", ")) + link + "."
	}
	return "Functions that moved: " + mdCell(n.Reason) + link + "."
}

func baselineText(kind string) string {
	switch kind {
	case "history":
		return "the series' runs before them since the last change point"
	case "runs":
		return "the runs given"
	}
	return kind
}

func mdRunLinks(ids []uint, base string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("[#%d](%s/runs/%d)", id, base, id)
	}
	word := "runs "
	if len(ids) == 1 {
		word = "run "
	}
	return word + strings.Join(parts, ", ")
}

// sideText is "115,000 (mean of 20)", "105,000" for a single value, "—"
// for none.
func sideText(s Side) string {
	if s.Value == nil {
		return "—"
	}
	v := compare.FormatNumber(*s.Value)
	if s.N == 1 {
		return v
	}
	return fmt.Sprintf("%s (%s of %d)", v, s.Stat, s.N)
}

// formatPValue shows two significant digits, as small p-values of the
// change-point test need (p = 0.00012).
func formatPValue(p float64) string {
	if p < 1e-6 {
		return "<0.000001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// mdCell keeps a value from breaking the table.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}
