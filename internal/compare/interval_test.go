package compare

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// bruteNullCounts counts, for every u, the ways of placing m baseline and
// n candidate values (no ties) in order such that u (baseline, candidate)
// pairs have the baseline value above: the Mann-Whitney U distribution,
// by enumerating every arrangement. Only for small m + n.
func bruteNullCounts(m, n int) []float64 {
	counts := make([]float64, m*n+1)
	for mask := 0; mask < 1<<(m+n); mask++ {
		bits := 0
		for b := mask; b > 0; b &= b - 1 {
			bits++
		}
		if bits != m {
			continue
		}
		u, below := 0, 0
		for p := 0; p < m+n; p++ {
			if mask>>p&1 == 1 {
				u += below // a baseline value above every candidate seen so far
			} else {
				below++
			}
		}
		counts[u]++
	}
	return counts
}

// bruteLogDiffs are all the differences log(y) − log(x), sorted.
func bruteLogDiffs(x, y []float64) []float64 {
	var d []float64
	for _, a := range x {
		for _, b := range y {
			d = append(d, math.Log(b)-math.Log(a))
		}
	}
	slices.Sort(d)
	return d
}

// bruteChange is the Hodges-Lehmann estimate of the candidate's change
// in percent, and the interval of shifts δ that the exact two-sided
// Mann-Whitney test of x against y − δ (in logs) does not reject at α,
// found by trying every gap between pairwise differences: a test
// inversion that shares no code with the package. ok is false when every
// shift is accepted at some end (no bounded interval).
func bruteChange(x, y []float64, alpha float64) (est, lo, hi float64, ok bool) {
	d := bruteLogDiffs(x, y)
	n := len(d)
	med := d[n/2]
	if n%2 == 0 {
		med = (d[n/2-1] + d[n/2]) / 2
	}
	counts := bruteNullCounts(len(x), len(y))
	total := 0.0
	for _, c := range counts {
		total += c
	}
	cdf := func(u int) float64 {
		s := 0.0
		for _, c := range counts[:u+1] {
			s += c
		}
		return s / total
	}
	// A shift δ strictly between d[j-1] and d[j] (0-based gaps j = 0..n)
	// leaves n−j differences above it: U(δ) = n − j.
	first, last := -1, -1
	for j := 0; j <= n; j++ {
		u := n - j
		p := 2 * cdf(min(u, n-u))
		if p > alpha {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if first <= 0 || last >= n {
		return pct(med), 0, 0, false
	}
	return pct(med), pct(d[first-1]), pct(d[last]), true
}

func pct(logRatio float64) float64 { return (math.Exp(logRatio) - 1) * 100 }

// groupCols makes a baseline and a candidate column of producer runs of
// one headline metric (record-send-rate) and one descriptive one
// (syscr, with the same values).
func groupCols(base, cand []float64) []Column {
	col := func(name string, first uint, vs []float64) Column {
		c := Column{Name: name}
		for i, v := range vs {
			c.Runs = append(c.Runs, run(first+uint(i), name,
				metric("record-send-rate", v, "records/s", HigherIsBetter),
				metric("syscr", v, "syscalls", LowerIsBetter)))
		}
		return c
	}
	return []Column{col("base", 100, base), col("cand", 200, cand)}
}

// jsonCellOf finds a cell of the JSON export as a generic map.
func jsonCellOf(t *testing.T, doc map[string]any, metric string, col int) map[string]any {
	t.Helper()
	for _, r := range doc["rows"].([]any) {
		row := r.(map[string]any)
		if row["metric"] == metric {
			return row["cells"].([]any)[col].(map[string]any)
		}
	}
	t.Fatalf("no row %q", metric)
	return nil
}

func num(t *testing.T, cell map[string]any, key string) float64 {
	t.Helper()
	v, ok := cell[key].(float64)
	if !ok {
		t.Fatalf("cell field %q = %v (%T), want a number", key, cell[key], cell[key])
	}
	return v
}

// TestChangeInterval checks the change's Hodges-Lehmann estimate and its
// distribution-free interval in the JSON and Markdown exports against a
// brute-force test inversion, and the states: borderline (α < p ≤ 2α),
// inconclusive (the interval holds 0 and a change beyond the threshold),
// unchanged (the interval inside ±threshold), with the repetitions the
// table suggests.
func TestChangeInterval(t *testing.T) {
	base := []float64{100, 101, 102, 103, 104, 105}
	tests := []struct {
		name      string
		base      []float64
		cand      []float64
		state     string
		wantMore  bool   // the table suggests more repetitions
		wantInMD  string // in the Markdown cell, besides the interval
		wantNoPCI bool   // the descriptive row has no interval
	}{
		// U = 6 of 36 pairs: exact two-sided p = 0.065, borderline.
		{"borderline", base, []float64{102.5, 103.5, 104.5, 106, 107, 108}, "borderline", true, "borderline", true},
		// Far apart: significant.
		{"significant", base, []float64{110, 111, 112, 113, 114, 115}, "significant", false, "✓", true},
		// Wide spread, no shift: inconclusive.
		{"inconclusive", []float64{80, 95, 110, 120, 90, 105}, []float64{85, 100, 115, 92, 108, 118}, "inconclusive", true, "inconclusive", true},
		// Tight, no shift: no change beyond ±5%.
		{"unchanged", base, []float64{100.5, 101.5, 102.5, 103.5, 104.5, 102.2}, "unchanged", false, "~", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Build(groupCols(tt.base, tt.cand), Options{})
			if err != nil {
				t.Fatal(err)
			}
			js, err := JSON(tab, Meta{})
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(js, &doc); err != nil {
				t.Fatal(err)
			}
			cell := jsonCellOf(t, doc, "record-send-rate", 1)
			est, lo, hi, ok := bruteChange(tt.base, tt.cand, tab.Alpha)
			if !ok {
				t.Fatal("brute force found no bounded interval")
			}
			for _, f := range []struct {
				key  string
				want float64
			}{{"hl_change_pct", est}, {"hl_ci_low", lo}, {"hl_ci_high", hi}} {
				if got := num(t, cell, f.key); math.Abs(got-f.want) > 1e-9 {
					t.Errorf("%s = %v, want %v (brute force)", f.key, got, f.want)
				}
			}
			if cell["state"] != tt.state {
				t.Errorf("state = %v, want %q", cell["state"], tt.state)
			}
			more := num(t, doc, "more_repetitions")
			if (more > 0) != tt.wantMore {
				t.Errorf("more_repetitions = %v, want > 0: %v", more, tt.wantMore)
			}
			interval := "[" + FormatDelta(lo) + ", " + FormatDelta(hi) + "]"
			md := Markdown(tab, Meta{})
			var line string
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "| **record-send-rate**") {
					line = l
				}
			}
			if !strings.Contains(line, FormatDelta(est)+" "+interval) || !strings.Contains(line, tt.wantInMD) {
				t.Errorf("Markdown row %q lacks %q and %q", line, FormatDelta(est)+" "+interval, tt.wantInMD)
			}
			// The descriptive row: change only, no interval, no verdict.
			d := jsonCellOf(t, doc, "syscr", 1)
			if d["hl_ci_low"] != nil || d["verdict"] != "" || d["p_value"] != nil {
				t.Errorf("descriptive cell = %v, want no interval, verdict or p-value", d)
			}
			if !strings.Contains(doc["legend"].(string), "Benjamini") {
				t.Errorf("legend %q does not state Benjamini–Hochberg", doc["legend"])
			}
		})
	}
}

