package compare

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

func TestSectionOf(t *testing.T) {
	tests := []struct{ metric, want string }{
		{"record-send-rate", SectionThroughput},
		{"records-consumed-rate", SectionThroughput},
		{"records-sent", SectionThroughput},
		{"records-consumed-total", SectionThroughput},
		{"bytes-consumed-rate", SectionThroughput},
		{"bytes-consumed-total", SectionThroughput},
		{"mb-per-sec", SectionThroughput},
		{"request-rate", SectionThroughput},
		{"record-latency-avg", SectionLatency},
		{"record-latency-p999", SectionLatency},
		{"record-latency-intended-max", SectionLatency},
		{"request-latency-max", SectionLatency},
		{"fetch-latency-avg", SectionLatency},
		{"e2e-p99", SectionLatency},
		{"fetch-rate", SectionFetch},
		{"fetch-records-per-sec", SectionFetch},
		{"fetch-size-max", SectionFetch},
		{"fetch-time", SectionFetch},
		{"records-per-request-avg", SectionFetch},
		{"records-lag-max", SectionFetch},
		{"rebalance-time", SectionFetch},
		{"syscw", SectionNetwork},
		{"syscr", SectionNetwork},
		{"wchar", SectionNetwork},
		{"rchar", SectionNetwork},
		{"bytes-per-write-syscall", SectionNetwork},
		{"bytes-per-read-syscall", SectionNetwork},
		{"syscw-rate", SectionNetwork},
		{"process-cpu-avg", SectionCPU},
		{"process-cpu-p99", SectionCPU},
		{"cpu-seconds-per-gb", SectionCPU}, // stored runs before cpu-seconds-per-gib
		{"cpu-seconds-per-gib", SectionCPU},
		{"gc-count", SectionCPU},
		{"gc-pause-total", SectionCPU},
		{"heap-peak", SectionCPU},
		{"batch-size-avg", SectionOther},
		{"record-error-total", SectionOther},
		{"record-retry-total", SectionOther},
		{"p99", SectionOther},
		{"x-p", SectionOther},
	}
	for _, tt := range tests {
		if got := SectionOf(tt.metric); got != tt.want {
			t.Errorf("SectionOf(%q) = %q, want %q", tt.metric, got, tt.want)
		}
	}
	if got := Sections(); len(got) != 6 || got[0] != SectionThroughput || got[5] != SectionOther {
		t.Errorf("Sections() = %q", got)
	}
}

func TestColumns(t *testing.T) {
	r := func(id uint, label, group string, warmup bool) rundoc.Run {
		return rundoc.Run{ID: id, Label: label, GroupID: group, Warmup: warmup}
	}
	runs := []rundoc.Run{
		r(1, "trunk", "ga", true), r(2, "trunk", "ga", false), r(3, "branch", "gb", false),
		r(4, "trunk", "ga", false), r(5, "", "", false), r(6, "trunk", "gc", false), r(7, "branch", "", false),
	}
	names := func(cols []Column) []string {
		var out []string
		for _, c := range cols {
			var ids []string
			for _, r := range c.Runs {
				ids = append(ids, "#"+itoa(r.ID))
			}
			out = append(out, c.Name+"="+strings.Join(ids, ","))
		}
		return out
	}
	tests := []struct {
		by   string
		want []string
	}{
		{ByRun, []string{"#1 trunk=#1", "#2 trunk=#2", "#3 branch=#3", "#4 trunk=#4", "#5=#5", "#6 trunk=#6", "#7 branch=#7"}},
		{"", []string{"#1 trunk=#1", "#2 trunk=#2", "#3 branch=#3", "#4 trunk=#4", "#5=#5", "#6 trunk=#6", "#7 branch=#7"}},
		{ByLabel, []string{"trunk=#1,#2,#4,#6", "branch=#3,#7", "(no label)=#5"}},
		{ByGroup, []string{"trunk (group ga)=#1,#2,#4", "branch=#3", "#5=#5", "trunk (group gc)=#6", "#7 branch=#7"}},
	}
	for _, tt := range tests {
		if got := names(Columns(runs, tt.by)); !slices.Equal(got, tt.want) {
			t.Errorf("Columns(by %q) = %q, want %q", tt.by, got, tt.want)
		}
	}
	if got := Columns(nil, ByLabel); len(got) != 0 {
		t.Errorf("Columns(nil) = %v, want none", got)
	}
}

