package runner

import (
	"context"
	"testing"

	"github.com/kbench/kbench/rundoc"
	"github.com/kbench/kbench/runner/embedded"
)

// TestMetricsCatalogMatchesRuns runs every workload, in the modes that
// report the conditional figures (a throttled raw producer: intended
// latencies and bytes on the wire; a group consumer; a raw write path),
// and checks that each metric it reports is in Metrics with the same unit
// and direction: the catalog imports use cannot drift from what runs
// write.
func TestMetricsCatalogMatchesRuns(t *testing.T) {
	b := startBroker(t, embedded.Options{})
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
