package runimport

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

// TestParseResultsTable: the formats people paste, and what cells may
// hold.
func TestParseResultsTable(t *testing.T) {
	known := runner.ImportMetrics(rundoc.Producer)
	type want struct {
		run           int
		metric        string
		value         float64
		unit, better  string
		missingInRuns bool
	}
	tests := []struct {
		name, format, table string
		labels              []string
		want                []want
		notes               []string // of the table or a run
	}{
		{name: "Markdown without outer pipes", format: TableMarkdown,
			table:  "Metric | trunk | branch\n--- | ---: | ---:\nrecord-send-rate | 1,234,567.5 | 1 234 000\nrequest-latency-avg | **12.5 ms** | `0.011 s`\n",
			labels: []string{"trunk", "branch"},
			want: []want{{0, "record-send-rate", 1234567.5, "records/s", "higher", false}, {1, "record-send-rate", 1234000, "records/s", "higher", false},
				{0, "request-latency-avg", 12.5, "ms", "lower", false}, {1, "request-latency-avg", 11, "ms", "lower", false}}},
		{name: "JIRA markup", format: TableJIRA,
			table:  "||Metric||acks=1||acks=all||\n|io-wait-ratio|41.2%|0.377|\n|record-queue-time-avg|3|NaN|\n",
			labels: []string{"acks=1", "acks=all"},
			want:   []want{{0, "io-wait-ratio", 0.412, "ratio", "", false}, {1, "io-wait-ratio", 0.377, "ratio", "", false}, {0, "record-queue-time-avg", 3, "ms", "lower", false}},
			notes:  nil},
		{name: "CSV with quoted thousands", format: TableCSV,
			table:  "metric,A,B\nbatch-size-avg,\"16,384\",1.5 KiB\nmy-own-figure,7 ms,\n",
			labels: []string{"A", "B"},
			want:   []want{{0, "batch-size-avg", 16384, "bytes", "", false}, {1, "batch-size-avg", 1536, "bytes", "", false}, {0, "my-own-figure", 7, "ms", "", false}},
			notes:  []string{"1 metrics are neither kbench's nor in the catalog", "no value in the table for: my-own-figure"}},
		{name: "tab-separated from a spreadsheet", format: TableTSV,
			table:  "Metric\tCLASSIC\tCONSUMER\t\nproducer-metrics:compression-rate-avg\t0.5\t0.25\t\nMax CPU\t190%\t120 %\t\n",
			labels: []string{"CLASSIC", "CONSUMER"},
			want: []want{{0, "producer-metrics:compression-rate-avg", 0.5, "ratio", "lower", false}, {1, "process-cpu-max", 120, "%", "lower", false},
				{0, "process-cpu-max", 190, "%", "lower", false}},
			notes: []string{`"Max CPU" is stored as process-cpu-max`}},
		{name: "NaN left out with a note", format: TableMarkdown,
			table:  "| Metric | a | b |\n|---|---|---|\n| record-queue-time-avg | NaN | 2 |\n| record-send-rate | 10 | 20 |\n",
			labels: []string{"a", "b"},
			want:   []want{{0, "record-queue-time-avg", 0, "", "", true}, {1, "record-queue-time-avg", 2, "ms", "lower", false}},
			notes:  []string{"left out, not a finite number (NaN or Infinity in the table): record-queue-time-avg (line 3)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := ParseResultsTable(strings.NewReader(tt.table), known)
			if err != nil {
				t.Fatal(err)
			}
			if tab.Format != tt.format {
				t.Errorf("format %s, want %s", tab.Format, tt.format)
			}
			var labels []string
			for _, r := range tab.Runs {
				labels = append(labels, r.Label)
			}
			if strings.Join(labels, "|") != strings.Join(tt.labels, "|") {
				t.Errorf("labels %q, want %q", labels, tt.labels)
			}
			for _, w := range tt.want {
				var got *rundoc.Metric
				for i, m := range tab.Runs[w.run].Metrics {
					if m.Name == w.metric {
						got = &tab.Runs[w.run].Metrics[i]
					}
				}
				switch {
				case w.missingInRuns && got != nil:
					t.Errorf("run %d: %s = %v, want it left out", w.run, w.metric, got.Value)
				case w.missingInRuns:
				case got == nil:
					t.Errorf("run %d: no %s", w.run, w.metric)
				case math.Abs(got.Value-w.value) > 1e-9 || got.Unit != w.unit || string(got.Better) != w.better:
					t.Errorf("run %d: %s = %v %q %q, want %v %q %q", w.run, w.metric, got.Value, got.Unit, got.Better, w.value, w.unit, w.better)
				}
			}
			notes := strings.Join(tab.Notes, "\n")
			for _, r := range tab.Runs {
				notes += "\n" + strings.Join(r.Notes, "\n")
			}
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
		})
	}
}

// FuzzParseResultsTable: whatever is pasted, the parser answers a table
// whose runs are distinct, non-empty and finite, or an error that is a
// 400 (or 413) on the table field, with a line when it names a cell.
func FuzzParseResultsTable(f *testing.F) {
	if data, err := os.ReadFile("testdata/kafka19296_consumer.md"); err == nil {
		f.Add(string(data))
	}
	for _, s := range []string{
		"||Metric||a||b||\n|io-wait-ratio|41.2%|0.3|\n",
		"metric,a,b\nbatch-size-avg,\"16,384\",1.5 KiB\n",
		"Metric\tx\ty\t\nMax CPU\t190%\t12 %\n",
		"a | b\n--- | ---\nx | 1 ms\n",
		"| m | a |\n| --- | --- |\n| `q` | **1 234 567.5** |\n| r | NaN |\n",
		"| a \\| b | c |\n|x|-1e3|\n",
		"metric;a\nx;1\n",
	} {
		f.Add(s)
	}
	known := runner.ImportMetrics(rundoc.Consumer)
	f.Fuzz(func(t *testing.T, in string) {
		tab, err := ParseResultsTable(strings.NewReader(in), known)
		if err != nil {
			// Bad input (a 400 from the server) or over a limit (a 413),
			// on the table.
			var fe *rundoc.FieldError
			var le *LimitError
			field := ""
			switch {
			case errors.As(err, &fe):
				field = fe.Field
			case errors.As(err, &le):
				field = le.Field
			}
			if field != "table" {
				t.Fatalf("error %v: neither a 400 nor a 413 on the table (field %q)", err, field)
			}
			var te *CellError
			if errors.As(err, &te) && (te.Line < 1 || te.Column < 0) {
				t.Fatalf("error %v names line %d column %d", err, te.Line, te.Column)
			}
			return
		}
		labels := map[string]bool{}
		for _, r := range tab.Runs {
			if r.Label == "" || labels[strings.ToLower(r.Label)] || len(r.Metrics) == 0 {
				t.Fatalf("run %+v", r)
			}
			labels[strings.ToLower(r.Label)] = true
			for _, m := range r.Metrics {
				if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) || m.Name == "" {
					t.Fatalf("metric %+v", m)
				}
			}
		}
	})
}
