package cli

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/check"
)

// TestCheckMinSegment: by default (--min-segment 4) a single candidate
// at 105k after 20 runs at 115k is a tentative change, not a regression:
// kbench check cannot decide (exit 3) and says why; the detection's
// min_segment reaches the history API; --min-segment 1 decides as Otava
// does; --min-segment 0 is bad usage.
func TestCheckMinSegment(t *testing.T) {
	f, url := kafka14020(t)
	cand := f.add(105000, nil)
	id := strconv.Itoa(int(cand.ID))
	code, js, _ := runCheck(t, "--server", url, "--run", id, "--json")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (undecided)", code)
	}
	var rep check.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Series[0].Results[0]
	if r.Metric != "record-send-rate" || r.Verdict != "undecided" || !strings.Contains(r.Reason, "tentative") || !strings.Contains(r.Reason, "min_segment 4") ||
		rep.Params.MinSegment != 4 {
		t.Errorf("result %+v, params %+v: want undecided, a tentative change with min_segment 4", r, rep.Params)
	}
	if q := f.historyQueries[len(f.historyQueries)-1]; q.Get("min_segment") != "4" {
		t.Errorf("history query %v, want min_segment=4", q)
	}
	code, out, _ := runCheck(t, "--server", url, "--run", id, "--min-segment", "1")
	if code != 1 || !strings.Contains(out, "min segment 1") {
		t.Errorf("--min-segment 1: exit %d, want 1 (Otava's decision)\n%s", code, out)
	}
	var o, e bytes.Buffer
	if code := Main([]string{"check", "--run", "1", "--min-segment", "0"}, &o, &e); code != 2 || !strings.Contains(e.String(), "--min-segment") {
		t.Errorf("--min-segment 0: exit %d, want 2 naming --min-segment\n%s", code, e.String())
	}
}
