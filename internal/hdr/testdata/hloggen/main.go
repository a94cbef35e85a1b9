// Command hloggen writes the reference files of internal/hdr's log tests
// (hlog_test.go) with an independent implementation of HdrHistogram's log
// format, the hdrhistogram-go module (v1.4.0): its log writer writes logs
// for ReadLog to read, and its log reader reads WriteLog's log. It is its
// own module under testdata, so kbench's build never links it; it was run
// once:
//
//	cd internal/hdr && go test -run TestHdrHistogramGoReadsWriteLog -write-hlog
//	cd testdata/hloggen
//	go run . write-relative < ../kbench-hlog-cases.txt > ../hdrhistogram-go-v1.4.0-relative.hlog
//	go run . write-absolute < ../kbench-hlog-cases.txt > ../hdrhistogram-go-v1.4.0-absolute.hlog
//	go run . read < ../kbench.hlog > ../kbench-hlog-read-by-hdrhistogram-go-v1.4.0.txt
//
// The write modes read the test's cases: a first line "start<TAB>MS" (the
// log's start, ms since the epoch), then one line per interval,
// "TAG<TAB>START_MS<TAB>LENGTH_MS<TAB>COUNT<TAB>BASE64": its tag (maybe
// empty), start (ms after the log's), length, value count and histogram in
// kbench's encoding. They decode each histogram (checking the count) and
// log them with hdrhistogram-go's writer after a comment, the version
// line, the StartTime line and the legend: write-relative with starts
// relative to the log's start (the writer's base time), write-absolute
// with absolute starts (seconds since the epoch). Neither writes a
// BaseTime line, so a reader has to tell the two apart as Java's does.
//
// The read mode reads a log with hdrhistogram-go's reader and writes one
// line per interval, "TAG<TAB>START_MS<TAB>LENGTH_MS<TAB>COUNT<TAB>MAX"
// and the values at quantiles 50, 90, 99, 99.9 and 100, each after a
// tab: the absolute start and the length as the reader gives them
// (truncated to the ms), and what the histogram it decoded answers.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func main() {
	if len(os.Args) != 2 {
		fail("usage: hloggen write-relative|write-absolute|read < input > output")
	}
	out := bufio.NewWriter(os.Stdout)
	switch os.Args[1] {
	case "write-relative":
		write(out, true)
	case "write-absolute":
		write(out, false)
	case "read":
		read(out)
	default:
		fail("unknown mode %q", os.Args[1])
	}
	if err := out.Flush(); err != nil {
		fail("write: %v", err)
	}
}

func write(out *bufio.Writer, relative bool) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<22)
	if !in.Scan() {
		fail("no start line")
	}
	first, ms, ok := strings.Cut(in.Text(), "\t")
	startMs, err := strconv.ParseInt(ms, 10, 64)
	if first != "start" || !ok || err != nil {
		fail("line 1: want start<TAB>MS")
	}
	w := hdrhistogram.NewHistogramLogWriter(out)
	check(w.OutputComment("[Logged with hloggen, hdrhistogram-go v1.4.0's log writer]"))
	check(w.OutputLogFormatVersion())
	check(w.OutputStartTime(startMs))
	if relative {
		w.SetBaseTime(startMs)
	}
	check(w.OutputLegend())
	for n := 2; in.Scan(); n++ {
		f := strings.Split(in.Text(), "\t")
		if len(f) != 5 {
			fail("line %d: want TAG<TAB>START_MS<TAB>LENGTH_MS<TAB>COUNT<TAB>BASE64", n)
		}
		var nums [3]int64
		for i := range nums {
			if nums[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
				fail("line %d: %v", n, err)
			}
		}
		h, err := hdrhistogram.Decode([]byte(f[4]))
		if err != nil {
			fail("line %d: hdrhistogram-go cannot decode kbench's encoding: %v", n, err)
		}
		if h.TotalCount() != nums[2] {
			fail("line %d: hdrhistogram-go read %d values, want %d", n, h.TotalCount(), nums[2])
		}
		h.SetTag(f[0])
		h.SetStartTimeMs(startMs + nums[0])
		h.SetEndTimeMs(startMs + nums[0] + nums[1])
		check(w.OutputIntervalHistogram(h))
	}
	check(in.Err())
}

func read(out *bufio.Writer) {
	r := hdrhistogram.NewHistogramLogReader(os.Stdin)
	for {
		h, err := r.NextIntervalHistogram()
		check(err)
		if h == nil {
			return
		}
		fmt.Fprintf(out, "%s\t%d\t%d\t%d\t%d", h.Tag(), h.StartTimeMs(), h.EndTimeMs()-h.StartTimeMs(), h.TotalCount(), h.Max())
		for _, q := range []float64{50, 90, 99, 99.9, 100} {
			fmt.Fprintf(out, "\t%d", h.ValueAtQuantile(q))
		}
		fmt.Fprintln(out)
	}
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hloggen: "+format+"\n", args...)
	os.Exit(1)
}
