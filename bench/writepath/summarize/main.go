// Command summarize prints the medians of a bench/writepath/run.sh run:
// one row per shape, target and strategy, and the gather/per-buffer ratios.
//
//	summarize bench/out/writepath-<stamp>/runs
//
// Run directories are named r<round>-<target>-<records>x<size>-<strategy>
// and hold kbench's result.json.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kbench/kbench/internal/median"
)

type result struct {
	Complete bool `json:"complete"`
	Metrics  []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
	} `json:"metrics"`
}

type run struct {
	round   int
	metrics map[string]float64
}

type key struct{ shape, target, strategy string }

var dirRe = regexp.MustCompile(`^r(\d+)-(sink|broker)-(\d+x\d+)-(.+)$`)

var strategyOrder = []string{"gather", "per-buffer", "copy", "kafka-go", "kafka-go-conn", "java-gather", "java-per-buffer", "java-copy", "java-gather+jfr", "java-gather+jfr-base"}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summarize RUNS_DIR")
		os.Exit(2)
	}
	runs := map[key][]run{}
	failed := map[key]int{}
	entries, err := os.ReadDir(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, e := range entries {
		m := dirRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		k := key{shape: m[3], target: m[2], strategy: m[4]}
		data, err := os.ReadFile(filepath.Join(os.Args[1], e.Name(), "result.json"))
		var r result
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err != nil || !r.Complete {
			failed[k]++
			continue
		}
		round, _ := strconv.Atoi(m[1])
		ms := map[string]float64{}
		for _, x := range r.Metrics {
			ms[x.Name] = x.Value
		}
		if share, ok := jfrThreadShare(filepath.Join(os.Args[1], e.Name(), "jvm-threads.tsv")); ok {
			ms[jfrShareMetric] = share
		}
		runs[k] = append(runs[k], run{round: round, metrics: ms})
	}
	keys := make([]key, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.shape != b.shape {
			return shapeBytes(a.shape) < shapeBytes(b.shape)
		}
		if a.target != b.target {
			return a.target > b.target // sink first
		}
		return slices.Index(strategyOrder, a.strategy) < slices.Index(strategyOrder, b.strategy)
	})

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\ttarget\tstrategy\truns\treq/s\twrite syscalls/req\tbytes/write\tMB/s\tp50 ms\tp99 ms\tCPU s/MB\tCPU µs/req\tvs gather\t")
	for _, k := range keys {
		rs := runs[k]
		medOf := func(name string) float64 { return metricMedian(rs, name) }
		vs := ""
		if g, ok := runs[key{k.shape, k.target, "gather"}]; ok {
			vs = fmt.Sprintf("%.2f", medOf("requests-per-sec")/metricMedian(g, "requests-per-sec"))
		}
		n := fmt.Sprint(len(rs))
		if failed[k] > 0 {
			n += fmt.Sprintf(" (+%d failed)", failed[k])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%.2f\t%.0f\t%.1f\t%.3f\t%.3f\t%.4f\t%.1f\t%s\t\n", k.shape, k.target, k.strategy, n,
			medOf("requests-per-sec"), medOf("write-syscalls-per-request"), medOf("bytes-per-write-syscall"), medOf("mb-per-sec"),
			medOf("request-latency-p50"), medOf("request-latency-p99"), medOf("cpu-seconds-per-mb"), cpuPerRequest(rs), vs)
	}
	tw.Flush()

	pairs := []struct{ a, b, what string }{
		{"gather", "per-buffer", "gather / per-buffer requests/s"},
		{"java-gather", "java-per-buffer", "java-gather / java-per-buffer requests/s"},
		{"java-gather", "gather", "java-gather / gather (Go) requests/s"},
		{"java-gather+jfr", "java-gather", "java-gather with / without the JVM's flight recording, requests/s (JFR overhead; goal ≥ 0.95)"},
		{"java-gather+jfr-base", "java-gather", "java-gather with the KBENCH_BASE binary's flight recording / without, requests/s"},
	}
	for _, pr := range pairs {
		printRatios(keys, runs, pr.a, pr.b, pr.what, "requests-per-sec", nil)
	}
	printRatios(keys, runs, "java-gather+jfr", "java-gather", "java-gather with / without the JVM's flight recording, CPU per request", "", cpuPerRequestOf)
	printRatios(keys, runs, "java-gather+jfr-base", "java-gather", "java-gather with the KBENCH_BASE binary's flight recording / without, CPU per request", "", cpuPerRequestOf)
	printShares(keys, runs)
	printRatios(keys, runs, "java-per-buffer", "java-gather", "java-per-buffer / java-gather CPU per request", "", cpuPerRequestOf)
	printRatios(keys, runs, "java-gather", "gather", "java-gather / gather (Go) CPU per request", "", cpuPerRequestOf)
}

// cpuPerRequestOf is one run's process CPU per answered request, in µs:
// the client's (for a Java strategy the JVM's) CPU over the window.
func cpuPerRequestOf(r run) (float64, bool) {
	cpu, ok1 := r.metrics["process-cpu-seconds"]
	n, ok2 := r.metrics["requests-sent"]
	if !ok1 || !ok2 || n <= 0 {
		return 0, false
	}
	return cpu / n * 1e6, true
}

// cpuPerRequest is the median of cpuPerRequestOf over rs.
func cpuPerRequest(rs []run) float64 {
	var xs []float64
	for _, r := range rs {
		if v, ok := cpuPerRequestOf(r); ok {
			xs = append(xs, v)
		}
	}
	return med(xs)
}

