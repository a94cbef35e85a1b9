package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/check"
	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

const checkUsage = `usage: kbench check [--server URL] [--token T] (--run ID... | --label L | --meta KEY=VALUE...)
       [--baseline FORM] [--threshold PCT] [--metric NAME]... [--window N] [--max-pvalue P]
       [--min-magnitude F] [--min-segment N] [--wait DURATION] [--json]

Decides whether candidate runs stored in a kbench server regressed, for CI.
The candidates are the runs given with --run, or every run whose label is
--label and whose metadata holds every --meta tag (both may be given).

Each candidate series (runs sharing a workload, target and branch) is
compared, metric by metric, with its baseline. The default baseline is the
series' runs before the candidates, back to the last change point of the
metric's history (GET /api/history, with --window, --max-pvalue and
--min-magnitude as Otava's window_len, max_pvalue and min_magnitude, and
--min-segment: change points with fewer runs on a side are tentative and
cut no baseline).
--baseline replaces it:
  runs=ID,ID,...  (or just ID,ID,...)  those runs
  label=L         the latest --window succeeded runs labelled L of the same workload
  branch=B        the same workload's series on branch B: its runs before the
                  candidates, back to its last change point before them
  report=SLUG     the baseline column of the saved report /r/SLUG

The metrics are the workload's headline metrics (those comparison tables
test), or --metric. With at least 4 values on each side a metric is tested
as comparison tables test it (Mann-Whitney U, p-values adjusted by
Benjamini-Hochberg across the metrics, alpha 0.05); otherwise by Otava's
change-point test over the baseline with the candidates appended: a change
point at the first candidate is significant when it has at least
--min-segment (default 4) runs on each side; with fewer candidates it is
tentative, and the metric undecided. --min-segment 1 decides on every
change point Otava reports, a single candidate's included. A significant change
worse by the metric's direction and at least --threshold percent is a
regression.
Fewer than 4 baseline values leave a metric undecided.

Prints a Markdown table for a pull-request comment (--json: the same as
JSON). Exit codes: 0 no regression, 1 a regression, 2 bad usage, 3 could
not decide (server unreachable or refusing, a run not finished or failed,
too little baseline, no history API). --wait polls until the candidates
have finished, at most DURATION, then gives up with 3.

flags:
`

// checkPollInterval is how often --wait asks the server again.
var checkPollInterval = 2 * time.Second