// TestUndecidedStaysVisible: "hide unchanged" keeps borderline and
// inconclusive rows (they need more runs, not hiding), hides a tested
// row with no change beyond ±MinChange, and a descriptive row whose
// change is within ±MinChange; Flags and Undecided list what the table
// says.
func TestUndecidedStaysVisible(t *testing.T) {
	base := []float64{100, 101, 102, 103, 104, 105}
	for _, tt := range []struct {
		name   string
		cand   []float64
		hidden bool
	}{
		{"borderline", []float64{102.5, 103.5, 104.5, 106, 107, 108}, false},
		{"inconclusive", []float64{85, 100, 115, 92, 108, 118}, false},
		{"unchanged", []float64{100.5, 101.5, 102.5, 103.5, 104.5, 102.2}, true},
	} {
		tab, err := Build(groupCols(base, tt.cand), Options{HideUnchanged: true})
		if err != nil {
			t.Fatal(err)
		}
		hidden := slices.Contains(tab.Hidden, "record-send-rate")
		if hidden != tt.hidden {
			t.Errorf("%s: record-send-rate hidden %v, want %v", tt.name, hidden, tt.hidden)
		}
		und := tab.Undecided()
		if (len(und) == 1) == tt.hidden || len(tab.Flags()) != 0 {
			t.Errorf("%s: undecided %+v, flags %+v", tt.name, und, tab.Flags())
		}
		if len(und) == 1 && (und[0].Metric != "record-send-rate" || und[0].Column != "cand" || und[0].Cell.More < 1 ||
			tab.Columns[1].MoreRepetitions != min(und[0].Cell.More, MaxMoreRepetitions) || tab.Suggestion() == "") {
			t.Errorf("%s: undecided %+v, column %+v, suggestion %q", tt.name, und[0], tab.Columns[1], tab.Suggestion())
		}
	}
	// A descriptive row within ±5% is hidden; one beyond stays.
	tab, err := Build(groupCols(base, []float64{110, 111, 112, 113, 114, 115}), Options{HideUnchanged: true, Headline: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || tab.Rows[0].Headline || tab.Tested != 0 || len(tab.Flags()) != 0 || tab.MoreRepetitions != 0 {
		t.Errorf("no headline metrics, +9.8%%: rows %+v, tested %d", tab.Rows, tab.Tested)
	}
	tab, err = Build(groupCols(base, []float64{100.5, 101.5, 102.5, 103.5, 104.5, 102.2}), Options{HideUnchanged: true, Headline: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 0 || !slices.Equal(tab.Hidden, []string{"record-send-rate", "syscr"}) {
		t.Errorf("no headline metrics, ±1%%: rows %+v, hidden %q", tab.Rows, tab.Hidden)
	}
	if _, err := Build(groupCols(base, base), Options{MinChange: 100}); err == nil {
		t.Error("MinChange 100%: no error")
	}
}
