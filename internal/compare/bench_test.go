package compare

import (
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// tenRuns are ten producer runs of 36 metrics each, with Kafka's summary
// and a --print-metrics excerpt as output.
func tenRuns() []rundoc.Run {
	runs := make([]rundoc.Run, 10)
	for i := range runs {
		ms := producerMetrics(1+0.03*float64(i), i)
		label := "trunk"
		if i%2 == 1 {
			label = "branch"
		}
		runs[i] = run(uint(i+1), label, ms...)
		runs[i].Output = producerOutput(ms)
	}
	return runs
}

func BenchmarkBuild10Runs(b *testing.B) {
	cols := Columns(tenRuns(), ByRun)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(cols, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarkdown10Runs(b *testing.B) {
	tab, err := Build(Columns(tenRuns(), ByRun), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Markdown(tab, reportMeta)
	}
}

// BenchmarkBuildMarkdown10Runs is a whole export: build and render.
func BenchmarkBuildMarkdown10Runs(b *testing.B) {
	cols := Columns(tenRuns(), ByRun)
	b.ReportAllocs()
	for b.Loop() {
		tab, err := Build(cols, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = Markdown(tab, reportMeta)
	}
}

func BenchmarkCSV10Runs(b *testing.B) {
	tab, err := Build(Columns(tenRuns(), ByRun), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = CSV(tab)
	}
}

func BenchmarkJSON10Runs(b *testing.B) {
	tab, err := Build(Columns(tenRuns(), ByRun), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JSON(tab, reportMeta); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildGroups compares three labels of ten runs each: medians,
// intervals and U tests for every metric.
func BenchmarkBuildGroups(b *testing.B) {
	var runs []rundoc.Run
	for g, label := range []string{"CLASSIC", "CONSUMER (trunk)", "CONSUMER (branch)"} {
		for i := range 10 {
			ms := producerMetrics(1+0.1*float64(g), i)
			runs = append(runs, run(uint(g*10+i+1), label, ms...))
		}
	}
	cols := Columns(runs, ByLabel)
	b.ReportAllocs()
	for b.Loop() {
		tab, err := Build(cols, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = Markdown(tab, Meta{})
	}
}