// checkParams are the flags that tune the decision.
type checkParams struct {
	threshold    float64
	window       int
	maxPValue    float64
	minMagnitude float64
	minSegment   int
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kbench check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), checkUsage)
		fs.PrintDefaults()
	}
	serverURL := fs.String("server", envOr("server", "http://127.0.0.1:8080"), "the kbench server (also KBENCH_SERVER)")
	token := fs.String("token", envOr("token", ""), "the server's token, sent as Authorization: Bearer (also KBENCH_TOKEN)")
	var runFlag, metaFlag, metricFlag listFlag
	fs.Var(&runFlag, "run", "a candidate run's ID (repeatable, or a comma list)")
	label := fs.String("label", "", "candidates: the runs with this label")
	fs.Var(&metaFlag, "meta", "candidates: the runs tagged KEY=VALUE, e.g. commit=abc123 (repeatable: all must match)")
	baseline := fs.String("baseline", "", "runs=ID,..., label=L, branch=B or report=SLUG (default: the series' history)")
	var p checkParams
	fs.Float64Var(&p.threshold, "threshold", check.DefaultThreshold, "the smallest change that counts, in percent")
	fs.Var(&metricFlag, "metric", "a metric to check (repeatable, or a comma list; default: the workload's headline metrics)")
	fs.IntVar(&p.window, "window", changepoint.DefaultWindow, fmt.Sprintf("Otava's window_len for the change-point test (2 to %d)", changepoint.MaxWindow))
	fs.Float64Var(&p.maxPValue, "max-pvalue", changepoint.DefaultMaxPValue, "Otava's max_pvalue: the change-point test's significance level")
	fs.Float64Var(&p.minMagnitude, "min-magnitude", 0, "Otava's min_magnitude, a fraction (0.05 = 5%)")
	fs.IntVar(&p.minSegment, "min-segment", changepoint.DefaultMinSegment, "the fewest runs each side of a change point must hold for it to count; 1 decides on every change point Otava reports, as with a single candidate")
	wait := fs.Duration("wait", 0, "wait up to this long (e.g. 10m) for the candidates to finish")
	asJSON := fs.Bool("json", false, "print JSON instead of Markdown")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kbench check: "+format+"\n\n", a...)
		fs.Usage()
		return 2
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	ids, err := parseIDs(splitLists(runFlag))
	if err != nil {
		return usageErr("--run: %v", err)
	}
	meta, err := rundoc.ParseMeta(metaFlag)
	if err != nil {
		return usageErr("%v", err)
	}
	switch {
	case len(ids) == 0 && *label == "" && len(meta) == 0:
		return usageErr("name the candidates: --run ID, --label L or --meta KEY=VALUE")
	case len(ids) > 0 && (*label != "" || len(meta) > 0):
		return usageErr("--run names the candidates itself: leave out --label and --meta")
	case *wait < 0:
		return usageErr("--wait: must not be negative")
	}
	bl, err := parseBaseline(*baseline)
	if err != nil {
		return usageErr("--baseline: %v", err)
	}
	opts := check.Options{Threshold: p.threshold, ChangePoint: changepoint.Options{Window: p.window, MaxPValue: p.maxPValue, MinMagnitude: p.minMagnitude, MinSegment: p.minSegment}}
	if !(p.threshold > 0) {
		return usageErr("--threshold %v: must be above 0 (percent)", p.threshold)
	}
	if p.window < 2 || p.window > changepoint.MaxWindow {
		return usageErr("--window %d: must be from 2 to %d", p.window, changepoint.MaxWindow)
	}
	if !(p.maxPValue > 0) {
		return usageErr("--max-pvalue %v: must be in (0, 1]", p.maxPValue)
	}
	if p.minSegment < 1 {
		return usageErr("--min-segment %d: must be at least 1 run each side of a change point (1: decide on every change point Otava reports)", p.minSegment)
	}
	if err := opts.Validate(); err != nil {
		return usageErr("%v", err)
	}
	base := strings.TrimRight(*serverURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return usageErr("--server: must be an http:// or https:// URL, got %q", *serverURL)
	}
	cl := &checkClient{newAPIClient(base, *token)}
	sel := candidateSelector{ids: ids, label: *label, meta: meta}

	fail := func(err error) int {
		fmt.Fprintf(stderr, "kbench check: could not decide: %v\n", err)
		return 3
	}
	cands, err := waitCandidates(ctx, cl, sel, *wait, stderr)
	if err != nil {
		return fail(err)
	}
	rep := checkReport{Threshold: p.threshold, Params: historyParams{p.window, p.maxPValue, p.minMagnitude, p.minSegment}, Series: []seriesReport{}}
	for _, group := range groupBySeries(cands) {
		sr, err := checkSeries(ctx, cl, group, bl, splitLists(metricFlag), p, opts)
		if err != nil {
			return fail(err)
		}
		rep.Series = append(rep.Series, sr)
	}
	rep.Verdict, rep.ExitCode = overall(rep.Series)
	if *asJSON {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(err)
		}
		stdout.Write(append(data, '\n'))
	} else {
		fmt.Fprint(stdout, checkMarkdown(rep, base))
	}
	return rep.ExitCode
}

// splitLists splits comma lists inside repeated flags.
func splitLists(vs []string) []string {
	var out []string
	for _, v := range vs {
		out = append(out, splitList(v)...)
	}
	return out
}

func parseIDs(vs []string) ([]uint, error) {
	var ids []uint
	for _, v := range vs {
		n, err := strconv.ParseUint(strings.TrimPrefix(v, "#"), 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%q is not a run ID", v)
		}
		if !slices.Contains(ids, uint(n)) {
			ids = append(ids, uint(n))
		}
	}
	return ids, nil
}

