package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/check"
	"github.com/kbench/kbench/internal/rundoc"
)

// Check is `kbench check`.
var Check = &Command{
	Name:      "check",
	UsageLine: "check --run ID",
	Short:     "for CI: did the run regress against its series' history? (exit 1 if so, 3 if it cannot tell)",
	Run:       cmdCheck,
}

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

// cmdCheck is `kbench check`: its flags, the server it reads through
// (checkClient) and its exit code; package check selects, decides and
// reports.
func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kbench check", checkUsage, stderr)
	fs.showUsage, fs.env = true, theseFlags("server", "token")
	serverURL := fs.String("server", "http://127.0.0.1:8080", "the kbench server (also KBENCH_SERVER)")
	token := fs.String("token", "", "the server's token, sent as Authorization: Bearer (also KBENCH_TOKEN)")
	var runFlag, metaFlag, metricFlag listFlag
	fs.Var(&runFlag, "run", "a candidate run's ID (repeatable, or a comma list)")
	label := fs.String("label", "", "candidates: the runs with this label")
	fs.Var(&metaFlag, "meta", "candidates: the runs tagged KEY=VALUE, e.g. commit=abc123 (repeatable: all must match)")
	baseline := fs.String("baseline", "", "runs=ID,..., label=L, branch=B or report=SLUG (default: the series' history)")
	var opts check.Options
	cp := &opts.ChangePoint
	fs.Float64Var(&opts.Threshold, "threshold", check.DefaultThreshold, "the smallest change that counts, in percent")
	fs.Var(&metricFlag, "metric", "a metric to check (repeatable, or a comma list; default: the workload's headline metrics)")
	fs.IntVar(&cp.Window, "window", changepoint.DefaultWindow, fmt.Sprintf("Otava's window_len for the change-point test (2 to %d)", changepoint.MaxWindow))
	fs.Float64Var(&cp.MaxPValue, "max-pvalue", changepoint.DefaultMaxPValue, "Otava's max_pvalue: the change-point test's significance level")
	fs.Float64Var(&cp.MinMagnitude, "min-magnitude", 0, "Otava's min_magnitude, a fraction (0.05 = 5%)")
	fs.IntVar(&cp.MinSegment, "min-segment", changepoint.DefaultMinSegment, "the fewest runs each side of a change point must hold for it to count; 1 decides on every change point Otava reports, as with a single candidate")
	wait := fs.Duration("wait", 0, "wait up to this long (e.g. 10m) for the candidates to finish")
	asJSON := fs.Bool("json", false, "print JSON instead of Markdown")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	ids, err := check.ParseIDs(runFlag)
	if err != nil {
		return fs.usageError("--run: %v", err)
	}
	meta, err := rundoc.ParseMeta(metaFlag)
	if err != nil {
		return fs.usageError("%v", err)
	}
	switch {
	case len(ids) == 0 && *label == "" && len(meta) == 0:
		return fs.usageError("name the candidates: --run ID, --label L or --meta KEY=VALUE")
	case len(ids) > 0 && (*label != "" || len(meta) > 0):
		return fs.usageError("--run names the candidates itself: leave out --label and --meta")
	case *wait < 0:
		return fs.usageError("--wait: must not be negative")
	}
	bl, err := check.ParseBaseline(*baseline)
	if err != nil {
		return fs.usageError("--baseline: %v", err)
	}
	if !(opts.Threshold > 0) {
		return fs.usageError("--threshold %v: must be above 0 (percent)", opts.Threshold)
	}
	if cp.Window < 2 || cp.Window > changepoint.MaxWindow {
		return fs.usageError("--window %d: must be from 2 to %d", cp.Window, changepoint.MaxWindow)
	}
	if !(cp.MaxPValue > 0) {
		return fs.usageError("--max-pvalue %v: must be in (0, 1]", cp.MaxPValue)
	}
	if cp.MinSegment < 1 {
		return fs.usageError("--min-segment %d: must be at least 1 run each side of a change point (1: decide on every change point Otava reports)", cp.MinSegment)
	}
	if err := opts.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	base := strings.TrimRight(*serverURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return fs.usageError("--server: must be an http:// or https:// URL, got %q", *serverURL)
	}
	cl := &checkClient{newAPIClient(base, *token)}
	sel := check.Selector{IDs: ids, Label: *label, Meta: meta}

	fail := func(err error) int {
		fmt.Fprintf(stderr, "kbench check: could not decide: %v\n", err)
		return 3
	}
	cands, err := check.Candidates(ctx, cl, sel, *wait, checkPollInterval, func(pending error) {
		fmt.Fprintf(stderr, "kbench check: %v; waiting up to %s\n", pending, *wait)
	})
	if err != nil {
		return fail(err)
	}
	rep, err := check.Assess(ctx, cl, cands, bl, splitLists(metricFlag), opts)
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(err)
		}
		stdout.Write(append(data, '\n'))
	} else {
		fmt.Fprint(stdout, rep.Markdown(base))
	}
	return rep.ExitCode
}

