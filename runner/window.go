package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/sysstat"
)

// Sampling rates for the contention profiles. Both are off outside the
// window; these rates keep their overhead small while still catching the
// contention that matters for a client benchmark.
const (
	mutexProfileFraction = 10    // one in ten contention events
	blockProfileRateNs   = 10000 // one blocking event per 10 µs spent blocked, on average
	cpuSampleInterval    = 100 * time.Millisecond
)

// window is the measured part of a run: everything between open and close
// is in the figures and profiles; prefill and warm-up are outside it.
type window struct {
	dir    string // "" when profiles are not written
	kinds  []string
	broker *childBroker

	start time.Time
	end   time.Time
	// endAt is end for other goroutines: the series' ticker must not add a
	// point past the window's end.
	endAt    atomic.Pointer[time.Time]
	cpuStart time.Duration
	cpuEnd   time.Duration
	io0, io1 sysstat.IO
	ioErr    error
	gc0, gc1 sysstat.GCSnapshot
	sampler  *sysstat.CPUSampler
	cpu      sysstat.CPUSummary
	cpuFile  *os.File
	allocs0  *profile.Profile
	// windows, when set, records the CPU profile in windows
	// (--profile-windows; cpuwindows.go) instead of cpuFile, or, for
	// the JVM, only their boundaries.
	windows *profWindows

	profiles []rundoc.ProfileFile
	notes    []string

	// records points at the run's count of measured records (its result's
	// Measurement.MeasuredRecords). Every workload fills that in before it
	// asks for processMetrics, so the CPU per record is computed here from
	// the same two figures the result shows, with no count passed around.
	records *int64

	// demand0 and demand1 are the threads' scheduler statistics at the
	// window's ends (see harness.go).
	demand0, demand1 map[int]sysstat.Demand
	demandErr        error

	// ext, when set, is the process whose counters the window reads
	// instead of kbench's own (see extProcess).
	ext *extProcess
	// brokerCPU: the child broker's (or sink's) CPU profile is captured.
	brokerCPU bool
}

// extProcess is a process other than kbench that does the measured work:
// the JVM of the write-path lab's Java strategies. The window then reads
// its CPU time (/proc/PID/stat), its threads' scheduler statistics and the
// I/O counters of its sending thread (/proc/PID/task/TID/io), and captures
// none of the Go runtime's profiles, which would show only kbench relaying
// events.
type extProcess struct {
	pid, tid int
	name     string // "the JVM", for texts
}

func (w *window) readIO() (sysstat.IO, error) {
	if w.ext != nil {
		return sysstat.ReadThreadIO(w.ext.pid, w.ext.tid)
	}
	return sysstat.ReadIO()
}

func (w *window) cpuTime() (time.Duration, error) {
	if w.ext != nil {
		return sysstat.ProcessCPUTime(w.ext.pid)
	}
	return sysstat.CPUTime()
}

func (w *window) threadDemand() (map[int]sysstat.Demand, error) {
	if w.ext != nil {
		return sysstat.ThreadDemandOf(w.ext.pid)
	}
	return sysstat.ThreadDemand()
}

func (w *window) wants(kind string) bool { return w.dir != "" && slices.Contains(w.kinds, kind) }