// baselineSpec is a parsed --baseline.
type baselineSpec struct {
	kind  string // "" (the history), "runs", "label", "branch", "report"
	ids   []uint
	value string
}

func parseBaseline(s string) (baselineSpec, error) {
	if s == "" {
		return baselineSpec{}, nil
	}
	kind, value, ok := strings.Cut(s, "=")
	if !ok {
		kind, value = "runs", s
	}
	switch kind {
	case "runs":
		ids, err := parseIDs(splitList(value))
		if err != nil || len(ids) == 0 {
			return baselineSpec{}, fmt.Errorf("want runs=ID,ID,... (or label=L, branch=B, report=SLUG), got %q", s)
		}
		return baselineSpec{kind: kind, ids: ids}, nil
	case "label", "branch", "report":
		if strings.TrimSpace(value) == "" {
			return baselineSpec{}, fmt.Errorf("%s= needs a value", kind)
		}
		if kind == "report" && strings.ContainsAny(value, "/?#") {
			return baselineSpec{}, fmt.Errorf("report=%q: give the report's slug, the part after /r/", value)
		}
		return baselineSpec{kind: kind, value: value}, nil
	}
	return baselineSpec{}, fmt.Errorf("unknown form %q: want runs=ID,..., label=L, branch=B or report=SLUG", kind+"=")
}

// checkRun is a run as GET /api/runs and /api/runs/{id} show it.
type checkRun struct{ client.Run }

// metric returns the run's first figure named name.
func (r checkRun) metric(name string) (value float64, unit string, better rundoc.Better, ok bool) {
	m, ok := r.Metric(name)
	return m.Value, m.Unit, m.Better, ok
}

// history is the answer of GET /api/history; historyPoint one run of it.
type (
	history      = client.History
	historyPoint = client.HistoryPoint
)

// checkClient reads runs and histories through the server's API.
type checkClient struct {
	*client.Client
}

func (c *checkClient) run(ctx context.Context, id uint) (checkRun, error) {
	r, err := c.Run(ctx, id)
	if err != nil {
		return checkRun{}, err
	}
	return checkRun{*r}, nil
}

