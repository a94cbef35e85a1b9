package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
)

// loggedHist is a latency histogram whose intervals the run logs: its
// kind, and the lock its owner records it under.
type loggedHist struct {
	kind string
	mu   *sync.Mutex
	h    *latencyHist
}

// logIntervals keeps the interval histograms of hs on a grid of
// rundoc.HistogramLogStep from the window's start: at each tick every
// histogram's slot is swapped for an empty one under its owner's lock,
// then encoded outside it, so recording waits for a pointer swap, never
// for an encoding. An interval with no value is kept too (count 0): a
// second in which nothing completed is a stall the log must show. stop,
// called once the window has ended, logs the last, shorter interval up
// to the window's end. The intervals are the result's interval
// histograms, in time order, kinds in hs's order within an interval.
func (r *run) logIntervals(hs ...loggedHist) (stop func()) {
	// take runs on the ticker's goroutine, then once more in stop after
	// that goroutine has ended: never twice at once.
	var (
		last = 0.0
		out  []rundoc.Histogram
		size int // the log's bytes, about
		// full is set once the log has no room for another interval, at
		// fullAt seconds: it ends there, whole intervals only.
		full   bool
		fullAt float64
	)
	take := func(end float64) {
		if end <= last {
			return
		}
		if !full && (len(out)+len(hs) > logEntries || size > logBytesBudget) {
			full, fullAt = true, last
		}
		for _, lh := range hs {
			lh.mu.Lock()
			slot := lh.h.takeSlot()
			lh.mu.Unlock()
			// The window's histogram is the sum of its slots; only this
			// goroutine writes it while the log runs (record fills the
			// slot), and its readers come after stop.
			_ = lh.h.h.Merge(slot)
			if full {
				continue
			}
			h := rundoc.Histogram{Kind: lh.kind, Scope: rundoc.HistogramInterval,
				StartS: last, EndS: end, Count: slot.TotalCount(), Data: slot.Encode()}
			size += len(h.Data) + len(h.Kind) + 40
			out = append(out, h)
		}
		last = end
	}
	for _, lh := range hs {
		lh.mu.Lock()
		lh.h.logged = true
		lh.mu.Unlock()
	}
	stopTicks := r.everyInWindow(logStep, func(now time.Time) time.Duration {
		take(r.win.since(now))
		return logStep
	})
	return func() {
		// The last, shorter interval, up to the window's end.
		end := stopTicks()
		take(r.win.since(end))
		// From here on values go to the window's histogram again; none
		// should come (the window has ended), but none may be lost.
		for _, lh := range hs {
			lh.mu.Lock()
			lh.h.logged = false
			_ = lh.h.h.Merge(lh.h.takeSlot())
			lh.mu.Unlock()
		}
		r.rep.mu.Lock()
		r.intervals = append(r.intervals, out...)
		if full {
			r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
				"the interval histograms stop at %.0f s: a run's histogram log holds at most %d histograms or %d MiB; the window's whole histograms hold every value",
				fullAt, hdr.MaxLogEntries, hdr.MaxLogBytes>>20))
		}
		r.rep.mu.Unlock()
	}
}

// The log's step and room: its grid (rundoc.HistogramLogStep), and how
// many of the log reader's entries and bytes (hdr.MaxLogEntries,
// MaxLogBytes) the runner fills, leaving room for the lines' other
// fields. Variables for the tests only.
var (
	logStep        = rundoc.HistogramLogStep
	logEntries     = hdr.MaxLogEntries
	logBytesBudget = hdr.MaxLogBytes * 3 / 4
)

// writeHistogramLog writes the interval histograms to dir's
// rundoc.HistogramLogFile, whole or not at all (a temporary file, then
// a rename), and names it in the result; nothing when the run logged
// none.
func (r *run) writeHistogramLog(dir string) error {
	r.rep.mu.Lock()
	hs := r.intervals
	r.rep.mu.Unlock()
	if len(hs) == 0 || r.win == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := runhist.WriteLog(&buf, r.win.start, hs); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	tmp := filepath.Join(dir, "."+rundoc.HistogramLogFile+".tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("runner: write histogram log: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, rundoc.HistogramLogFile)); err != nil {
		return fmt.Errorf("runner: write histogram log: %w", err)
	}
	r.res.HistogramLog = rundoc.HistogramLogFile
	return nil
}
