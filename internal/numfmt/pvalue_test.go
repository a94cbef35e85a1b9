package numfmt

import (
	"math"
	"testing"
)

func TestPValue(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want string
	}{
		{0.5, "0.500"}, {0.042, "0.042"}, {0.001, "0.001"}, {0.0005, "0.001"}, {0.000449, "4.5e-4"},
		{1.234e-9, "1.2e-9"}, {3e-120, "3.0e-120"}, {0, "< 1e-300"}, {5e-324, "< 1e-300"}, {1e-300, "1.0e-300"}, {1, "1.000"},
		{math.NaN(), "—"}, {-0.1, "—"}, {1.5, "—"}, {math.Inf(1), "—"},
	} {
		if got := PValue(tt.p); got != tt.want {
			t.Errorf("PValue(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
