package runner

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// When kbench flags a run as limited by its own load generator. A
// benchmark measures the client and the broker only while the program
// driving them keeps up: Kafka's own producer tool was once found halving
// throughput by generating payloads.
const (
	// harnessCPUShare: the process used, or waited for, at least this
	// share of the CPU its GOMAXPROCS allows over the window.
	harnessCPUShare = 0.90
	// A throttled producer is behind its schedule when its intended-time
	// p99 latency is over behindFactor × its service p99 and over
	// behindMinMs, while the broker answers quickly: produce requests
	// take under a behindFactor-th of that p99 on average and send spent
	// under blockedMaxShare of the window waiting for buffer.memory.
	behindFactor    = 10
	behindMinMs     = 10
	blockedMaxShare = 0.10
)

// harnessCheck adds harness-cpu-saturation and harness-limited to the
// result and, when the load generator limited the run, says why in the
// measurement (HarnessLimits) and in a note. behind is the producer's
// "behind its schedule" reason, "" when it kept up or was not throttled.
//
// The saturation is the CPU the process's threads wanted (time on a CPU
// plus time runnable on a run queue, from the kernel's scheduler
// statistics, summed over its threads) over what GOMAXPROCS allows in the
// window. Counting the wait, not only the CPU time, keeps the figure right
// on a machine that other programs load: a busy thread denied the CPU is
// still a busy thread. (Go moves its Ps between threads, so no single
// thread shows a busy P; the sum over threads does.)
func (r *run) harnessCheck(behind string) {
	w := r.win
	if w == nil || w.end.IsZero() {
		return
	}
	m := &r.res.Measurement
	procs := runtime.GOMAXPROCS(0)
	tasks := "/proc/self/task/*/schedstat"
	if w.ext != nil { // the JVM's threads may use every core
		procs = runtime.NumCPU()
		tasks = fmt.Sprintf("/proc/%d/task/*/schedstat, %s's", w.ext.pid, w.ext.name)
	}
	limit := min(procs, runtime.NumCPU())
	wall := w.end.Sub(w.start)
	var reasons []string
	if wall > 0 {
		pct := func(d time.Duration) float64 { return 100 * d.Seconds() / wall.Seconds() }
		var run, wait time.Duration
		var help string
		if w.demandErr == nil {
			for tid, d := range w.demand1 {
				d = d.Sub(w.demand0[tid]) // a thread born in the window counts from 0
				run, wait = run+d.Run, wait+d.Wait
			}
			help = fmt.Sprintf("CPU time plus run-queue wait of the process's threads (%s) in %% of the window × %d (GOMAXPROCS=%d on %d cores); at %.0f%% or more the load generator limited the run",
				tasks, limit, procs, runtime.NumCPU(), harnessCPUShare*100)
		} else {
			run = w.cpuEnd - w.cpuStart
			help = fmt.Sprintf("process CPU time in %% of the window × %d (GOMAXPROCS=%d on %d cores; scheduler statistics unavailable: %v); at %.0f%% or more the load generator limited the run",
				limit, procs, runtime.NumCPU(), w.demandErr, harnessCPUShare*100)
		}
		saturation := (run + wait).Seconds() / (float64(limit) * wall.Seconds())
		r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: "harness-cpu-saturation", Value: 100 * saturation, Unit: "%", Help: help})
		if saturation >= harnessCPUShare {
			reasons = append(reasons, fmt.Sprintf("CPU: its threads ran %.0f%% of a core and waited for a CPU %.0f%% of a core over the window, together %.0f%% of what GOMAXPROCS=%d on %d cores allows (flagged at ≥ %.0f%%)",
				pct(run), pct(wait), 100*saturation, procs, runtime.NumCPU(), harnessCPUShare*100))
		}
	}
	if behind != "" {
		reasons = append(reasons, behind)
	}
	flag := 0.0
	if len(reasons) > 0 {
		flag = 1
		m.HarnessLimits = reasons
		m.Notes = append(m.Notes, "load generator limited this run: "+strings.Join(reasons, "; ")+
			"; its figures show what kbench could drive, not what the client or the broker can do")
	}
	r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: "harness-limited", Value: flag, Unit: "flag",
		Help: "1 when kbench's own load generator limited the run (its CPU, or a throttled producer behind its schedule; see the notes), 0 otherwise"})
}

// behindSchedule is the producer's reason for harnessCheck: a throttled
// producer that fell behind the schedule it was given while the broker
// answered quickly, so the delay was kbench's.
func behindSchedule(intendedP99, serviceP99, requestAvg, blocked float64) string {
	if intendedP99 <= behindFactor*serviceP99 || intendedP99 <= behindMinMs || requestAvg*behindFactor >= intendedP99 || blocked >= blockedMaxShare {
		return ""
	}
	return fmt.Sprintf("behind its schedule: the throttled producer's intended-time p99 latency (%.1f ms) was over %d× its service p99 (%.1f ms) and over %d ms, "+
		"while the broker answered quickly (produce requests %.2f ms on average, under a %dth of it; send blocked on buffer.memory %.0f%% of the time, under %.0f%%): "+
		"records were handed to the client later than the schedule asked, because the producing goroutine (kbench's loop and the client's send call) could not keep up",
		intendedP99, behindFactor, serviceP99, behindMinMs, requestAvg, behindFactor, 100*blocked, blockedMaxShare*100)
}
