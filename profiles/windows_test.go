package profiles

import (
	"reflect"
	"testing"

	"github.com/google/pprof/profile"
)

func TestWindows(t *testing.T) {
	sample := func(labels ...string) *profile.Sample {
		s := &profile.Sample{Value: []int64{1}}
		if len(labels) > 0 {
			s.Label = map[string][]string{WindowLabel: labels}
		}
		return s
	}
	p := &profile.Profile{Sample: []*profile.Sample{
		sample("4-6"), sample("0-2"), sample("2-4"), sample("0-2"), sample(), sample("6-9"), sample("x-y"), sample("3-1"), sample("1-2z"),
	}}
	want := []Window{{"0-2", 0, 2}, {"2-4", 2, 4}, {"4-6", 4, 6}, {"6-9", 6, 9}}
	if got := Windows(p); !reflect.DeepEqual(got, want) {
		t.Errorf("Windows = %v, want %v", got, want)
	}
	if got := Windows(&profile.Profile{Sample: []*profile.Sample{sample()}}); got != nil {
		t.Errorf("Windows of an unwindowed profile = %v, want nil", got)
	}
}
