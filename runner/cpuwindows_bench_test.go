package runner

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/json"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkProfileWindowBoundary: the CPU one --profile-windows boundary
// costs the process. Go's profiler is read by stopping it: the stop writes
// the window out (symbolising, encoding and compressing its samples) and
// the next window starts the profiler again. Two goroutines run a mixed
// workload (JSON, SHA-256, flate, sorting, strconv: a few hundred
// distinct stacks, as a producer's window holds) with the profiler on;
// at each boundary they pause, so the process CPU (getrusage) measured
// around StopCPUProfile + StartCPUProfile is the boundary's alone.
//
// Windows of 2 s, the shortest a run has, and of 200 ms (fewer samples:
// what the boundary costs beyond the samples it writes out). Reported:
// cpu-ms/boundary, and, for scale, the CPU the workload used per window
// (cpu-ms/window; -benchtime sets how many windows). A run's cost is
// cpu-ms/boundary divided by the client CPU of one of its windows:
// bench/cost/windows.sh measures that end to end.
//
//	go test -run - -bench ProfileWindowBoundary -benchtime 5x -count 5 ./runner
func BenchmarkProfileWindowBoundary(b *testing.B) {
	for _, window := range []time.Duration{200 * time.Millisecond, 2 * time.Second} {
		b.Run("window="+window.String(), func(b *testing.B) { benchWindowBoundary(b, window) })
	}
}

func benchWindowBoundary(b *testing.B, window time.Duration) {
	dir := b.TempDir()
	var gate sync.RWMutex // writers (the boundary) pause the workload
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(seed int) {
			defer wg.Done()
			for i := seed; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				gate.RLock()
				mixedWork(i)
				gate.RUnlock()
			}
		}(w)
	}
	defer func() { close(stop); wg.Wait() }()

	start := func(i int) *os.File {
		f, err := os.Create(dir + "/w" + strconv.Itoa(i) + ".pb.gz")
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		return f
	}
	var boundary, work time.Duration
	f := start(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w0 := processCPU(b)
		time.Sleep(window)
		gate.Lock()
		c0 := processCPU(b)
		work += c0 - w0
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		f = start(i + 1)
		boundary += processCPU(b) - c0
		gate.Unlock()
	}
	b.StopTimer()
	pprof.StopCPUProfile()
	f.Close()
	b.ReportMetric(float64(boundary)/float64(b.N)/1e6, "cpu-ms/boundary")
	b.ReportMetric(float64(work)/float64(b.N)/1e6, "cpu-ms/window")
}

// processCPU is the process's user + system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mixedWork is one unit of BenchmarkProfileWindowBoundary's workload:
// which kind of work, and how deep, depends on i, so the profile holds
// many distinct stacks.
func mixedWork(i int) {
	switch i % 5 {
	case 0:
		v := map[string]any{"i": i, "s": strconv.Itoa(i * 7919), "l": []int{i, i + 1, i + 2}}
		data, _ := json.Marshal(v)
		var back map[string]any
		_ = json.Unmarshal(data, &back)
	case 1:
		buf := make([]byte, 4096+i%512)
		for k := range buf {
			buf[k] = byte(i + k)
		}
		_ = sha256.Sum256(buf)
	case 2:
		var out bytes.Buffer
		zw, _ := flate.NewWriter(&out, flate.BestSpeed)
		zw.Write(bytes.Repeat([]byte(strconv.Itoa(i)), 256))
		zw.Close()
	case 3:
		xs := make([]int, 512)
		for k := range xs {
			xs[k] = (k * 2654435761) ^ i
		}
		sort.Ints(xs)
	default:
		recurse(i%12, i)
	}
}

// recurse adds stacks of different depths.
func recurse(depth, i int) int {
	if depth == 0 {
		return len(strconv.FormatFloat(float64(i)/3, 'g', -1, 64))
	}
	return recurse(depth-1, i+1) + 1
}
