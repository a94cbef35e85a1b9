package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
)

// Merged latency histograms: repetitions of one configuration combine,
// beside the median of their percentiles (a figure of the runs), into
// the percentiles of all their values together (the histograms added),
// which is what "the p99 of these runs" means to most readers. Merged
// rows are descriptive: their values are not samples of runs, so no
// test applies to them.

// MergedSuffix ends the name of a merged row: "record-latency-p99" has
// the median of the runs' p99s, "record-latency-p99 (merged)" the p99 of
// their values together.
const MergedSuffix = " (merged)"

// MergedHistogram is the histogram of one kind of all of a column's
// measured runs that have one, added.
type MergedHistogram struct {
	// Column is the column's index in Table.Columns.
	Column int
	Kind   string
	// Runs are the runs merged; Missing the column's runs without a
	// histogram of the kind (run before kbench kept them, or imported
	// as summaries).
	Runs, Missing []uint
	Hist          *hdr.Histogram
}

// quantileOf is the quantile (0..100) a latency metric's suffix names,
// with avg and max as -1 and 101; ok is false for another suffix.
func quantileOf(suffix string) (q float64, ok bool) {
	switch suffix {
	case "avg":
		return -1, true
	case "max":
		return 101, true
	case "p50":
		return 50, true
	case "p75":
		return 75, true
	case "p90":
		return 90, true
	case "p95":
		return 95, true
	case "p99":
		return 99, true
	case "p999":
		return 99.9, true
	case "p9999":
		return 99.99, true
	}
	return 0, false
}

// mergedValue is the merged histogram's figure for quantile q
// (quantileOf), in ms.
func mergedValue(h *hdr.Histogram, q float64) float64 {
	switch q {
	case -1:
		return h.Mean() / 1000
	case 101:
		return float64(h.Max()) / 1000
	}
	return float64(h.ValueAtQuantile(q)) / 1000
}

// mergeHistograms adds up each column's histograms of each kind (the
// window's of its measured runs, hs by run id).
func mergeHistograms(measured [][]rundoc.Run, hs map[uint][]rundoc.Histogram) ([]MergedHistogram, []string) {
	var out []MergedHistogram
	var problems []string
	for ci, runs := range measured {
		for _, kind := range rundoc.HistogramKinds {
			m := MergedHistogram{Column: ci, Kind: kind}
			for _, r := range runs {
				i := slices.IndexFunc(hs[r.ID], func(h rundoc.Histogram) bool { return h.Kind == kind })
				if i < 0 {
					m.Missing = append(m.Missing, r.ID)
					continue
				}
				d, err := runhist.Check(hs[r.ID][i])
				if err != nil {
					problems = append(problems, fmt.Sprintf("run #%d: %v", r.ID, err))
					m.Missing = append(m.Missing, r.ID)
					continue
				}
				if m.Hist == nil {
					m.Hist = d
				} else if err := m.Hist.Merge(d); err != nil {
					problems = append(problems, fmt.Sprintf("run #%d: %v", r.ID, err))
					m.Missing = append(m.Missing, r.ID)
					continue
				}
				m.Runs = append(m.Runs, r.ID)
			}
			if m.Hist != nil {
				out = append(out, m)
			}
		}
	}
	return out, problems
}

// addMergedRows puts after each row of a latency percentile, when some
// column merges two or more runs' histograms of its kind, the row of the
// merged histogram's figure: descriptive, its cells' N the runs merged.
func (t *Table) addMergedRows() {
	merged := map[string]map[int]*MergedHistogram{}
	for i := range t.Merged {
		m := &t.Merged[i]
		if merged[m.Kind] == nil {
			merged[m.Kind] = map[int]*MergedHistogram{}
		}
		merged[m.Kind][m.Column] = m
	}
	var rows []Row
	for _, row := range t.Rows {
		rows = append(rows, row)
		cut := strings.LastIndexByte(row.Metric, '-')
		if cut < 0 || row.Unit != "ms" {
			continue
		}
		byCol := merged[row.Metric[:cut]]
		q, ok := quantileOf(row.Metric[cut+1:])
		if byCol == nil || !ok || !slices.ContainsFunc(t.Merged, func(m MergedHistogram) bool {
			return m.Kind == row.Metric[:cut] && len(m.Runs) > 1
		}) {
			continue
		}
		mr := Row{Section: row.Section, Metric: row.Metric + MergedSuffix, Unit: row.Unit, Better: row.Better,
			Help:  "all runs' values together: their histograms added, then " + row.Metric[cut+1:] + " taken; descriptive, not tested",
			Cells: make([]Cell, len(row.Cells))}
		for ci := range mr.Cells {
			m := byCol[ci]
			if m == nil {
				continue
			}
			c := Cell{N: len(m.Runs), Value: mergedValue(m.Hist, q)}
			c.Values = []float64{c.Value}
			if len(m.Missing) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("without %s: no histogram", idList(m.Missing)))
			}
			mr.Cells[ci] = c
		}
		for ci := 1; ci < len(mr.Cells); ci++ {
			describeMergedCell(&mr.Cells[ci], mr.Cells[0])
		}
		mr.Decimals = rowDecimals(mr.Cells)
		rows = append(rows, mr)
	}
	t.Rows = rows
}

// describeMergedCell fills in a merged cell's change against the
// baseline's: shown, never tested.
func describeMergedCell(c *Cell, base Cell) {
	if !setChange(c, base) {
		return
	}
	c.Test = TestDescriptive
	c.Notes = append(c.Notes, "merged histograms: descriptive, not tested")
}