// printRatios prints, per shape and target with both strategies, the ratio
// a/b of the medians of a figure (a metric, or value of each run) and, in
// parentheses, the median of the per-round ratios.
func printRatios(keys []key, runs map[key][]run, a, b, what, metric string, value func(run) (float64, bool)) {
	if value == nil {
		value = func(r run) (float64, bool) {
			v, ok := r.metrics[metric]
			return v, ok
		}
	}
	medOf := func(rs []run) float64 {
		var xs []float64
		for _, r := range rs {
			if v, ok := value(r); ok {
				xs = append(xs, v)
			}
		}
		return med(xs)
	}
	printed := false
	seen := map[[2]string]bool{}
	for _, k := range keys {
		pair := [2]string{k.shape, k.target}
		if seen[pair] {
			continue
		}
		seen[pair] = true
		ra, rb := runs[key{k.shape, k.target, a}], runs[key{k.shape, k.target, b}]
		if len(ra) == 0 || len(rb) == 0 || medOf(rb) == 0 {
			continue
		}
		var ratios []float64
		for _, x := range ra {
			for _, y := range rb {
				vx, ok1 := value(x)
				vy, ok2 := value(y)
				if x.round == y.round && ok1 && ok2 && vy > 0 {
					ratios = append(ratios, vx/vy)
				}
			}
		}
		if !printed {
			fmt.Println()
			fmt.Println(what + ": ratio of the medians (median of the per-round ratios)")
			printed = true
		}
		fmt.Printf("  %-9s %-7s %.2f (%.2f)\n", k.shape, k.target, medOf(ra)/medOf(rb), med(ratios))
	}
}

func shapeBytes(shape string) int {
	r, s, _ := strings.Cut(shape, "x")
	a, _ := strconv.Atoi(r)
	b, _ := strconv.Atoi(s)
	return a * b
}

// metricMedian is the median of the metric over the runs that have it.
func metricMedian(rs []run, name string) float64 {
	var xs []float64
	for _, r := range rs {
		if v, ok := r.metrics[name]; ok {
			xs = append(xs, v)
		}
	}
	return med(xs)
}

// med is the median of xs (internal/median), 0 for none.
func med(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median.Of(xs)
}

// jfrShareMetric is the per-run figure jfrThreadShare adds to a run's
// metrics (not one of kbench's).
const jfrShareMetric = "bench-jfr-thread-cpu-share"

// jfrThreadShare reads run.sh's jvm-threads.tsv (time ns, thread name,
// thread CPU ns; one line per thread per snapshot) and returns the CPU of
// Flight Recorder's threads (names starting "JFR ") as a share of the
// whole JVM's, from the first snapshot in which JFR's sampler thread runs
// (it starts with the recording) to each thread's last one. The span
// includes the recording's stop and dump, so the share is an upper bound
// of the window's. It leaves out what sampling costs the sampled threads
// themselves (being suspended and walked).
func jfrThreadShare(path string) (float64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	type snap map[string]float64 // thread name (with a counter for duplicates) → CPU ns
	var times []string
	snaps := map[string]snap{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		ns, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			continue
		}
		sn, ok := snaps[f[0]]
		if !ok {
			sn = snap{}
			snaps[f[0]] = sn
			times = append(times, f[0])
		}
		name := f[1]
		for i := 2; ; i++ {
			if _, dup := sn[name]; !dup {
				break
			}
			name = f[1] + "#" + strconv.Itoa(i)
		}
		sn[name] = ns
	}
	first := -1
	for i, t := range times {
		for name := range snaps[t] {
			if strings.HasPrefix(name, "JFR Thread Sam") {
				first = i
				break
			}
		}
		if first >= 0 {
			break
		}
	}
	if first < 0 || first == len(times)-1 {
		return 0, false
	}
	// Each thread's CPU at its last sighting: the snapshot taken while
	// the JVM exits can miss threads, and the counters only grow.
	a, last := snaps[times[first]], snap{}
	for _, t := range times[first:] {
		for name, v := range snaps[t] {
			last[name] = max(last[name], v)
		}
	}
	var jfrNs, all float64
	for name, v := range last {
		d := v - a[name] // a thread started after the first snapshot counts from 0
		all += d
		if strings.HasPrefix(name, "JFR ") {
			jfrNs += d
		}
	}
	if all <= 0 {
		return 0, false
	}
	return jfrNs / all, true
}

// printShares prints the median share of Flight Recorder's threads in the
// JVM's CPU for the strategies that record.
func printShares(keys []key, runs map[key][]run) {
	printed := false
	for _, k := range keys {
		rs := runs[k]
		var xs []float64
		for _, r := range rs {
			if v, ok := r.metrics[jfrShareMetric]; ok {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			continue
		}
		if !printed {
			fmt.Println()
			fmt.Println("Flight Recorder's threads (\"JFR …\") in the JVM's CPU from the recording's start to the JVM's end, /proc/PID/task/*/schedstat: median (min–max)")
			printed = true
		}
		sort.Float64s(xs)
		fmt.Printf("  %-9s %-7s %-22s %.1f%% (%.1f–%.1f%%) of %d runs\n", k.shape, k.target, k.strategy, 100*med(xs), 100*xs[0], 100*xs[len(xs)-1], len(xs))
	}
}
