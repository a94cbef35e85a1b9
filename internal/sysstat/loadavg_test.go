package sysstat

import (
	"errors"
	"math"
	"runtime"
	"testing"
)

func TestParseLoadAverage(t *testing.T) {
	tests := []struct {
		in      string
		want    LoadAverage
		wantErr bool
	}{
		{"0.52 0.58 0.59 2/345 12345\n", LoadAverage{0.52, 0.58, 0.59}, false},
		{"12.00 7.25 3.10 17/1024 999", LoadAverage{12, 7.25, 3.1}, false},
		{"0.00 0.00 0.00", LoadAverage{}, false},
		{"", LoadAverage{}, true},
		{"0.5 0.5", LoadAverage{}, true},
		{"-1 0 0 1/2 3", LoadAverage{}, true},
		{"NaN 0 0 1/2 3", LoadAverage{}, true},
		{"Inf 0 0 1/2 3", LoadAverage{}, true},
		{"a b c", LoadAverage{}, true},
	}
	for _, tt := range tests {
		got, err := ParseLoadAverage(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseLoadAverage(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseLoadAverage(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestReadLoadAverage(t *testing.T) {
	la, err := ReadLoadAverage()
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("ReadLoadAverage on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if la.Load1 < 0 || la.Load5 < 0 || la.Load15 < 0 {
		t.Errorf("load average %+v: negative", la)
	}
}

// FuzzParseLoadAverage: any input either parses into finite, non-negative
// averages or is an error; never a panic.
func FuzzParseLoadAverage(f *testing.F) {
	f.Add("0.52 0.58 0.59 2/345 12345\n")
	f.Add("1e308 1e309 0")
	f.Add("   ")
	f.Fuzz(func(t *testing.T, s string) {
		la, err := ParseLoadAverage(s)
		if err != nil {
			return
		}
		for _, v := range []float64{la.Load1, la.Load5, la.Load15} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("ParseLoadAverage(%q) = %+v", s, la)
			}
		}
	})
}