func itoa(id uint) string { return FormatNumber(float64(id)) }

// single builds a table of one single-run column per metric set.
func single(t *testing.T, opts Options, sets ...[]rundoc.Metric) *Table {
	t.Helper()
	var cols []Column
	for i, ms := range sets {
		r := run(uint(i+1), "", ms...)
		cols = append(cols, Column{Name: runName(r), Runs: []rundoc.Run{r}})
	}
	tab, err := Build(cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func rowOf(t *testing.T, tab *Table, metric string) Row {
	t.Helper()
	for _, r := range tab.Rows {
		if r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %q in %v", metric, tab.Rows)
	return Row{}
}

// TestSingleRunArithmetic checks deltas and direction colouring of single
// runs: a verdict by direction, flagged as untested.
func TestSingleRunArithmetic(t *testing.T) {
	tests := []struct {
		name         string
		better       rundoc.Better
		base, target float64
		wantDelta    *float64
		wantSign     int
		wantVerdict  string
		wantChange   string
	}{
		{"rate up", HigherIsBetter, 1_000_000, 1_034_000, ptr(3.4), 1, VerdictBetter, "+3.4% ✓?"},
		{"rate down", HigherIsBetter, 1_000_000, 880_000, ptr(-12), -1, VerdictWorse, "−12.0% ✗?"},
		{"latency up", LowerIsBetter, 4, 5, ptr(25), 1, VerdictWorse, "+25.0% ✗?"},
		{"latency down", LowerIsBetter, 4, 3, ptr(-25), -1, VerdictBetter, "−25.0% ✓?"},
		{"no direction", "", 100, 150, ptr(50), 1, VerdictNone, "+50.0%"},
		{"no direction equal", "", 100, 100, ptr(0), 0, VerdictNone, "0.0% ="},
		{"equal", HigherIsBetter, 7, 7, ptr(0), 0, VerdictSame, "0.0% ="},
		{"doubled", HigherIsBetter, 100, 350, ptr(250), 1, VerdictBetter, "+250% ✓?"},
		{"from zero", LowerIsBetter, 0, 3, nil, 1, VerdictWorse, "from 0 ✗?"},
		{"zero to zero", LowerIsBetter, 0, 0, ptr(0), 0, VerdictSame, "0.0% ="},
		{"negative base", HigherIsBetter, -10, -5, ptr(50), 1, VerdictBetter, "+50.0% ✓?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := single(t, Options{Headline: []string{"m"}},
				[]rundoc.Metric{metric("m", tt.base, "u", tt.better)},
				[]rundoc.Metric{metric("m", tt.target, "u", tt.better)})
			c := rowOf(t, tab, "m").Cells[1]
			if !floatPtrEq(c.DeltaPct, tt.wantDelta) {
				t.Errorf("delta = %v, want %v", deref(c.DeltaPct), deref(tt.wantDelta))
			}
			if c.Sign != tt.wantSign || c.Verdict != tt.wantVerdict || c.Test != TestSingleRuns {
				t.Errorf("sign, verdict, test = %d, %q, %q; want %d, %q, %q", c.Sign, c.Verdict, c.Test, tt.wantSign, tt.wantVerdict, TestSingleRuns)
			}
			if c.P != nil {
				t.Errorf("p = %v, want none for single runs", *c.P)
			}
			if !slices.Contains(c.Notes, "single runs: no significance test") {
				t.Errorf("notes = %q, want the single-runs note", c.Notes)
			}
			if got := tab.ChangeText(c); got != tt.wantChange {
				t.Errorf("ChangeText = %q, want %q", got, tt.wantChange)
			}
			if b := rowOf(t, tab, "m").Cells[0]; b.Test != TestNone || b.Verdict != "" || b.DeltaPct != nil || tab.ChangeText(b) != "" {
				t.Errorf("baseline cell compared: %+v", b)
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func floatPtrEq(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(*a-*b) < 1e-9
}

// groupTable builds a two-column table from two samples of metric "m".
func groupTable(t *testing.T, better rundoc.Better, base, target []float64) (*Table, Cell) {
	t.Helper()
	col := func(name string, first uint, vs []float64) Column {
		c := Column{Name: name}
		for i, v := range vs {
			c.Runs = append(c.Runs, run(first+uint(i), name, metric("m", v, "records/s", better)))
		}
		return c
	}
	tab, err := Build([]Column{col("base", 100, base), col("target", 200, target)}, Options{Headline: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	return tab, rowOf(t, tab, "m").Cells[1]
}

func TestSignificance(t *testing.T) {
	far := []float64{100, 101, 99, 102, 98, 100.5, 99.5, 101.5}
	farDown := []float64{80, 81, 79, 82, 78, 80.5, 79.5, 81.5}
	same1 := []float64{100, 102, 98, 101, 99, 103, 97, 100.5}
	same2 := []float64{101, 99, 100, 102.5, 98.5, 97.5, 103, 100.2}

	t.Run("clearly different, higher is better", func(t *testing.T) {
		tab, c := groupTable(t, HigherIsBetter, far, farDown)
		if c.Test != TestSignificant || c.P == nil || *c.P >= 0.05 || c.Verdict != VerdictWorse {
			t.Fatalf("test %q p %v verdict %q; want significant, p < 0.05, worse", c.Test, deref(c.P), c.Verdict)
		}
		if got := tab.ChangeText(c); got != "−20.0% ✗" {
			t.Errorf("ChangeText = %q, want −20.0%% ✗", got)
		}
		if got := tab.HLText(c); !strings.HasPrefix(got, "−20.0% [") || !strings.Contains(got, "] adj. p") {
			t.Errorf("HLText = %q, want −20.0%% [interval] adj. p=…", got)
		}
		if c.N != 8 || c.Lo == nil || c.Hi == nil || !(*c.Lo <= c.Value && c.Value <= *c.Hi) {
			t.Errorf("n %d, interval %v–%v around %v; want 8 samples and an interval around the median", c.N, deref(c.Lo), deref(c.Hi), c.Value)
		}
		if c.Value != 80.25 {
			t.Errorf("median = %v, want 80.25", c.Value)
		}
	})
	t.Run("clearly different, lower is better", func(t *testing.T) {
		_, c := groupTable(t, LowerIsBetter, far, farDown)
		if c.Test != TestSignificant || c.Verdict != VerdictBetter {
			t.Fatalf("test %q verdict %q; want significant, better", c.Test, c.Verdict)
		}
	})
	t.Run("clearly different, no direction", func(t *testing.T) {
		tab, c := groupTable(t, "", far, farDown)
		if c.Test != TestSignificant || c.Verdict != VerdictNone || !strings.HasSuffix(tab.ChangeText(c), "% ≠") {
			t.Fatalf("test %q verdict %q change %q; want significant, no verdict, ≠", c.Test, c.Verdict, tab.ChangeText(c))
		}
	})
	t.Run("clearly equal", func(t *testing.T) {
		tab, c := groupTable(t, HigherIsBetter, same1, same2)
		if c.Test != TestNotSignificant || c.P == nil || *c.P < 0.05 || c.Verdict != VerdictSame {
			t.Fatalf("test %q p %v verdict %q; want not significant, p ≥ 0.05, same", c.Test, deref(c.P), c.Verdict)
		}
		if got := tab.ChangeText(c); !strings.HasSuffix(got, "% ~") {
			t.Errorf("ChangeText = %q, want ~", got)
		}
		if got := tab.HLText(c); !strings.Contains(got, "] adj. p=") {
			t.Errorf("HLText = %q, want the interval with the adjusted p-value", got)
		}
		if c.State != StateUnchanged || c.PAdj == nil || *c.PAdj != *c.P {
			t.Errorf("state %q, adjusted p %v (raw %v); want unchanged, adjusted = raw for the one tested change", c.State, deref(c.PAdj), *c.P)
		}
		if !c.Unchanged() {
			t.Errorf("Unchanged() = false for a ~ cell")
		}
	})
	t.Run("clearly equal, no direction", func(t *testing.T) {
		_, c := groupTable(t, "", same1, same2)
		if c.Test != TestNotSignificant || c.Verdict != VerdictNone {
			t.Fatalf("test %q verdict %q; want not significant, no verdict", c.Test, c.Verdict)
		}
	})
	t.Run("too few, 3 vs 3", func(t *testing.T) {
		tab, c := groupTable(t, HigherIsBetter, far[:3], farDown[:3])
		if c.Test != TestTooFew || c.Verdict != VerdictNone || c.P == nil {
			t.Fatalf("test %q verdict %q p %v; want too few samples, no verdict, a p-value", c.Test, c.Verdict, deref(c.P))
		}
		if !containsPrefix(c.Notes, "too few samples (need ≥ 4 per side") {
			t.Errorf("notes = %q, want too few samples (need ≥ 4 per side)", c.Notes)
		}
		if got := tab.ChangeText(c); got != "−20.0% n<4" {
			t.Errorf("ChangeText = %q, want %q", got, "−20.0% n<4")
		}
		if c.Lo != nil || !containsPrefix(c.Notes, "no 95% interval: too few samples (need ≥ 6, have 3)") {
			t.Errorf("interval %v, notes %q; want none, with a note", deref(c.Lo), c.Notes)
		}
		if c.Unchanged() {
			t.Errorf("Unchanged() = true for an untestable change")
		}
	})
	t.Run("too few, 3 vs 8", func(t *testing.T) {
		_, c := groupTable(t, HigherIsBetter, far[:3], farDown)
		if c.Test != TestTooFew || c.Verdict != VerdictNone {
			t.Fatalf("test %q verdict %q; want too few samples, no verdict", c.Test, c.Verdict)
		}
	})
	t.Run("single run against a group", func(t *testing.T) {
		_, c := groupTable(t, HigherIsBetter, far[:1], farDown)
		if c.Test != TestTooFew || c.Verdict != VerdictNone || c.P != nil {
			t.Fatalf("test %q verdict %q p %v; want too few samples, no verdict, no p", c.Test, c.Verdict, deref(c.P))
		}
		if c.DeltaPct == nil || math.Abs(*c.DeltaPct-(80.25/100-1)*100) > 1e-9 {
			t.Errorf("delta = %v, want the change of the median", deref(c.DeltaPct))
		}
	})
	t.Run("4 vs 4 apart is enough", func(t *testing.T) {
		_, c := groupTable(t, HigherIsBetter, far[:4], farDown[:4])
		if c.Test != TestSignificant || c.Verdict != VerdictWorse {
			t.Fatalf("test %q p %v verdict %q; want significant, worse", c.Test, deref(c.P), c.Verdict)
		}
	})
	t.Run("all equal", func(t *testing.T) {
		_, c := groupTable(t, HigherIsBetter, []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5})
		if c.Test != TestNotSignificant || c.Verdict != VerdictSame || c.Sign != 0 || *c.P != 1 {
			t.Fatalf("test %q verdict %q sign %d p %v; want not significant, same, 0, 1", c.Test, c.Verdict, c.Sign, deref(c.P))
		}
	})
}

func containsPrefix(notes []string, prefix string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func TestMinSamples(t *testing.T) {
	tests := []struct {
		alpha, conf        float64
		wantTest, wantIntv int
	}{
		{0, 0, 4, 6}, // defaults: 0.05, 0.95
		{0.05, 0.95, 4, 6},
		{0.01, 0.99, 5, 8},
	}
	for _, tt := range tests {
		tab := single(t, Options{Alpha: tt.alpha, Confidence: tt.conf}, []rundoc.Metric{metric("m", 1, "", "")})
		if tab.TestMinN != tt.wantTest || tab.IntervalMinN != tt.wantIntv {
			t.Errorf("α %v, confidence %v: TestMinN %d, IntervalMinN %d; want %d, %d", tt.alpha, tt.conf, tab.TestMinN, tab.IntervalMinN, tt.wantTest, tt.wantIntv)
		}
	}
	for _, o := range []Options{{Alpha: 1}, {Alpha: -0.1}, {Confidence: 1.5}, {Alpha: math.NaN()}} {
		if _, err := Build([]Column{{Name: "a", Runs: []rundoc.Run{run(1, "")}}}, o); err == nil {
			t.Errorf("Build with %+v: no error", o)
		}
	}
}

func TestMedianAndInterval(t *testing.T) {
	vs := []float64{9, 3, 7, 1, 5, 11} // unsorted on purpose
	orig := slices.Clone(vs)
	var runs []rundoc.Run
	for i, v := range vs {
		runs = append(runs, run(uint(i+1), "g", metric("m", v, "ms", LowerIsBetter)))
	}
	tab, err := Build([]Column{{Name: "g", Runs: runs}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rowOf(t, tab, "m").Cells[0]
	if c.N != 6 || c.Value != 6 {
		t.Errorf("n %d median %v, want 6, 6", c.N, c.Value)
	}
	if !slices.Equal(c.Values, []float64{1, 3, 5, 7, 9, 11}) {
		t.Errorf("values = %v, want sorted samples", c.Values)
	}
	if c.Lo == nil || c.Hi == nil || *c.Lo != 1 || *c.Hi != 11 {
		t.Errorf("interval = %v–%v, want 1–11 (the extremes, for 6 samples at 95%%)", deref(c.Lo), deref(c.Hi))
	}
	// NewSample sorts in place: the runs' metrics must be untouched.
	for i, r := range runs {
		if r.Metrics[0].Value != orig[i] {
			t.Fatalf("run %d's value changed to %v", r.ID, r.Metrics[0].Value)
		}
	}
	if got := rowOf(t, tab, "m").ValueText(0); got != "6 ±83%" {
		t.Errorf("ValueText = %q, want %q", got, "6 ±83%")
	}
}

func TestUnitMismatch(t *testing.T) {
	cols := []Column{
		{Name: "a", Runs: []rundoc.Run{run(1, "a", metric("record-latency-p99", 4, "ms", LowerIsBetter))}},
		{Name: "b", Runs: []rundoc.Run{run(2, "b", metric("record-latency-p99", 0.004, "s", LowerIsBetter))}},
	}
	_, err := Build(cols, Options{})
	if !errors.Is(err, ErrUnitMismatch) {
		t.Fatalf("err = %v, want ErrUnitMismatch", err)
	}
	for _, want := range []string{`"record-latency-p99"`, `"ms"`, `"s"`, "#1", "#2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	// Within one column too.
	cols = []Column{{Name: "a", Runs: []rundoc.Run{run(1, "a", metric("m", 1, "ms", "")), run(2, "a", metric("m", 1, "", ""))}}}
	if _, err := Build(cols, Options{}); !errors.Is(err, ErrUnitMismatch) {
		t.Errorf("err = %v, want ErrUnitMismatch within a column", err)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("Build(no columns): no error")
	}
	if _, err := Build([]Column{{Name: "empty"}}, Options{}); err == nil || !strings.Contains(err.Error(), `"empty"`) {
		t.Errorf("Build(empty column) = %v, want an error naming it", err)
	}
}

func TestHideUnchanged(t *testing.T) {
	base := []rundoc.Metric{
		metric("record-send-rate", 100, "records/s", HigherIsBetter), // changes
		metric("records-sent", 500, "records", ""),                   // equal
		metric("gc-count", 12, "cycles", LowerIsBetter),              // equal
		metric("heap-peak", 60, "MiB", LowerIsBetter),                // changes in one column only
	}
	a := []rundoc.Metric{
		metric("record-send-rate", 110, "records/s", HigherIsBetter),
		metric("records-sent", 500, "records", ""),
		metric("gc-count", 12, "cycles", LowerIsBetter),
		metric("heap-peak", 60, "MiB", LowerIsBetter),
	}
	b := slices.Clone(a)
	b[3] = metric("heap-peak", 66, "MiB", LowerIsBetter) // descriptive, beyond ±5%: shown
	tab := single(t, Options{HideUnchanged: true}, base, a, b)
	var got []string
	for _, r := range tab.Rows {
		got = append(got, r.Metric)
	}
	if want := []string{"record-send-rate", "heap-peak"}; !slices.Equal(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}
	if want := []string{"records-sent", "gc-count"}; !slices.Equal(tab.Hidden, want) {
		t.Errorf("hidden = %q, want %q", tab.Hidden, want)
	}
	if !containsPrefix(tab.Notes, "2 unchanged metrics hidden: records-sent, gc-count") {
		t.Errorf("notes = %q, want the hidden metrics named", tab.Notes)
	}

	// ~ rows are hidden, untestable changes are not.
	far := []float64{100, 101, 99, 102, 98, 100.5}
	near := []float64{100.4, 99.2, 101.3, 98.7, 100.1, 101.9}
	var cols []Column
	for ci, vs := range [][]float64{far, near, {90, 91, 89}} {
		c := Column{Name: string(rune('A' + ci))}
		for i, v := range vs {
			c.Runs = append(c.Runs, run(uint(ci*10+i+1), c.Name,
				metric("noise", vs[i], "ms", LowerIsBetter),
				metric("changed", v*float64(ci+1), "ms", LowerIsBetter)))
		}
		cols = append(cols, c)
	}
	tab, err := Build(cols[:2], Options{HideUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 1 || tab.Rows[0].Metric != "changed" || !slices.Equal(tab.Hidden, []string{"noise"}) {
		t.Errorf("rows %v hidden %q; want only \"changed\", \"noise\" hidden", tab.Rows, tab.Hidden)
	}
	tab, err = Build(cols, Options{HideUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 {
		t.Errorf("rows %d, want 2: a 3-run column's change cannot be tested, so \"noise\" stays", len(tab.Rows))
	}

	// A single column has nothing to compare: nothing is hidden.
	tab = single(t, Options{HideUnchanged: true}, base)
	if len(tab.Rows) != 4 {
		t.Errorf("one column: %d rows, want 4", len(tab.Rows))
	}
}

func TestWarmupExcluded(t *testing.T) {
	cols := Columns(groupRuns(), ByLabel)
	tab, err := Build(cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c0 := tab.Columns[0]
	if c0.Name != "CLASSIC" || !c0.Baseline || !slices.Equal(c0.Runs, []uint{11, 12, 13, 14, 15, 16}) || !slices.Equal(c0.WarmupsExcluded, []uint{10}) {
		t.Errorf("column 0 = %+v, want CLASSIC, runs #11–#16, warm-up #10 excluded", c0)
	}
	if !containsPrefix(tab.Notes, "CLASSIC: median of 6 runs (#11, #12, #13, #14, #15, #16); warm-up run #10 excluded.") {
		t.Errorf("notes = %q, want the warm-up run named", tab.Notes)
	}
	rate := rowOf(t, tab, "records-consumed-rate").Cells[0]
	if rate.N != 6 {
		t.Errorf("n = %d, want 6 (warm-up left out)", rate.N)
	}
	// A column of warm-up runs only keeps them.
	w := run(1, "w")
	w.Warmup = true
	w.Metrics = []rundoc.Metric{metric("m", 1, "", "")}
	tab, err = Build([]Column{{Name: "w", Runs: []rundoc.Run{w}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rowOf(t, tab, "m").Cells[0].N != 1 || !containsPrefix(tab.Notes, "w: only warm-up runs (#1)") {
		t.Errorf("warm-up-only column: cell %+v notes %q", rowOf(t, tab, "m").Cells[0], tab.Notes)
	}
}

func TestGroupsTable(t *testing.T) {
	tab, err := Build(Columns(groupRuns(), ByLabel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		metric  string
		col     int
		test    string
		verdict string
	}{
		{"records-consumed-rate", 1, TestSignificant, VerdictBetter},
		{"records-consumed-rate", 2, TestTooFew, VerdictNone},
		{"mb-per-sec", 1, TestSignificant, VerdictBetter},
		{"fetch-records-per-sec", 1, TestSignificant, VerdictBetter},
		// Not headline metrics of the consumer: described, not tested.
		{"fetch-latency-avg", 1, TestDescriptive, VerdictNone},
		{"rebalance-time", 1, TestDescriptive, VerdictNone},
		{"fetch-time", 1, TestDescriptive, VerdictNone},
		{"syscr", 1, TestDescriptive, VerdictNone}, // 20% fewer: shown, not flagged
	}
	for _, tt := range tests {
		c := rowOf(t, tab, tt.metric).Cells[tt.col]
		if c.Test != tt.test || c.Verdict != tt.verdict {
			t.Errorf("%s, column %d: test %q verdict %q; want %q, %q", tt.metric, tt.col, c.Test, c.Verdict, tt.test, tt.verdict)
		}
	}
	// Rows come in section order, first-seen order within a section.
	var got []string
	for _, r := range tab.Rows {
		if len(got) == 0 || got[len(got)-1] != r.Section {
			got = append(got, r.Section)
		}
	}
	if want := []string{SectionThroughput, SectionLatency, SectionFetch, SectionNetwork, SectionCPU}; !slices.Equal(got, want) {
		t.Errorf("sections = %q, want %q", got, want)
	}
	// The consumer's four rates are tested: 4 rows × the 6-run column
	// (the 3-run one has too few), adjusted together.
	if want := []string{"records-consumed-rate", "mb-per-sec", "fetch-records-per-sec", "fetch-mb-per-sec"}; !slices.Equal(tab.Headline, want) {
		t.Errorf("headline = %q", tab.Headline)
	}
	if tab.Tested != 4 || !slices.Equal(tab.Workloads, []string{"consumer"}) {
		t.Errorf("tested %d workloads %q; want 4, consumer", tab.Tested, tab.Workloads)
	}
	// CONSUMER (branch) has 3 runs: one more per side to test it.
	if tab.MoreRepetitions != 1 || tab.Columns[2].MoreRepetitions != 1 || tab.Columns[1].MoreRepetitions != 0 {
		t.Errorf("more repetitions: table %d, columns %d, %d; want 1, 0, 1", tab.MoreRepetitions, tab.Columns[1].MoreRepetitions, tab.Columns[2].MoreRepetitions)
	}
}

func TestDirectionClash(t *testing.T) {
	tab := single(t, Options{},
		[]rundoc.Metric{metric("m", 1, "", HigherIsBetter)},
		[]rundoc.Metric{metric("m", 2, "", LowerIsBetter)})
	r := rowOf(t, tab, "m")
	if r.Better != "" || r.Cells[1].Verdict != VerdictNone || len(r.Notes) == 0 {
		t.Errorf("row %+v: want no direction, no verdict and a note", r)
	}
}

func TestMissingAndNonFinite(t *testing.T) {
	tab := single(t, Options{},
		[]rundoc.Metric{metric("only-base", 1, "", HigherIsBetter), metric("bad", math.NaN(), "", "")},
		[]rundoc.Metric{metric("only-target", 2, "", HigherIsBetter), metric("bad", 3, "", "")})
	if r := rowOf(t, tab, "only-base"); r.Cells[1].N != 0 || r.Cells[1].Test != TestNone || r.ValueText(1) != "—" || tab.ChangeText(r.Cells[1]) != "" {
		t.Errorf("missing target cell = %+v", r.Cells[1])
	}
	if c := rowOf(t, tab, "only-target").Cells[1]; c.N != 1 || c.Test != TestNone || !slices.Contains(c.Notes, "no baseline value") {
		t.Errorf("target without baseline = %+v", c)
	}
	if c := rowOf(t, tab, "bad").Cells[0]; c.N != 0 {
		t.Errorf("NaN counted: %+v", c)
	}
	if !containsPrefix(tab.Notes, "Values that are not finite numbers were left out: bad of run #1 (NaN).") {
		t.Errorf("notes = %q, want the NaN named", tab.Notes)
	}
}

func TestFormat(t *testing.T) {
	numbers := []struct {
		v    float64
		want string
	}{
		{0, "0"},
		{1234567, "1,234,567"},
		{1234567.89, "1,234,568"},
		{999.96, "1,000"},
		{123.45, "123.5"},
		{4.1234, "4.12"},
		{1.5, "1.50"},
		{0.01234, "0.0123"},
		{0.9996, "1.00"},
		{-2, "−2"},
		{-1234.6, "−1,235"},
		{-0.0000001, "−1e-07"},
		{1e-9, "1e-09"},
		{math.Inf(1), "∞"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range numbers {
		if got := FormatNumber(tt.v); got != tt.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	values := []struct {
		v          float64
		unit, want string
	}{
		{1234567, "records/s", "1,234,567 records/s"},
		{4.1234, "ms", "4.12 ms"},
		{87.46, "%", "87.46%"},
		{12, "", "12"},
	}
	for _, tt := range values {
		if got := FormatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
	deltas := []struct {
		pct  float64
		want string
	}{
		{3.4, "+3.4%"},
		{-12, "−12.0%"},
		{0, "0.0%"},
		{0.04, "+0.04%"},
		{-0.001, "−<0.01%"},
		{99.96, "+100.0%"},
		{250, "+250%"},
		{1234.4, "+1,234%"},
		{math.Inf(1), "+∞%"},
	}
	for _, tt := range deltas {
		if got := FormatDelta(tt.pct); got != tt.want {
			t.Errorf("FormatDelta(%v) = %q, want %q", tt.pct, got, tt.want)
		}
	}
	ps := []struct {
		p    float64
		want string
	}{{0.31, "p=0.310"}, {1, "p=1.000"}, {0.0001, "p<0.001"}, {0.002, "p=0.002"}}
	for _, tt := range ps {
		if got := FormatP(tt.p); got != tt.want {
			t.Errorf("FormatP(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
	intervals := []struct {
		c, lo, hi float64
		want      string
	}{
		{100, 98, 103, "±3.0%"},
		{100, 50, 120, "±50%"},
		{10, -1, 12, "[−1 … 12]"},
		{-10, -12, -9, "±20%"},
	}
	for _, tt := range intervals {
		if got := formatInterval(tt.c, tt.lo, tt.hi); got != tt.want {
			t.Errorf("formatInterval(%v, %v, %v) = %q, want %q", tt.c, tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestEscapeInline(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CONSUMER (trunk)", "CONSUMER (trunk)"},
		{"a|b", `a\|b`},
		{"`x`", "\\`x\\`"},
		{"*bold* _it_ <b> &amp; [l](u) ~s~ \\", `\*bold\* \_it\_ \<b\> \&amp; \[l\](u) \~s\~ \\`},
		{"two\nlines\r\n", "two lines  "},
	}
	for _, tt := range tests {
		if got := escapeInline(tt.in); got != tt.want {
			t.Errorf("escapeInline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRowDecimals(t *testing.T) {
	tests := []struct {
		values []float64
		want   []string
	}{
		{[]float64{94.76, 94.1}, []string{"94.76", "94.10"}},
		{[]float64{1_234_567, 1_300_000.4}, []string{"1,234,567", "1,300,000"}},
		{[]float64{12, 13}, []string{"12", "13"}},
		{[]float64{0.0123, 2.5}, []string{"0.0123", "2.5000"}},
		// A whole value came whole from its source (a count; Kafka's
		// latencies in whole milliseconds): decimals would claim a
		// precision it never had.
		{[]float64{0.523, 200}, []string{"0.523", "200"}},
		{[]float64{94.76, 95}, []string{"94.76", "95"}},
		{[]float64{-3.5, 4}, []string{"−3.50", "4"}},
		{[]float64{-0.0001, 4}, []string{"−0.000100", "4"}},
	}
	for _, tt := range tests {
		var sets [][]rundoc.Metric
		for _, v := range tt.values {
			sets = append(sets, []rundoc.Metric{metric("m", v, "", "")})
		}
		r := rowOf(t, single(t, Options{}, sets...), "m")
		for i, want := range tt.want {
			if got := r.ValueText(i); got != want {
				t.Errorf("values %v: ValueText(%d) = %q, want %q", tt.values, i, got, want)
			}
		}
	}
}
