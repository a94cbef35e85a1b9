package kafkafmt

import (
	"math"
	"strings"
	"testing"
)

func TestFigures(t *testing.T) {
	for _, tc := range []struct {
		name          string
		imp           Imported
		records       int64
		window        float64
		metrics, note int
	}{
		{"producer", Imported{Tool: ToolProducer, Metrics: []ImportedMetric{
			{Name: "records-sent", Value: 1000}, {Name: "record-send-rate", Value: 500}}}, 1000, 2, 2, 0},
		{"consumer", Imported{Tool: ToolConsumer, Metrics: []ImportedMetric{
			{Name: "records-consumed-total", Value: 300}, {Name: "records-consumed-rate", Value: 100}, {Name: "records-sent", Value: 7}}}, 300, 3, 3, 0},
		{"no rate", Imported{Tool: ToolProducer, Metrics: []ImportedMetric{{Name: "records-sent", Value: 10}}}, 10, 0, 1, 0},
		{"non-finite left out", Imported{Tool: ToolProducer, Metrics: []ImportedMetric{
			{Name: "records-sent", Value: 10}, {Name: "record-send-rate", Value: math.Inf(1)}, {Name: "x", Value: math.NaN()}}}, 10, 0, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.imp.Figures()
			if f.MeasuredRecords != tc.records || f.WindowSeconds != tc.window || len(f.Metrics) != tc.metrics || len(f.Notes) != tc.note {
				t.Errorf("Figures() = records %d, window %v, %d metrics, notes %q; want %d, %v, %d, %d notes",
					f.MeasuredRecords, f.WindowSeconds, len(f.Metrics), f.Notes, tc.records, tc.window, tc.metrics, tc.note)
			}
			for _, n := range f.Notes {
				if !strings.Contains(n, "left out") {
					t.Errorf("note %q does not say the figure was left out", n)
				}
			}
		})
	}
	imp := Imported{Intervals: []ImportedInterval{{T: 1, Records: 5, RecordsPerSec: 5}}}
	if s := imp.Figures().Series; len(s) != 1 || s[0].T != 1 || s[0].Records != 5 {
		t.Errorf("series %+v", s)
	}
	if Command(ToolConsumer) != "kafka-consumer-perf-test" || Command(ToolProducer) != "kafka-producer-perf-test" {
		t.Error("Command names the wrong tool")
	}
}
