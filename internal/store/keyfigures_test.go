package store

import "testing"

// TestKeyFigures: a run's list figures come from the most specific metric
// its workload has: the producer's record latency, the consumer's rate,
// an e2e run's end-to-end latency.
func TestKeyFigures(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name          string
		metrics       []Metric
		rate, mb, p99 *float64
	}{
		{"producer", []Metric{{Name: "record-send-rate", Value: 1000}, {Name: "mb-per-sec", Value: 2}, {Name: "record-latency-p99", Value: 8}, {Name: "latency-p99", Value: 9}}, f(1000), f(2), f(8)},
		{"imported producer", []Metric{{Name: "records-per-sec", Value: 500}, {Name: "latency-p99", Value: 9}}, f(500), nil, f(9)},
		{"consumer", []Metric{{Name: "records-consumed-rate", Value: 700}, {Name: "mb-per-sec", Value: 3}}, f(700), f(3), nil},
		{"e2e", []Metric{{Name: "record-send-rate", Value: 100}, {Name: "publish-latency-p99", Value: 4}, {Name: "e2e-latency-p99", Value: 12}}, f(100), nil, f(12)},
		{"imported e2e", []Metric{{Name: "e2e-latency-avg", Value: 3}, {Name: "e2e-latency-p99", Value: 7}}, nil, nil, f(7)},
	}
	eq := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	for _, tt := range tests {
		rate, mb, p99 := keyFigures(tt.metrics)
		if !eq(rate, tt.rate) || !eq(mb, tt.mb) || !eq(p99, tt.p99) {
			t.Errorf("%s: got %v %v %v", tt.name, rate, mb, p99)
		}
	}
}
