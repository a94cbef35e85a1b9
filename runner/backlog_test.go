package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestE2EBacklog: with --backlog-bytes the consumer is held until that
// much payload waits for it (8 MiB here: 8,192 records of 1 KiB, 0.4 s
// of a 20,000 records/s producer), then drains it while the producer
// goes on; the run reports the backlog it built, the build and drain
// times and the drain's rate, the first records' latency holds their
// wait, and every record is in the broker and received once.
func TestE2EBacklog(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a paced run of 1.5 s")
	}
	b := startBroker(t, embeddedbroker.Options{})
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.E2E, "--bootstrap-server", b.Addr(), "--topic", "backlog", "--partitions", "2", "--throughput", "20000",
		"--num-records", "30000", "--record-size", "1024", "--backlog-bytes", "8388608", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := highWatermarks(t, b.Addr(), "backlog"); got != 30000 || metric(t, res, "records-received") != 30000 {
		t.Errorf("the broker holds %d records, the consumer received %v; want 30000 each", got, metric(t, res, "records-received"))
	}
	built, records, bytes := metric(t, res, "backlog-build-time"), metric(t, res, "backlog-records"), metric(t, res, "backlog-bytes")
	if records < 8192 || bytes < 8<<20 || bytes != records*1024 {
		t.Errorf("backlog of %v records, %v bytes: want at least 8,192 records of 1,024 bytes", records, bytes)
	}
	// The producer keeps to its schedule: 8,192 records take 0.41 s.
	if built < 0.35 {
		t.Errorf("backlog built in %v s, want at least 0.35 (8,192 records at 20,000/s)", built)
	}
	drain, rate := metric(t, res, "backlog-drain-time"), metric(t, res, "backlog-drain-rate")
	if !(drain > 0) || !(rate > 0) {
		t.Errorf("drain %v s at %v records/s, want both positive", drain, rate)
	}
	// The first record waited for the whole build.
	if max := metric(t, res, "e2e-latency-max"); max < built*1000*0.9 {
		t.Errorf("e2e-latency-max %v ms, want about the build's %v s or more", max, built)
	}
	if notes := strings.Join(res.Measurement.Notes, "\n"); !strings.Contains(notes, "max(1000, (1 − 1) × 8192)") {
		t.Errorf("notes lack the drain's definition:\n%s", notes)
	}
}
