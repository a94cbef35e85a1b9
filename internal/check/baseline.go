package check

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// Baseline is a parsed --baseline: what the candidates are compared
// with.
type Baseline struct {
	// Kind is "" (the series' history), "runs", "label", "branch" or
	// "report".
	Kind string
	// IDs are the runs of Kind "runs".
	IDs []uint
	// Value is the label, branch or report slug of the other kinds.
	Value string
}

// ParseBaseline reads --baseline: "" (the history), runs=ID,ID,... (or
// just ID,ID,...), label=L, branch=B or report=SLUG.
func ParseBaseline(s string) (Baseline, error) {
	if s == "" {
		return Baseline{}, nil
	}
	kind, value, ok := strings.Cut(s, "=")
	if !ok {
		kind, value = "runs", s
	}
	switch kind {
	case "runs":
		ids, err := ParseIDs([]string{value})
		if err != nil || len(ids) == 0 {
			return Baseline{}, fmt.Errorf("want runs=ID,ID,... (or label=L, branch=B, report=SLUG), got %q", s)
		}
		return Baseline{Kind: kind, IDs: ids}, nil
	case "label", "branch", "report":
		if strings.TrimSpace(value) == "" {
			return Baseline{}, fmt.Errorf("%s= needs a value", kind)
		}
		if kind == "report" && strings.ContainsAny(value, "/?#") {
			return Baseline{}, fmt.Errorf("report=%q: give the report's slug, the part after /r/", value)
		}
		return Baseline{Kind: kind, Value: value}, nil
	}
	return Baseline{}, fmt.Errorf("unknown form %q: want runs=ID,..., label=L, branch=B or report=SLUG", kind+"=")
}

// historyBaseline is the series' points before the first candidate, back
// to the last change point before it (a change point at the first
// candidate is the candidates' own change: it does not cut the baseline).
// For another series (--baseline branch=B), which does not hold the
// candidates, "before" is by time.
func historyBaseline(h History, first Run, cands map[uint]bool) []Point {
	at := slices.IndexFunc(h.Points, func(pt HistoryPoint) bool { return cands[pt.RunID] })
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

func points(h History, from, to int, skip map[uint]bool) []Point {
	var out []Point
	for _, pt := range h.Points[max(from, 0):min(to, len(h.Points))] {
		if !skip[pt.RunID] {
			out = append(out, Point{RunID: pt.RunID, Value: pt.Value})
		}
	}
	return out
}

// explicitBaseline fetches the runs --baseline runs=, label= or report=
// names, in time order; warm-up and unsuccessful runs and the candidates
// themselves are left out. A label's runs are its latest window.
func explicitBaseline(ctx context.Context, src Source, bl Baseline, first Run, cands map[uint]bool, window int) ([]Run, error) {
	ids := bl.IDs
	switch bl.Kind {
	case "label":
		listed, err := src.Runs(ctx, RunFilter{Label: bl.Value, Status: rundoc.StatusSucceeded}, func(r Run) bool {
			return r.Label == bl.Value && r.Workload == first.Workload && !r.Warmup && !cands[r.ID]
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
		reportIDs, err := src.ReportBaseline(ctx, bl.Value)
		if err != nil {
			return nil, fmt.Errorf("report %q: %w", bl.Value, err)
		}
		ids = reportIDs
	}
	var runs []Run
	for _, id := range ids {
		if cands[id] {
			continue
		}
		r, err := src.Run(ctx, id)
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
