package runner

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestProfileWindowsMatchCPU runs an 8 s producer against the embedded
// broker child with the default --profile-windows: its client CPU profile
// is one profile whose every sample carries a window label, the windows
// are 2 s each from 0-2 on, the last ending with the measured window
// (checkWindowNames), each window's samples × period agree within 10 %
// with the process CPU time (getrusage, what the window's CPU sampler
// reads) over the time its profiler ran (or within three standard
// deviations of the sample count, when wider: sampleTolerance), a
// selection of windows (the run page's tagfocus=window=^(2-4|4-6)$) holds exactly those
// windows' samples, and the goroutines' role labels are there.
//
// Go's CPU profile of this workload holds less than the process's CPU
// time, with or without windows: 7 to 12 % less throttled, about 24 %
// unthrottled on a loaded 2-core VM (Linux checks a thread's CPU timer
// at scheduler ticks, a thread running short bursts lets several periods
// pass between checks, and Go counts one sample per signal, not the
// timer's overruns). So each window is compared with the CPU time scaled
// by the whole profile's ratio, which must itself be over 0.6; a window
// whose samples went to another window, or were lost at a restart,
// still differs from its CPU time by more than 10 %.
func TestProfileWindowsMatchCPU(t *testing.T) {
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.Producer, "--duration", "8", "--record-size", "1024", "--payload-entropy", "0.5",
		"--producer-props", "compression.type=gzip", "--profile", "cpu")
	if !spec.WantsProfileWindows() {
		t.Fatal("an 8 s run does not want profile windows by default")
	}
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	p := clientCPU(t, res, opts.OutDir)
	leftovers, _ := filepath.Glob(filepath.Join(opts.OutDir, "client-cpu.w*"))
	if len(leftovers) > 0 {
		t.Errorf("window files left behind: %v", leftovers)
	}

	cpu := windowCPU(t, p)
	var names []string
	for n := range cpu {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return windowStart(names[i]) < windowStart(names[j]) })
	// --duration 8 sends for 8 s, then the window runs on until the last
	// records are acknowledged, seconds later on a loaded machine (or
	// under -race): the windows go on, 2 s each, and the last one ends
	// with the measured window, a last part shorter than 2 s joined to it.
	if err := checkWindowNames(names, res.Measurement.WindowSeconds); err != nil {
		t.Fatalf("windows %v (window of %.2f s): %v", names, res.Measurement.WindowSeconds, err)
	}
	ns := map[string]int64{} // sampled CPU ns by window
	var total int64
	roles := map[string]bool{}
	for _, s := range p.Sample {
		w := s.Label[rundoc.WindowLabel]
		if len(w) != 1 {
			t.Fatalf("a sample's window label is %q, want one value", w)
		}
		if _, ok := cpu[w[0]]; !ok {
			t.Fatalf("a sample's window %q has no comment", w[0])
		}
		ns[w[0]] += s.Value[1]
		total += s.Value[1]
		for _, r := range s.Label[roleLabel] {
			roles[r] = true
		}
	}
	var cpuTotal time.Duration
	for _, n := range names {
		cpuTotal += cpu[n]
	}
	seen := float64(total) / float64(cpuTotal)
	t.Logf("the profile holds %v of samples against %v of process CPU: %.2f×", time.Duration(total), cpuTotal, seen)
	if seen < 0.6 || seen > 1.1 {
		t.Fatalf("the profile holds %.2f× the process's CPU time", seen)
	}
	for _, n := range names {
		sampled := time.Duration(ns[n])
		t.Logf("window %s: %v sampled, %v process CPU (%.2f×)", n, sampled, cpu[n], sampled.Seconds()/cpu[n].Seconds())
		if cpu[n] < 200*time.Millisecond {
			t.Fatalf("window %s: %v of CPU is too little to compare", n, cpu[n])
		}
		if r, tol := sampled.Seconds()/(seen*cpu[n].Seconds()), sampleTolerance(seen*cpu[n].Seconds(), p.Period); math.Abs(r-1) > tol {
			t.Errorf("window %s: samples × period %v against %v of process CPU × %.2f (%.2f×), want within %.0f%%", n, sampled, cpu[n], seen, r, 100*tol)
		}
	}

	// A selection of windows, as the run page asks for it.
	focus := regexp.MustCompile(`^(2-4|4-6)$`)
	var sel time.Duration
	for _, s := range p.Sample {
		if focus.MatchString(s.Label[rundoc.WindowLabel][0]) {
			sel += time.Duration(s.Value[1])
		}
	}
	if want := time.Duration(ns["2-4"] + ns["4-6"]); sel != want {
		t.Errorf("the selection 2-4|4-6 holds %v, its windows %v", sel, want)
	}
	if got, want := sel.Seconds(), seen*(cpu["2-4"]+cpu["4-6"]).Seconds(); math.Abs(got/want-1) > sampleTolerance(want, p.Period) {
		t.Errorf("the selection 2-4|4-6 holds %v of samples against %v of process CPU in those windows", sel, cpu["2-4"]+cpu["4-6"])
	}

	for _, r := range []string{roleSend, roleEncode} {
		if !roles[r] {
			t.Errorf("no sample labelled %s=%s; roles seen: %v", roleLabel, r, roles)
		}
	}
}