// open starts the measured window: profiles first, counters last, so the
// counters see as little of the profilers' start-up as possible.
// With windows the CPU profile is recorded in windows (profWindows).
func openWindow(dir string, kinds []string, broker *childBroker, ext *extProcess, windows bool) (*window, error) {
	w := &window{dir: dir, kinds: kinds, broker: broker, ext: ext}
	w.brokerCPU = w.wants("cpu")
	if ext != nil {
		w.kinds = nil // the Go runtime's profiles: kbench's, not the JVM's
	}
	if w.wants("allocs") {
		// The allocs profile is cumulative since the process started; keep
		// a base so the stored profile holds only the window's allocations.
		p, err := lookupProfile("allocs")
		if err != nil {
			return nil, err
		}
		w.allocs0 = p
	}
	if w.wants("mutex") {
		runtime.SetMutexProfileFraction(mutexProfileFraction)
	}
	if w.wants("block") {
		runtime.SetBlockProfileRate(blockProfileRateNs)
	}
	switch {
	case windows && w.wants("cpu"):
		pw, err := startProfWindows(dir, true, w.cpuTime)
		if err != nil {
			return nil, err
		}
		w.windows = pw
	case windows && ext != nil && dir != "":
		// The JVM's samples are named by the same windows.
		pw, err := startProfWindows(dir, false, w.cpuTime)
		if err != nil {
			return nil, err
		}
		w.windows = pw
	case w.wants("cpu"):
		f, err := os.Create(filepath.Join(dir, "client-cpu.pb.gz"))
		if err != nil {
			return nil, fmt.Errorf("runner: cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("runner: cpu profile: %w", err)
		}
		w.cpuFile = f
	}
	// The broker's CPU profile comes with the client's: --profile none
	// means no profiling anywhere.
	if broker != nil && w.brokerCPU {
		if err := broker.startCPUProfile(filepath.Join(dir, "broker-cpu.pb.gz")); err != nil {
			w.notes = append(w.notes, "broker CPU profile not captured: "+err.Error())
		}
	}
	w.gc0 = sysstat.ReadGC()
	w.io0, w.ioErr = w.readIO()
	w.cpuStart, _ = w.cpuTime()
	w.demand0, w.demandErr = w.threadDemand()
	w.sampler = sysstat.StartCPUSamplerOf(cpuSampleInterval, w.cpuTime)
	w.start = time.Now()
	if w.windows != nil {
		w.windows.begin(w.start)
	}
	return w, nil
}

// stop ends the measured window: counters first, then profilers.
func (w *window) stop() {
	if !w.end.IsZero() {
		return
	}
	w.end = time.Now()
	end := w.end
	w.endAt.Store(&end)
	w.cpu = w.sampler.Stop()
	w.cpuEnd, _ = w.cpuTime()
	if w.demandErr == nil {
		w.demand1, w.demandErr = w.threadDemand()
	}
	if w.ioErr == nil {
		w.io1, w.ioErr = w.readIO()
	}
	w.gc1 = sysstat.ReadGC()
	if w.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := w.cpuFile.Close(); err != nil {
			w.notes = append(w.notes, "client CPU profile: "+err.Error())
		} else {
			w.profiles = append(w.profiles, rundoc.ProfileFile{Role: "client", Kind: "cpu", File: "client-cpu.pb.gz"})
		}
		w.cpuFile = nil
	}
	if pw := w.windows; pw != nil {
		err := pw.stop(w.end)
		if pw.goProfile {
			note := ""
			if err == nil {
				note, err = pw.write(filepath.Join(w.dir, "client-cpu.pb.gz"))
			}
			if err != nil {
				w.notes = append(w.notes, "client CPU profile not captured: "+err.Error())
			} else {
				w.notes = append(w.notes, note)
				w.profiles = append(w.profiles, rundoc.ProfileFile{Role: "client", Kind: "cpu", File: "client-cpu.pb.gz"})
			}
		}
	}
	if w.broker != nil && w.brokerCPU {
		if err := w.broker.stopCPUProfile(); err != nil {
			w.notes = append(w.notes, "broker CPU profile not captured: "+err.Error())
		} else {
			w.profiles = append(w.profiles, rundoc.ProfileFile{Role: "broker", Kind: "cpu", File: "broker-cpu.pb.gz"})
		}
	}
}

// snapshot writes the point-in-time profiles. It runs after stop and before
// the clients close, so they describe the workload's steady state without
// their cost (a GC for heap) landing inside the measured figures.
func (w *window) snapshot() {
	for _, kind := range []string{"heap", "goroutine", "mutex", "block", "allocs"} {
		if !w.wants(kind) {
			continue
		}
		if err := w.writeSnapshot(kind); err != nil {
			w.notes = append(w.notes, fmt.Sprintf("client %s profile not captured: %v", kind, err))
			continue
		}
		w.profiles = append(w.profiles, rundoc.ProfileFile{Role: rundoc.RoleClient, Kind: rundoc.ProfileKind(kind), File: "client-" + kind + ".pb.gz"})
	}
	if w.wants("mutex") {
		runtime.SetMutexProfileFraction(0)
	}
	if w.wants("block") {
		runtime.SetBlockProfileRate(0)
	}
}

