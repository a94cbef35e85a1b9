// Package runhist reads and writes the latency histograms of the run
// contract (rundoc.Histogram): it checks a histogram that came from
// outside against the run's layout, and turns a run's interval
// histograms into HdrHistogram's log format and back. It is apart from
// rundoc, which links only the standard library, because it needs the
// histogram itself (internal/hdr).
package runhist

import (
	"fmt"
	"io"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// Check checks a histogram that came from outside (an import, a
// posted result): a known kind and scope, times in order, and data that
// decodes, in the run's layout, to Count values. It returns the decoded
// histogram.
func Check(h rundoc.Histogram) (*hdr.Histogram, error) {
	switch {
	case !rundoc.ValidHistogramKind(h.Kind):
		return nil, fmt.Errorf("kind %q is not one of %v", h.Kind, rundoc.HistogramKinds)
	case h.Scope != rundoc.HistogramWindow && h.Scope != rundoc.HistogramInterval:
		return nil, fmt.Errorf("%s: scope %q is neither %q nor %q", h.Kind, h.Scope, rundoc.HistogramWindow, rundoc.HistogramInterval)
	case !(h.StartS >= 0) || !(h.EndS >= h.StartS) || h.EndS > maxSeconds:
		return nil, fmt.Errorf("%s: times %v to %v s are not an interval of a run", h.Kind, h.StartS, h.EndS)
	}
	d, err := hdr.Decode(h.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: data: %w", h.Kind, err)
	}
	if err := checkLayout(h.Kind, d); err != nil {
		return nil, err
	}
	if d.TotalCount() != h.Count {
		return nil, fmt.Errorf("%s: count %d, but its data holds %d values", h.Kind, h.Count, d.TotalCount())
	}
	return d, nil
}

// maxSeconds bounds the times of a histogram: a year of run.
const maxSeconds = 366 * 24 * 3600

// checkLayout refuses a histogram of another layout than the run
// contract's: it could not be merged with the others.
func checkLayout(kind string, d *hdr.Histogram) error {
	if d.Lowest() != rundoc.HistogramLowest || d.Highest() != rundoc.HistogramHighest || d.Digits() != rundoc.HistogramDigits {
		return fmt.Errorf("%s: layout %d..%d µs at %d digits, want %d..%d at %d", kind,
			d.Lowest(), d.Highest(), d.Digits(), rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	}
	return nil
}

// WriteLog writes interval histograms as an HdrHistogram log
// (rundoc.HistogramLogFile) whose times count from start, the measured
// window's opening (the zero time: none written): one line per
// histogram, tagged with its kind.
func WriteLog(w io.Writer, start time.Time, hs []rundoc.Histogram) error {
	// Entries go as their encodings: WriteLog decodes one at a time.
	l := hdr.Log{StartTime: start, Entries: make([]hdr.LogEntry, 0, len(hs))}
	for _, h := range hs {
		l.Entries = append(l.Entries, hdr.LogEntry{Tag: h.Kind, StartS: h.StartS, LengthS: h.EndS - h.StartS, Data: h.Data})
	}
	if err := hdr.WriteLog(w, l); err != nil {
		return fmt.Errorf("runhist: write log: %w", err)
	}
	return nil
}

// ReadLog reads a run's histogram log: its start time and its lines as
// interval histograms, each checked as Check does (its tag must be a
// kind). Errors name the line. The histograms are kept as the log's
// text, so a log takes about its own size in memory whatever its length.
func ReadLog(r io.Reader) (time.Time, []rundoc.Histogram, error) {
	var hs []rundoc.Histogram
	start, err := hdr.ScanLog(r, func(e hdr.LogEntry) error {
		h := rundoc.Histogram{Kind: e.Tag, Scope: rundoc.HistogramInterval, StartS: e.StartS, EndS: e.StartS + e.LengthS,
			Count: e.Hist.TotalCount(), Data: e.Data}
		switch {
		case !rundoc.ValidHistogramKind(h.Kind):
			return fmt.Errorf("tag %q is not a kind of histogram (%v)", h.Kind, rundoc.HistogramKinds)
		case !(h.StartS >= 0) || h.EndS > maxSeconds:
			return fmt.Errorf("times %v + %v s are not an interval of a run", e.StartS, e.LengthS)
		}
		if err := checkLayout(h.Kind, e.Hist); err != nil {
			return err
		}
		hs = append(hs, h)
		return nil
	})
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("histogram log: %w", err)
	}
	return start, hs, nil
}