// checkClient is check.Source on the server's JSON API.
type checkClient struct {
	*client.Client
}

// Base is the server's URL.
func (c *checkClient) Base() string { return c.BaseURL() }

// Run is GET /api/runs/{id}; a 404 matches check.ErrNotFound.
func (c *checkClient) Run(ctx context.Context, id uint) (check.Run, error) {
	var r check.Run
	err := c.Get(ctx, fmt.Sprintf("/api/runs/%d", id), &r)
	if client.StatusCode(err) == http.StatusNotFound {
		return r, check.NotFound(err)
	}
	return r, err
}

// Runs pages through GET /api/runs?label&status and returns the runs
// keep accepts, newest first.
func (c *checkClient) Runs(ctx context.Context, f check.RunFilter, keep func(check.Run) bool) ([]check.Run, error) {
	q := url.Values{}
	if f.Label != "" {
		q.Set("label", f.Label)
	}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	const page = 500
	var out []check.Run
	q.Set("limit", strconv.Itoa(page))
	for offset := 0; ; offset += page {
		q.Set("offset", strconv.Itoa(offset))
		var ans client.RunList
		if err := c.Get(ctx, "/api/runs?"+q.Encode(), &ans); err != nil {
			return nil, err
		}
		for _, r := range ans.Runs {
			if keep(r) {
				out = append(out, r)
			}
		}
		if len(ans.Runs) == 0 || int64(offset+len(ans.Runs)) >= ans.Total {
			return out, nil
		}
	}
}

// History is GET /api/history with the query's parameters.
func (c *checkClient) History(ctx context.Context, hq check.HistoryQuery) (check.History, error) {
	q := url.Values{}
	q.Set("metric", hq.Metric)
	q.Set("window", strconv.Itoa(hq.ChangePoint.Window))
	q.Set("max_pvalue", strconv.FormatFloat(hq.ChangePoint.MaxPValue, 'g', -1, 64))
	q.Set("min_magnitude", strconv.FormatFloat(hq.ChangePoint.MinMagnitude, 'g', -1, 64))
	q.Set("min_segment", strconv.Itoa(hq.ChangePoint.MinSegment))
	if hq.Run != 0 {
		q.Set("run", strconv.FormatUint(uint64(hq.Run), 10))
	} else {
		q.Set("fingerprint", hq.Fingerprint)
		q.Set("branch", hq.Branch)
	}
	var h check.History
	err := c.Get(ctx, "/api/history?"+q.Encode(), &h)
	if client.StatusCode(err) == http.StatusNotFound {
		// The run was just read, so a 404 here is most likely a server
		// from before the history API.
		return h, fmt.Errorf("%w (a server without the history API answers so: upgrade it, or give --baseline runs=…)", err)
	}
	return h, err
}

// checkFunctionsWait bounds how long check waits for the server to name
// the functions that moved (it pauses while a run executes there); then
// the report says they are still being named.
const checkFunctionsWait = 2 * time.Minute

// Functions is GET /api/functions, asked again every checkPollInterval
// while the server answers "computing", at most checkFunctionsWait. A
// server without the route (404) names none: the zero answer.
func (c *checkClient) Functions(ctx context.Context, base, target []uint) (wire.Functions, error) {
	deadline := time.Now().Add(checkFunctionsWait)
	for {
		f, err := c.Client.Functions(ctx, base, target)
		if client.StatusCode(err) == http.StatusNotFound {
			return wire.Functions{}, nil
		}
		if err != nil {
			return wire.Functions{}, err
		}
		if f.Status != wire.FunctionsComputing || !time.Now().Add(checkPollInterval).Before(deadline) {
			return *f, nil
		}
		t := time.NewTimer(checkPollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return *f, nil
		case <-t.C:
		}
	}
}

// ReportBaseline is the baseline column's runs of GET /r/{slug}.json.
func (c *checkClient) ReportBaseline(ctx context.Context, slug string) ([]uint, error) {
	rep, err := c.Report(ctx, slug)
	if err != nil {
		return nil, err
	}
	var ids []uint
	for _, col := range rep.Columns {
		if col.Baseline {
			ids = col.Runs
		}
	}
	return ids, nil
}