func (w *window) writeSnapshot(kind string) error {
	path := filepath.Join(w.dir, "client-"+kind+".pb.gz")
	if kind == "allocs" && w.allocs0 != nil {
		end, err := lookupProfile("allocs")
		if err != nil {
			return err
		}
		delta, err := subtractProfile(end, w.allocs0)
		if err != nil {
			return err
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := delta.Write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if kind == "heap" {
		// The heap profile reports the state as of the last GC; collect now
		// so in-use figures are current.
		runtime.GC()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(kind).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func lookupProfile(kind string) (*profile.Profile, error) {
	var buf bytes.Buffer
	if err := pprof.Lookup(kind).WriteTo(&buf, 0); err != nil {
		return nil, fmt.Errorf("runner: %s profile: %w", kind, err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, fmt.Errorf("runner: %s profile: %w", kind, err)
	}
	return p, nil
}

// subtractProfile returns end − base: what was recorded between the two.
func subtractProfile(end, base *profile.Profile) (*profile.Profile, error) {
	base = base.Copy()
	base.Scale(-1)
	p, err := profile.Merge([]*profile.Profile{end, base})
	if err != nil {
		return nil, fmt.Errorf("runner: subtract profiles: %w", err)
	}
	kept := p.Sample[:0]
	for _, s := range p.Sample {
		for _, v := range s.Value {
			if v != 0 {
				kept = append(kept, s)
				break
			}
		}
	}
	p.Sample = kept
	p = p.Compact()
	p.TimeNanos = end.TimeNanos
	p.DurationNanos = end.TimeNanos - base.TimeNanos
	if p.DurationNanos < 0 {
		p.DurationNanos = 0
	}
	return p, nil
}

// tick passes the series' tick at now, its step then step, to the
// profile's windows; any goroutine may call it.
func (w *window) tick(now time.Time, step time.Duration) {
	if w.windows != nil {
		w.windows.tick(now, step)
	}
}

// since is how far into the window t lies, in seconds. It reads only the
// start, which never changes once the window is open, so interval
// goroutines may call it while the window is being stopped.
func (w *window) since(t time.Time) float64 { return t.Sub(w.start).Seconds() }

// ended reports whether the window had ended by t; any goroutine may ask.
func (w *window) ended(t time.Time) bool {
	end := w.endAt.Load()
	return end != nil && !t.Before(*end)
}

// seconds is the window's length; while open, up to now. Only the run's own
// goroutine may call it.
func (w *window) seconds() float64 {
	end := w.end
	if end.IsZero() {
		end = time.Now()
	}
	return end.Sub(w.start).Seconds()
}

// processMetrics are the figures about this process over the window.
func (w *window) processMetrics(bytesMoved int64) []rundoc.Metric {
	secs := w.seconds()
	cpuUsed := (w.cpuEnd - w.cpuStart).Seconds()
	ms := []rundoc.Metric{
		{Name: "process-cpu-avg", Value: w.cpu.AvgPercent, Unit: "%", Better: rundoc.LowerIsBetter,
			Help: "process CPU time over the window's wall time, in % of one core" + w.procNote()},
		{Name: "process-cpu-seconds", Value: cpuUsed, Unit: "s", Better: rundoc.LowerIsBetter,
			Help: "user + system CPU time of the whole process over the window" + w.procNote()},
	}
	if w.cpu.Samples > 0 {
		// A window shorter than one sample has no p99 or maximum to show;
		// reporting 0% would read as an idle client.
		ms = append(ms,
			rundoc.Metric{Name: "process-cpu-p99", Value: w.cpu.P99Percent, Unit: "%", Better: rundoc.LowerIsBetter,
				Help: fmt.Sprintf("99th percentile of %d CPU samples of %v each, in %% of one core", w.cpu.Samples, cpuSampleInterval)},
			rundoc.Metric{Name: "process-cpu-max", Value: w.cpu.MaxPercent, Unit: "%", Better: rundoc.LowerIsBetter,
				Help: "highest CPU sample, in % of one core"})
	}
	if bytesMoved > 0 {
		// GiB, as Kafka's MB is 2^20 bytes (mb-per-sec). Runs before the
		// change reported cpu-seconds-per-gb per 10^9 bytes; a new name
		// keeps comparisons from mixing the two.
		ms = append(ms, rundoc.Metric{Name: "cpu-seconds-per-gib", Value: cpuUsed / (float64(bytesMoved) / (1 << 30)), Unit: "s/GiB", Better: rundoc.LowerIsBetter,
			Help: "client CPU seconds per GiB of payload (2^30 = 1,073,741,824 bytes, as Kafka's MB is 2^20)"})
	}
	if n := w.measuredRecords(); n > 0 && cpuUsed > 0 {
		src := "user + system CPU time of the whole process over the measured window, getrusage"
		if w.ext != nil {
			src = "user + system CPU time of the measured process over the window" + w.procNote()
		}
		ms = append(ms, rundoc.Metric{Name: "cpu-seconds-per-million-records", Value: cpuUsed / float64(n) * 1e6, Unit: "s", Better: rundoc.LowerIsBetter,
			Help: fmt.Sprintf("process-cpu-seconds (%s) / %d records measured × 1,000,000: what the instrument and its client cost per million records", src, n)})
	}
	if w.ext == nil { // the Go runtime's own figures; the JVM's are not read
		gc := w.gc1.Sub(w.gc0)
		ms = append(ms,
			rundoc.Metric{Name: "gc-count", Value: float64(gc.Cycles), Unit: "cycles", Better: rundoc.LowerIsBetter, Help: "completed GC cycles in the window"},
			rundoc.Metric{Name: "gc-pause-total", Value: gc.PauseTotal.Seconds() * 1000, Unit: "ms", Better: rundoc.LowerIsBetter, Help: "stop-the-world GC pause time in the window"},
			rundoc.Metric{Name: "heap-peak", Value: float64(w.cpu.HeapPeak.AllocBytes) / (1 << 20), Unit: "MiB", Better: rundoc.LowerIsBetter,
				Help: fmt.Sprintf("largest Go heap held by objects, live or dead but not yet swept by the GC (runtime/metrics %s, as MemStats.HeapAlloc), sampled every %v: not the live heap, and a lower bound of the true peak",
					sysstat.HeapPeakMetric, cpuSampleInterval)},
		)
	}
	if w.ioErr != nil {
		if errors.Is(w.ioErr, sysstat.ErrUnsupported) {
			w.notes = append(w.notes, "syscall counters unavailable: "+w.ioErr.Error())
		}
		return ms
	}
	io := w.io1.Sub(w.io0)
	who, file := "the process", "/proc/self/io"
	if w.ext != nil {
		who, file = w.ext.name+"'s sending thread", fmt.Sprintf("/proc/%d/task/%d/io", w.ext.pid, w.ext.tid)
	}
	ms = append(ms,
		rundoc.Metric{Name: "syscw", Value: float64(io.Syscw), Unit: "syscalls", Better: rundoc.LowerIsBetter, Help: "write-type syscalls of " + who + " through the VFS write path (write, writev, pwrite; not send or sendmsg, which Go's and the JDK's TCP writes do not use), " + file},
		rundoc.Metric{Name: "syscr", Value: float64(io.Syscr), Unit: "syscalls", Better: rundoc.LowerIsBetter, Help: "read-type syscalls of " + who + ", " + file},
		rundoc.Metric{Name: "wchar", Value: float64(io.Wchar), Unit: "bytes", Help: "bytes passed to write-type syscalls, " + file},
		rundoc.Metric{Name: "rchar", Value: float64(io.Rchar), Unit: "bytes", Help: "bytes returned by read-type syscalls, " + file},
	)
	if io.Syscw > 0 {
		ms = append(ms, rundoc.Metric{Name: "bytes-per-write-syscall", Value: float64(io.Wchar) / float64(io.Syscw), Unit: "bytes", Better: rundoc.HigherIsBetter,
			Help: "wchar / syscw: fewer, larger writes mean gathering write paths"})
	}
	if io.Syscr > 0 {
		ms = append(ms, rundoc.Metric{Name: "bytes-per-read-syscall", Value: float64(io.Rchar) / float64(io.Syscr), Unit: "bytes", Better: rundoc.HigherIsBetter,
			Help: "rchar / syscr"})
	}
	if secs > 0 {
		ms = append(ms,
			rundoc.Metric{Name: "syscw-rate", Value: float64(io.Syscw) / secs, Unit: "syscalls/s", Help: "write-type syscalls per second"},
		)
	}
	return ms
}

// measuredRecords is the run's count of measured records, 0 when unknown.
func (w *window) measuredRecords() int64 {
	if w.records == nil {
		return 0
	}
	return *w.records
}

// procNote says which process the CPU figures are of when it is not kbench.
func (w *window) procNote() string {
	if w.ext == nil {
		return ""
	}
	return fmt.Sprintf(" (%s, pid %d, /proc/%d/stat in 10 ms steps)", w.ext.name, w.ext.pid, w.ext.pid)
}

// close stops profilers left running by a failed run, so the process never
// ends with a half-written CPU profile.
func (w *window) close() {
	if w == nil {
		return
	}
	if w.end.IsZero() {
		w.stop()
	}
}