// listRuns pages through GET /api/runs?q and returns the runs keep
// accepts, newest first.
func (c *checkClient) listRuns(ctx context.Context, q url.Values, keep func(checkRun) bool) ([]checkRun, error) {
	const page = 500
	var out []checkRun
	q.Set("limit", strconv.Itoa(page))
	for offset := 0; ; offset += page {
		q.Set("offset", strconv.Itoa(offset))
		ans, err := c.Runs(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, r := range ans.Runs {
			if keep(checkRun{r}) {
				out = append(out, checkRun{r})
			}
		}
		if len(ans.Runs) == 0 || int64(offset+len(ans.Runs)) >= ans.Total {
			return out, nil
		}
	}
}

func (c *checkClient) history(ctx context.Context, q url.Values) (history, error) {
	h, err := c.History(ctx, q)
	if client.StatusCode(err) == http.StatusNotFound {
		// The run was just read, so a 404 here is most likely a server
		// from before the history API.
		return history{}, fmt.Errorf("%w (a server without the history API answers so: upgrade it, or give --baseline runs=…)", err)
	}
	if err != nil {
		return history{}, err
	}
	return *h, nil
}

// candidateSelector is how the candidates were named.
type candidateSelector struct {
	ids   []uint
	label string
	meta  map[string]string
}

// find returns the candidates with their metrics, in time order.
func (s candidateSelector) find(ctx context.Context, cl *checkClient) ([]checkRun, error) {
	ids := s.ids
	if len(ids) == 0 {
		q := url.Values{}
		if s.label != "" {
			q.Set("label", s.label)
		}
		// The runs API filters by label; metadata is matched here.
		listed, err := cl.listRuns(ctx, q, func(r checkRun) bool {
			if s.label != "" && r.Label != s.label {
				return false
			}
			for k, v := range s.meta {
				if r.Meta[k] != v {
					return false
				}
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		for _, r := range listed {
			ids = append(ids, r.ID)
		}
	}
	var runs []checkRun
	for _, id := range ids {
		r, err := cl.run(ctx, id)
		if client.StatusCode(err) == http.StatusNotFound {
			return nil, fmt.Errorf("run #%d: no such run on %s", id, cl.BaseURL())
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sortRuns(runs)
	return runs, nil
}

func (s candidateSelector) String() string {
	if len(s.ids) > 0 {
		return "runs " + idText(s.ids)
	}
	var parts []string
	if s.label != "" {
		parts = append(parts, "label "+strconv.Quote(s.label))
	}
	keys := make([]string, 0, len(s.meta))
	for k := range s.meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+s.meta[k])
	}
	return "runs with " + strings.Join(parts, " and ")
}

// waitCandidates finds the candidates and, with wait > 0, polls until
// they exist and have all finished, or wait has passed.
func waitCandidates(ctx context.Context, cl *checkClient, sel candidateSelector, wait time.Duration, stderr io.Writer) ([]checkRun, error) {
	deadline := time.Now().Add(wait)
	announced := false
	for {
		runs, err := sel.find(ctx, cl)
		var pending error
		switch {
		case err != nil && wait > 0 && len(sel.ids) > 0 && strings.Contains(err.Error(), "no such run"):
			pending = err
		case err != nil:
			return nil, err
		case len(runs) == 0:
			pending = fmt.Errorf("no %s on %s", sel, cl.BaseURL())
		}
		for _, r := range runs {
			if !r.Status.Final() {
				pending = fmt.Errorf("run #%d is %s", r.ID, r.Status)
				break
			}
		}
		if pending == nil {
			for _, r := range runs {
				if r.Status != rundoc.StatusSucceeded {
					msg := fmt.Sprintf("run #%d %s", r.ID, r.Status)
					if r.Error != "" {
						msg += ": " + r.Error
					}
					return nil, errors.New(msg)
				}
			}
			return runs, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			if wait > 0 {
				return nil, fmt.Errorf("%w after waiting %s", pending, wait)
			}
			return nil, fmt.Errorf("%w (--wait DURATION waits for it)", pending)
		}
		if !announced {
			fmt.Fprintf(stderr, "kbench check: %v; waiting up to %s\n", pending, wait)
			announced = true
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(min(checkPollInterval, left)):
		}
	}
}

func sortRuns(runs []checkRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Time.Equal(runs[j].Time) {
			return runs[i].Time.Before(runs[j].Time)
		}
		return runs[i].ID < runs[j].ID
	})
}

// groupBySeries splits the candidates by series, in order of each
// series' first candidate.
func groupBySeries(runs []checkRun) [][]checkRun {
	var keys []string
	groups := map[string][]checkRun{}
	for _, r := range runs {
		if _, ok := groups[r.SeriesKey]; !ok {
			keys = append(keys, r.SeriesKey)
		}
		groups[r.SeriesKey] = append(groups[r.SeriesKey], r)
	}
	out := make([][]checkRun, len(keys))
	for i, k := range keys {
		out[i] = groups[k]
	}
	return out
}

// The report check prints (--json shows it as is).
type (
	checkReport struct {
		// Verdict is "regression", "undecided" or "ok"; ExitCode the
		// command's exit code (1, 3 or 0).
		Verdict   string         `json:"verdict"`
		ExitCode  int            `json:"exit_code"`
		Threshold float64        `json:"threshold_pct"`
		Params    historyParams  `json:"params"`
		Series    []seriesReport `json:"series"`
	}
	historyParams struct {
		Window       int     `json:"window"`
		MaxPValue    float64 `json:"max_pvalue"`
		MinMagnitude float64 `json:"min_magnitude"`
		MinSegment   int     `json:"min_segment"`
	}
	seriesReport struct {
		SeriesKey  string `json:"series_key"`
		Workload   string `json:"workload"`
		Candidates []uint `json:"candidates"`
		// Baseline says where the baseline came from: "history",
		// "runs", "label=L", "branch=B" or "report=SLUG".
		Baseline string         `json:"baseline"`
		Results  []metricReport `json:"results"`
	}
	metricReport struct {
		Metric    string        `json:"metric"`
		Unit      string        `json:"unit"`
		Better    rundoc.Better `json:"better"`
		Baseline  sideReport    `json:"baseline"`
		Candidate sideReport    `json:"candidate"`
		ChangePct *float64      `json:"change_pct"`
		PValue    *float64      `json:"p_value"`
		Method    string        `json:"method"`
		Verdict   string        `json:"verdict"`
		Reason    string        `json:"reason"`
	}
	sideReport struct {
		N     int      `json:"n"`
		Stat  string   `json:"stat"`
		Value *float64 `json:"value"`
		Runs  []uint   `json:"runs"`
	}
)

func toSide(s check.Summary) sideReport {
	r := sideReport{N: s.N, Stat: s.Stat, Runs: s.RunIDs}
	if r.Runs == nil {
		r.Runs = []uint{}
	}
	if s.N > 0 {
		v := s.Value
		r.Value = &v
	}
	return r
}

// overall is the verdict over every metric: any regression wins, then
// any undecided metric.
func overall(series []seriesReport) (string, int) {
	undecided := false
	for _, s := range series {
		for _, r := range s.Results {
			switch r.Verdict {
			case check.VerdictRegression:
				return "regression", 1
			case check.VerdictUndecided:
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

// checkSeries decides one series' candidates.
func checkSeries(ctx context.Context, cl *checkClient, cands []checkRun, bl baselineSpec, metricNames []string, p checkParams, opts check.Options) (seriesReport, error) {
	first := cands[0]
	sr := seriesReport{SeriesKey: first.SeriesKey, Workload: string(first.Workload), Baseline: "history", Results: []metricReport{}}
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
	var baseRuns []checkRun
	switch bl.kind {
	case "runs", "label", "report":
		var err error
		baseRuns, err = explicitBaseline(ctx, cl, bl, first, candIDs, p.window)
		if err != nil {
			return sr, err
		}
		sr.Baseline = bl.kind
		if bl.kind != "runs" {
			sr.Baseline += "=" + bl.value
		}
	case "branch":
		sr.Baseline = "branch=" + bl.value
	}
	var inputs []check.Input
	for _, name := range metricNames {
		in := check.Input{Metric: name}
		for _, r := range cands {
			if v, unit, better, ok := r.metric(name); ok {
				in.Candidates = append(in.Candidates, check.Point{RunID: r.ID, Value: v})
				if in.Unit == "" && in.Better == "" {
					in.Unit, in.Better = unit, better
				}
			}
		}
		if len(in.Candidates) == 0 && !explicit {
			continue // not a figure this workload's runs have
		}
		switch bl.kind {
		case "":
			q := historyQuery(p, name)
			q.Set("run", strconv.FormatUint(uint64(first.ID), 10))
			h, err := cl.history(ctx, q)
			if err != nil {
				return sr, err
			}
			in.Baseline = historyBaseline(h, first, candIDs)
		case "branch":
			q := historyQuery(p, name)
			q.Set("fingerprint", first.Fingerprint)
			q.Set("branch", bl.value)
			h, err := cl.history(ctx, q)
			if err != nil {
				return sr, err
			}
			in.Baseline = historyBaseline(h, first, candIDs)
		default:
			for _, r := range baseRuns {
				if v, _, _, ok := r.metric(name); ok {
					in.Baseline = append(in.Baseline, check.Point{RunID: r.ID, Value: v})
				}
			}
		}
		inputs = append(inputs, in)
	}
	results, err := check.Decide(inputs, opts)
	if err != nil {
		return sr, err
	}
	for _, r := range results {
		sr.Results = append(sr.Results, metricReport{Metric: r.Metric, Unit: r.Unit, Better: r.Better,
			Baseline: toSide(r.Baseline), Candidate: toSide(r.Candidate), ChangePct: r.ChangePct, PValue: r.PValue,
			Method: r.Method, Verdict: r.Verdict, Reason: r.Reason})
	}
	return sr, nil
}

func historyQuery(p checkParams, metric string) url.Values {
	q := url.Values{}
	q.Set("metric", metric)
	q.Set("window", strconv.Itoa(p.window))
	q.Set("max_pvalue", strconv.FormatFloat(p.maxPValue, 'g', -1, 64))
	q.Set("min_magnitude", strconv.FormatFloat(p.minMagnitude, 'g', -1, 64))
	q.Set("min_segment", strconv.Itoa(p.minSegment))
	return q
}

// historyBaseline is the series' points before the first candidate, back
// to the last change point before it (a change point at the first
// candidate is the candidates' own change: it does not cut the baseline).
// For another series (--baseline branch=B), which does not hold the
// candidates, "before" is by time.
func historyBaseline(h history, first checkRun, cands map[uint]bool) []check.Point {
	at := slices.IndexFunc(h.Points, func(pt historyPoint) bool { return cands[pt.RunID] })
	if at < 0 {
		// The candidates have no point (no value of the metric): the
		// baseline is what came before them in time.
		at = 0
		for at < len(h.Points) && h.Points[at].Time.Before(first.Time) {
			at++
		}
	}
	start := 0
	for _, cp := range h.ChangePoints {
		if cp.Index < at && cp.Index > start {
			start = cp.Index
		}
	}
	return points(h, start, at, cands)
}

func points(h history, from, to int, skip map[uint]bool) []check.Point {
	var out []check.Point
	for _, pt := range h.Points[max(from, 0):min(to, len(h.Points))] {
		if !skip[pt.RunID] {
			out = append(out, check.Point{RunID: pt.RunID, Value: pt.Value})
		}
	}
	return out
}

// explicitBaseline fetches the runs --baseline runs=, label= or report=
// names, in time order; warm-up and unsuccessful runs and the candidates
// themselves are left out.
func explicitBaseline(ctx context.Context, cl *checkClient, bl baselineSpec, first checkRun, cands map[uint]bool, window int) ([]checkRun, error) {
	ids := bl.ids
	switch bl.kind {
	case "label":
		q := url.Values{"label": {bl.value}, "status": {string(rundoc.StatusSucceeded)}}
		listed, err := cl.listRuns(ctx, q, func(r checkRun) bool {
			return r.Label == bl.value && r.Workload == first.Workload && !r.Warmup && !cands[r.ID]
		})
		if err != nil {
			return nil, err
		}
		sortRuns(listed)
		if len(listed) > window {
			listed = listed[len(listed)-window:]
		}
		for _, r := range listed {
			ids = append(ids, r.ID)
		}
	case "report":
		rep, err := cl.Report(ctx, bl.value)
		if err != nil {
			return nil, fmt.Errorf("report %q: %w", bl.value, err)
		}
		for _, c := range rep.Columns {
			if c.Baseline {
				ids = c.Runs
			}
		}
	}
	var runs []checkRun
	for _, id := range ids {
		if cands[id] {
			continue
		}
		r, err := cl.run(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("baseline run #%d: %w", id, err)
		}
		if r.Status == rundoc.StatusSucceeded && !r.Warmup {
			runs = append(runs, r)
		}
	}
	sortRuns(runs)
	return runs, nil
}

func idText(ids []uint) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(parts, ", ")
}

// checkMarkdown renders the report for a pull-request comment.
func checkMarkdown(rep checkReport, base string) string {
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
			if verdict == check.VerdictRegression {
				verdict = "**" + verdict + "**"
			}
			method := map[string]string{check.MethodMannWhitney: "Mann-Whitney", check.MethodChangePoint: "change point", "": "—"}[r.Method]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(r.Metric), mdCell(r.Unit),
				sideText(r.Baseline), sideText(r.Candidate), change, p, method, verdict)
		}
		for _, r := range s.Results {
			if r.Verdict == check.VerdictRegression || r.Verdict == check.VerdictUndecided {
				fmt.Fprintf(&b, "\n- %s: %s", mdCell(r.Metric), mdCell(r.Reason))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
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
func sideText(s sideReport) string {
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
