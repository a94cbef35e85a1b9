package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/rundoc"
)

// fakeSource is a Source over a fixed list of runs: one series, whose
// history of the metric "record-send-rate" is every run's value in time
// order, with the change points given.
type fakeSource struct {
	runs         []Run
	changePoints []int
	// running: how many more times Run answers running for an ID.
	running map[uint]int
	queries []HistoryQuery
}

func (f *fakeSource) Base() string { return "http://kbench.test" }

func (f *fakeSource) Run(_ context.Context, id uint) (Run, error) {
	for _, r := range f.runs {
		if r.ID == id {
			if f.running[id] > 0 {
				f.running[id]--
				r.Status = rundoc.StatusRunning
			}
			return r, nil
		}
	}
	return Run{}, NotFound(fmt.Errorf("GET /api/runs/%d: 404", id))
}

func (f *fakeSource) Runs(_ context.Context, rf RunFilter, keep func(Run) bool) ([]Run, error) {
	var out []Run
	for i := len(f.runs) - 1; i >= 0; i-- { // newest first
		if r := f.runs[i]; (rf.Label == "" || r.Label == rf.Label) && keep(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeSource) History(_ context.Context, q HistoryQuery) (History, error) {
	f.queries = append(f.queries, q)
	var h History
	for _, r := range f.runs {
		if v, _, _, ok := metric(r, q.Metric); ok {
			h.Points = append(h.Points, HistoryPoint{RunID: r.ID, Time: r.Time, Value: v})
		}
	}
	for _, i := range f.changePoints {
		h.ChangePoints = append(h.ChangePoints, HistoryChangePoint{Index: i, RunID: h.Points[i].RunID})
	}
	return h, nil
}

func (f *fakeSource) ReportBaseline(context.Context, string) ([]uint, error) {
	return nil, errors.New("no reports here")
}

// add appends a succeeded producer run of the series with value v.
func (f *fakeSource) add(v float64, label string) Run {
	id := uint(len(f.runs) + 1)
	r := Run{ID: id, Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, SeriesKey: "fp@trunk", Fingerprint: "fp",
		Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * time.Hour)}
	r.Metrics = append(r.Metrics, RunMetric{Name: rate, Value: v, Unit: "records/s", Better: rundoc.HigherIsBetter})
	f.runs = append(f.runs, r)
	return r
}

var flagOptions = Options{Threshold: DefaultThreshold, ChangePoint: changepoint.Options{Window: changepoint.DefaultWindow,
	MaxPValue: changepoint.DefaultMaxPValue, MinSegment: 1}}

// TestAssessHistoryBaseline: the default baseline is the series' runs
// before the candidate back to the last change point before it, read
// with the options' change-point parameters; the candidates themselves
// are not in it.
func TestAssessHistoryBaseline(t *testing.T) {
	f := &fakeSource{changePoints: []int{6}}
	for _, p := range join(noisy(1, 1, 6, 90000, 0.01), noisy(2, 7, 10, 115000, 0.01)) {
		f.add(p.Value, "trunk")
	}
	cand := f.add(105000, "trunk")
	rep, err := Assess(context.Background(), f, []Run{cand}, Baseline{}, []string{rate}, flagOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Series) != 1 || len(rep.Series[0].Results) != 1 {
		t.Fatalf("report %+v: want one series with one metric", rep)
	}
	r := rep.Series[0].Results[0]
	if r.Baseline.N != 10 || r.Baseline.Runs[0] != 7 || r.Baseline.Runs[9] != 16 {
		t.Errorf("baseline %+v: want the 10 runs #7–#16 after the change point", r.Baseline)
	}
	if rep.Series[0].Baseline != "history" || rep.Params.MinSegment != 1 || rep.Threshold != DefaultThreshold {
		t.Errorf("report %+v: want the history baseline and the options given", rep)
	}
	if q := f.queries[0]; q.Run != cand.ID || q.Metric != rate || q.ChangePoint != flagOptions.ChangePoint {
		t.Errorf("history query %+v: want the candidate's series with the options' parameters", q)
	}
	if r.Verdict != VerdictRegression || rep.Verdict != "regression" || rep.ExitCode != 1 {
		t.Errorf("verdict %s, report %s exit %d: want a regression, exit 1", r.Verdict, rep.Verdict, rep.ExitCode)
	}
	md := rep.Markdown(f.Base())
	for _, want := range []string{"### kbench check: ❌ regression", "[#17](http://kbench.test/runs/17)", "| record-send-rate | records/s |", "**regression**"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestAssessLabelBaseline: --baseline label=L takes the latest window of
// that label's runs, leaving out the candidates.
func TestAssessLabelBaseline(t *testing.T) {
	f := &fakeSource{}
	for _, p := range noisy(3, 1, 8, 115000, 0.01) {
		f.add(p.Value, "java")
	}
	cand := f.add(115000, "java")
	opts := flagOptions
	opts.ChangePoint.Window = 5
	rep, err := Assess(context.Background(), f, []Run{cand}, Baseline{Kind: "label", Value: "java"}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Series[0]
	if s.Baseline != "label=java" || len(s.Results) == 0 {
		t.Fatalf("series %+v: want the label baseline and the headline metrics", s)
	}
	if b := s.Results[0].Baseline; b.N != 5 || b.Runs[0] != 4 || b.Runs[4] != 8 {
		t.Errorf("baseline %+v: want the 5 latest runs #4–#8, not the candidate #9", b)
	}
}

// TestCandidatesWait: the candidates are waited for until they have
// finished, the wait announced once; an unknown run is named with the
// server.
func TestCandidatesWait(t *testing.T) {
	f := &fakeSource{running: map[uint]int{2: 2}}
	f.add(1, "x")
	f.add(2, "x")
	var announced []string
	runs, err := Candidates(context.Background(), f, Selector{Label: "x"}, time.Minute, time.Millisecond, func(p error) {
		announced = append(announced, p.Error())
	})
	if err != nil || len(runs) != 2 || runs[0].ID != 1 {
		t.Fatalf("runs %+v, err %v: want #1 and #2 in time order", runs, err)
	}
	if len(announced) != 1 || announced[0] != "run #2 is running" {
		t.Errorf("announced %q: want once, run #2 is running", announced)
	}
	_, err = Candidates(context.Background(), f, Selector{IDs: []uint{7}}, 0, time.Millisecond, nil)
	if err == nil || err.Error() != "run #7: no such run on http://kbench.test" {
		t.Errorf("unknown run: %v", err)
	}
}

func TestParseBaseline(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    string
	}{
		{"", "", "{ [] }"},
		{"runs=1,#2, 2", "", "{runs [1 2] }"},
		{"3,4", "", "{runs [3 4] }"},
		{"label=java", "", "{label [] java}"},
		{"branch=trunk", "", "{branch [] trunk}"},
		{"report=abc", "", "{report [] abc}"},
		{"runs=", "want runs=ID", ""},
		{"runs=x", "want runs=ID", ""},
		{"label=", "label= needs a value", ""},
		{"report=a/b", "the part after /r/", ""},
		{"foo=bar", `unknown form "foo="`, ""},
	} {
		bl, err := ParseBaseline(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseBaseline(%q): error %v, want one saying %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || fmt.Sprint(bl) != tc.want):
			t.Errorf("ParseBaseline(%q) = %v, %v; want %s", tc.in, bl, err, tc.want)
		}
	}
}
