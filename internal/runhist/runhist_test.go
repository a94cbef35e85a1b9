package runhist

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

func hist(kind, scope string, start, end float64, values ...int64) rundoc.Histogram {
	h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	for _, v := range values {
		_ = h.RecordValue(v)
	}
	return rundoc.Histogram{Kind: kind, Scope: scope, StartS: start, EndS: end, Count: h.TotalCount(), Data: h.Encode()}
}

// TestLogRoundTrip: interval histograms written as a log read back to
// the same kinds, times and counts, the log's start kept to the ms.
func TestLogRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 5, 1, 2, 3, 456_000_000, time.UTC)
	hs := []rundoc.Histogram{
		hist(rundoc.HistRecordLatency, rundoc.HistogramInterval, 0, 1, 5, 50, 500),
		hist(rundoc.HistPublishDelay, rundoc.HistogramInterval, 0, 1),
		hist(rundoc.HistRecordLatency, rundoc.HistogramInterval, 1, 1.5, 3_600_000_000),
	}
	var buf bytes.Buffer
	if err := WriteLog(&buf, start, hs); err != nil {
		t.Fatal(err)
	}
	gotStart, got, err := ReadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !gotStart.Equal(start) || len(got) != len(hs) {
		t.Fatalf("read %d histograms from %v, want %d from %v", len(got), gotStart, len(hs), start)
	}
	for i := range hs {
		d, err := Check(got[i])
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		w, _ := Check(hs[i])
		if got[i].Kind != hs[i].Kind || got[i].StartS != hs[i].StartS || got[i].EndS != hs[i].EndS || d.TotalCount() != w.TotalCount() || d.Max() != w.Max() {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], hs[i])
		}
	}
}

// TestRefuses: histograms and logs kbench cannot keep are refused with
// what is wrong.
func TestRefuses(t *testing.T) {
	other := hdr.New(1, 1000, 2)
	_ = other.RecordValue(7)
	good := hist(rundoc.HistRecordLatency, rundoc.HistogramWindow, 0, 2, 10)
	for _, tc := range []struct {
		name string
		h    rundoc.Histogram
		want string
	}{
		{"kind", rundoc.Histogram{Kind: "latency", Scope: "window", Data: good.Data, Count: 1}, "kind"},
		{"scope", rundoc.Histogram{Kind: good.Kind, Scope: "all", Data: good.Data, Count: 1}, "scope"},
		{"times", rundoc.Histogram{Kind: good.Kind, Scope: "window", StartS: 3, EndS: 2, Data: good.Data, Count: 1}, "times"},
		{"count", rundoc.Histogram{Kind: good.Kind, Scope: "window", EndS: 2, Data: good.Data, Count: 2}, "count 2"},
		{"data", rundoc.Histogram{Kind: good.Kind, Scope: "window", EndS: 2, Data: "HISTxx", Count: 1}, "data"},
		{"layout", rundoc.Histogram{Kind: good.Kind, Scope: "window", EndS: 2, Data: other.Encode(), Count: 1}, "layout"},
	} {
		if _, err := Check(tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.want)
		}
	}
	for name, log := range map[string]string{
		"unknown tag": "Tag=latency,0.000,1.000,0.000," + good.Data + "\n",
		"no tag":      "0.000,1.000,0.000," + good.Data + "\n",
		"layout":      "Tag=record-latency,0.000,1.000,0.000," + other.Encode() + "\n",
		"garbage":     "Tag=record-latency,zero,1.000,0.000," + good.Data + "\n",
	} {
		if _, _, err := ReadLog(strings.NewReader(log)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: %v, want an error naming line 1", name, err)
		}
	}
}

// FuzzReadLog: whatever the input, ReadLog answers histograms that
// Check accepts, or an error; never a panic.
func FuzzReadLog(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteLog(&buf, time.Unix(1_700_000_000, 0), []rundoc.Histogram{hist(rundoc.HistE2ELatency, rundoc.HistogramInterval, 0, 1, 1, 2, 3)})
	f.Add(buf.Bytes())
	f.Add([]byte("Tag=e2e-latency,0,1,0,HISTFAAAACF4nJNpmSzMwMDAxQABzFCaEUzOmNZg/wEidQAF/QM+\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, hs, err := ReadLog(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, h := range hs {
			if _, err := Check(h); err != nil {
				t.Fatalf("ReadLog answered a histogram Check refuses: %v", err)
			}
		}
	})
}
