package profiles

import (
	"fmt"
	"sort"

	"github.com/google/pprof/profile"
)

// WindowLabel is the label key of a windowed profile's samples (kbench
// run --profile-windows; JFR recordings of such runs): its value names
// the sample's window, "START-END" in whole seconds since the run's
// measured window opened.
const WindowLabel = "window"

// Window is one window of a windowed profile: its label value and the
// seconds it spans.
type Window struct {
	Name       string
	Start, End int
}

// Windows lists the windows p's samples are labelled with, in order of
// their start; nil when p is not windowed. Values that are not
// "START-END" are left out.
func Windows(p *profile.Profile) []Window {
	seen := map[string]bool{}
	var out []Window
	for _, s := range p.Sample {
		for _, v := range s.Label[WindowLabel] {
			if seen[v] {
				continue
			}
			seen[v] = true
			var w Window
			var rest string
			if n, _ := fmt.Sscanf(v, "%d-%d%s", &w.Start, &w.End, &rest); n != 2 || w.End < w.Start {
				continue
			}
			w.Name = v
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}
