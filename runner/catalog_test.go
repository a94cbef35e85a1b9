package runner

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestMetricsCatalogMatchesRuns runs every workload, in the modes that
// report the conditional figures (a throttled raw producer: intended
// latencies and bytes on the wire; a group consumer; a raw write path),
// and checks that each metric it reports is in Metrics with the same unit
// and direction: the catalog imports use cannot drift from what runs
// write. Each run also carries cpu-seconds-per-million-records, computed
// from its own CPU and record figures (checkCPUPerRecord).
func TestMetricsCatalogMatchesRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	b := startBroker(t, embeddedbroker.Options{})
	check := func(t *testing.T, res *rundoc.Result) {
		t.Helper()
		known := map[string]rundoc.Metric{}
		for _, m := range Metrics(res.Workload) {
			known[m.Name] = m
		}
		if len(res.Metrics) == 0 {
			t.Fatal("the run reported no metrics")
		}
		for _, m := range res.Metrics {
			c, ok := known[m.Name]
			switch {
			case !ok:
				t.Errorf("%s: metric %s (%s, %q) is not in the catalog", res.Workload, m.Name, m.Unit, m.Better)
			case c.Unit != m.Unit || c.Better != m.Better:
				t.Errorf("%s: metric %s: run says %s %q, catalog %s %q", res.Workload, m.Name, m.Unit, m.Better, c.Unit, c.Better)
			}
		}
		checkCPUPerRecord(t, res)
	}
	run := func(t *testing.T, opts Options, spec rundoc.Spec) *rundoc.Result {
		t.Helper()
		res, err := Run(context.Background(), spec, opts)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		return res
	}
	t.Run("producer", func(t *testing.T) {
		opts, _ := testOptions(t)
		check(t, run(t, opts, mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "catalog", "--mode", rundoc.ModeRaw,
			"--num-records", "2000", "--record-size", "100", "--throughput", "50000", "--profile", "none")))
	})
	t.Run("consumer", func(t *testing.T) {
		opts, _ := testOptions(t)
		check(t, run(t, opts, mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "catalog",
			"--messages", "2000", "--timeout", "20000", "--profile", "none")))
	})
	t.Run("writepath", func(t *testing.T) {
		opts, _ := sinkOptions(t)
		check(t, run(t, opts, mustParse(t, rundoc.Writepath, "--sink", "--strategy", "gather", "--requests", "300", "--profile", "none")))
	})
	t.Run("e2e", func(t *testing.T) {
		opts, _ := testOptions(t)
		check(t, run(t, opts, mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "catalog-e2e", "--num-records", "20", "--profile", "none")))
	})
	t.Run("e2e-rate", func(t *testing.T) {
		opts, _ := testOptions(t)
		check(t, run(t, opts, mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "catalog-e2e-rate", "--num-records", "200",
			"--throughput", "2000", "--producer-props", "linger.ms=0", "--profile", "none")))
	})
	if Metrics(rundoc.Imported) != nil {
		t.Error("Metrics(imported) lists metrics: kbench runs no such workload")
	}
}

// checkCPUPerRecord: a run that counts records reports
// cpu-seconds-per-million-records, finite and positive, equal to its
// process-cpu-seconds over its measured records × 1e6, where the measured
// records are the workload's own record figure.
func checkCPUPerRecord(t *testing.T, res *rundoc.Result) {
	t.Helper()
	get := func(name string) float64 {
		t.Helper()
		m, ok := findMetric(res.Metrics, name)
		if !ok {
			t.Fatalf("%s: no %s among %d metrics", res.Workload, name, len(res.Metrics))
		}
		return m.Value
	}
	cost := get("cpu-seconds-per-million-records")
	cpu := get("process-cpu-seconds")
	n := res.Measurement.MeasuredRecords
	if math.IsNaN(cost) || math.IsInf(cost, 0) || cost <= 0 {
		t.Fatalf("%s: cpu-seconds-per-million-records = %v, want finite and positive", res.Workload, cost)
	}
	if n <= 0 || cpu <= 0 {
		t.Fatalf("%s: %d measured records, %v CPU seconds: want both positive", res.Workload, n, cpu)
	}
	if want := cpu / float64(n) * 1e6; math.Abs(cost-want) > 1e-9*want {
		t.Errorf("%s: cpu-seconds-per-million-records = %v, want process-cpu-seconds %v / %d records × 1e6 = %v", res.Workload, cost, cpu, n, want)
	}
	// The measured records are the ones the workload reports.
	var shown float64
	switch res.Workload {
	case rundoc.Producer:
		shown = get("records-sent")
	case rundoc.Consumer:
		shown = get("records-consumed-total")
	case rundoc.E2E:
		shown = get("records-received")
	case rundoc.Writepath:
		// records-per-sec is records over the window's seconds.
		shown = math.Round(get("records-per-sec") * res.Measurement.WindowSeconds)
	}
	if shown != float64(n) {
		t.Errorf("%s: %d measured records, but the run's record figure says %v", res.Workload, n, shown)
	}
	m, _ := findMetric(res.Metrics, "cpu-seconds-per-million-records")
	if m.Unit != "s" || m.Better != rundoc.LowerIsBetter || !strings.Contains(m.Help, "process-cpu-seconds") || !strings.Contains(m.Help, fmt.Sprint(n)) {
		t.Errorf("%s: cpu-seconds-per-million-records is %s %q with help %q: want s, lower is better, saying how it is computed", res.Workload, m.Unit, m.Better, m.Help)
	}
}