// TestConsumerRoleLabel: the consumer's read loop is labelled receive,
// and a run with --profile-windows off has no window label.
func TestConsumerRoleLabel(t *testing.T) {
	opts, _ := testOptions(t)
	spec := mustParse(t, rundoc.Consumer, "--messages", "80000", "--record-size", "256", "--profile", "cpu", "--profile-windows", "off")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	p := clientCPU(t, res, opts.OutDir)
	receive := false
	for _, s := range p.Sample {
		if len(s.Label[rundoc.WindowLabel]) > 0 {
			t.Fatalf("a sample has the window label %q with --profile-windows off", s.Label[rundoc.WindowLabel])
		}
		receive = receive || slices.Contains(s.Label[roleLabel], roleReceive)
	}
	if !receive {
		t.Errorf("no sample of %d labelled %s=%s", len(p.Sample), roleLabel, roleReceive)
	}
}

func clientCPU(t *testing.T, res *rundoc.Result, dir string) *profile.Profile {
	t.Helper()
	for _, pf := range res.Profiles {
		if pf.Role == rundoc.RoleClient && pf.Kind == rundoc.KindCPU {
			f, err := os.Open(filepath.Join(dir, pf.File))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := profile.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.SampleType) != 2 || p.SampleType[1].Unit != "nanoseconds" {
				t.Fatalf("client cpu profile's sample types %v", p.SampleType)
			}
			return p
		}
	}
	t.Fatalf("no client cpu profile in %v; notes %q", res.Profiles, res.Measurement.Notes)
	return nil
}

// windowCPU reads the process CPU of each window from the profile's
// comments ("kbench window 0-2: profiled …, process CPU 1.234 s").
func windowCPU(t *testing.T, p *profile.Profile) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	for _, c := range p.Comments {
		var name string
		var from, to, secs float64
		if _, err := fmt.Sscanf(c, "kbench window %s profiled %f-%f s, process CPU %f s", &name, &from, &to, &secs); err != nil {
			continue
		}
		out[name[:len(name)-1]] += time.Duration(secs * float64(time.Second)) // "0-2:"
	}
	if len(out) == 0 {
		t.Fatalf("no window comment in %q", p.Comments)
	}
	return out
}

// sampleTolerance is how far a window's sampled CPU may stray from the
// CPU time it should hold (secs, at a sampling period of periodNs): 10 %,
// or three standard deviations of the sample count when that is wider.
// Samples arrive as a Poisson process: a 2 s window of a 2-core machine
// holds at most ~400 samples at Go's 100 Hz, whose count alone varies by
// 5 %, so a flat 10 % would fail a correct profile on a busy machine.
func sampleTolerance(secs float64, periodNs int64) float64 {
	if periodNs <= 0 {
		periodNs = int64(10 * time.Millisecond)
	}
	n := secs * 1e9 / float64(periodNs)
	if n <= 0 {
		return 0.10
	}
	return max(0.10, 3/math.Sqrt(n))
}

// checkWindowNames says what is wrong with a run's window names, in
// order, for a measured window of secs seconds: they must start at 0-2,
// follow one another, each 2 s long but the last, which ends with the
// window (rundoc.WindowName) and is 2 to 4 s long.
func checkWindowNames(names []string, secs float64) error {
	if len(names) < 2 {
		return fmt.Errorf("want at least two windows")
	}
	next := 0
	for i, n := range names {
		var a, b int
		if _, err := fmt.Sscanf(n, "%d-%d", &a, &b); err != nil {
			return fmt.Errorf("window %q: %v", n, err)
		}
		if a != next {
			return fmt.Errorf("window %q starts at %d s, want %d s", n, a, next)
		}
		last := i == len(names)-1
		switch {
		case !last && b-a != 2:
			return fmt.Errorf("window %q is not 2 s long", n)
		case last && n != rundoc.WindowName(float64(a), secs):
			return fmt.Errorf("the last window is %q, want %q", n, rundoc.WindowName(float64(a), secs))
		case last && (b-a < 2 || b-a > 4):
			return fmt.Errorf("the last window %q is not 2 to 4 s long", n)
		}
		next = b
	}
	return nil
}

func windowStart(name string) int {
	var a, b int
	fmt.Sscanf(name, "%d-%d", &a, &b)
	return a
}

// checkWindowNames accepts a run's windows only in order, 2 s each, the
// last ending with the measured window.
func TestCheckWindowNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		secs  float64
		ok    bool
	}{
		{[]string{"0-2", "2-4", "4-6", "6-8"}, 8.3, true},
		{[]string{"0-2", "2-4", "4-6", "6-9"}, 9.1, true},
		{[]string{"0-2", "2-4", "18-20"}, 20.28, false},
		{[]string{"0-2", "2-4", "4-6", "6-8"}, 9.6, false},
		{[]string{"2-4", "4-6"}, 6, false},
		{[]string{"0-2", "2-5", "5-7"}, 7, false},
		{[]string{"0-2"}, 2, false},
	} {
		if err := checkWindowNames(c.names, c.secs); (err == nil) != c.ok {
			t.Errorf("%v over %.2f s: %v, want ok=%v", c.names, c.secs, err, c.ok)
		}
	}
}
