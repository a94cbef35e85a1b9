package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/median"
)

// acksTable is issue 23's A/B of acks=1 against acks=all, 5 runs a side:
// record-send-rate is a headline metric (tested), request-rate is
// descriptive, and the two move in lockstep. The samples are skewed so
// that the Hodges-Lehmann estimate of the tested change is far from the
// ratio of the medians.
func acksTable(t *testing.T) *Table {
	t.Helper()
	base := []float64{80_000, 80_500, 88_865, 89_500, 90_000}
	cand := []float64{77_500, 78_000, 78_351, 86_000, 87_000}
	col := func(name string, first uint, vs []float64) Column {
		c := Column{Name: name}
		for i, v := range vs {
			c.Runs = append(c.Runs, run(first+uint(i), name,
				metric("record-send-rate", v, "records/s", HigherIsBetter),
				metric("request-rate", v/30, "requests/s", HigherIsBetter)))
		}
		return c
	}
	tab, err := Build([]Column{col("acks=1", 10, base), col("acks=all", 20, cand)}, Options{Headline: []string{"record-send-rate"}})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestOneChangeOneNumber (issue 23, item 4): the change column of every
// row, tested or not, is the ratio of the medians shown, in every view
// and export; the Hodges-Lehmann estimate and its interval go in their
// own labelled column, only for tested changes.
func TestOneChangeOneNumber(t *testing.T) {
	tab := acksTable(t)
	rate, req := rowOf(t, tab, "record-send-rate"), rowOf(t, tab, "request-rate")
	if !rate.Headline || req.Headline {
		t.Fatalf("headline: record-send-rate %v, request-rate %v; want tested and descriptive", rate.Headline, req.Headline)
	}
	hl := rate.Cells[1].ChangeEst
	if hl == nil {
		t.Fatal("no Hodges-Lehmann estimate for the tested change")
	}
	// The ratio of the medians, from the samples themselves.
	ratio := func(r Row) float64 {
		return (median.Sorted(slices.Sorted(slices.Values(r.Cells[1].Values)))/median.Sorted(slices.Sorted(slices.Values(r.Cells[0].Values))) - 1) * 100
	}
	want := ratio(rate)
	if math.Abs(*hl-want) < 2 || FormatDelta(*hl) == FormatDelta(want) {
		t.Fatalf("fixture: Hodges-Lehmann %v%% and ratio of medians %v%% must differ for this test", *hl, want)
	}

	for _, r := range []Row{rate, req} {
		c := r.Cells[1]
		w := FormatDelta(ratio(r))
		if got := tab.ChangeText(c); !strings.HasPrefix(got, w) {
			t.Errorf("%s: change %q, want the ratio of the medians %s", r.Metric, got, w)
		}
	}
	if got := tab.HLText(rate.Cells[1]); !strings.HasPrefix(got, FormatDelta(*hl)+" [") {
		t.Errorf("record-send-rate: HL text %q, want the estimate %s with its interval", got, FormatDelta(*hl))
	}
	if got := tab.HLText(req.Cells[1]); got != "" {
		t.Errorf("request-rate (descriptive): HL text %q, want none", got)
	}

	t.Run("markdown", func(t *testing.T) {
		md := Markdown(tab, Meta{})
		var head string
		lines := map[string][]string{}
		for _, l := range strings.Split(md, "\n") {
			cells := strings.Split(l, "|")
			if len(cells) > 2 {
				cells = cells[1 : len(cells)-1]
			}
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			switch {
			case strings.HasPrefix(l, "| Metric |"):
				head = l
				lines["head"] = cells
			case strings.HasPrefix(l, "| **record-send-rate**"):
				lines["rate"] = cells
			case strings.HasPrefix(l, "| request-rate"):
				lines["req"] = cells
			}
		}
		if !strings.Contains(head, "| acks=all: Hodges-Lehmann Δ, 95% CI |") {
			t.Fatalf("header %q lacks the Hodges-Lehmann column", head)
		}
		if len(lines["rate"]) != 4 || len(lines["req"]) != 4 {
			t.Fatalf("rows %q, %q; want metric, two columns and the HL column", lines["rate"], lines["req"])
		}
		if got, w := lines["rate"][2], "("+FormatDelta(want)+" "; !strings.Contains(got, w) {
			t.Errorf("record-send-rate change cell %q, want %q", got, w)
		}
		if got := lines["rate"][3]; !strings.HasPrefix(got, FormatDelta(*hl)+" [") {
			t.Errorf("record-send-rate HL cell %q, want %s [interval]", got, FormatDelta(*hl))
		}
		if got, w := lines["req"][2], "("+FormatDelta(ratio(req))+")"; !strings.Contains(got, w) {
			t.Errorf("request-rate change cell %q, want %q", got, w)
		}
		if got := lines["req"][3]; got != "" {
			t.Errorf("request-rate HL cell %q, want empty", got)
		}
	})

	t.Run("csv", func(t *testing.T) {
		recs, err := csv.NewReader(bytes.NewReader(CSV(tab))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, name := range []string{"median_change_pct", "hl_change_pct", "hl_ci_low", "hl_ci_high"} {
			if _, ok := col[name]; !ok {
				t.Fatalf("CSV header %q lacks %s", recs[0], name)
			}
		}
		for _, rec := range recs[1:] {
			if rec[col["column"]] != "acks=all" {
				continue
			}
			got, _ := strconv.ParseFloat(rec[col["median_change_pct"]], 64)
			switch rec[col["metric"]] {
			case "record-send-rate":
				if math.Abs(got-want) > 1e-9 || rec[col["hl_change_pct"]] != rawFloat(*hl) {
					t.Errorf("record-send-rate: median_change_pct %v, hl_change_pct %s; want %v and %v", got, rec[col["hl_change_pct"]], want, *hl)
				}
			case "request-rate":
				if math.Abs(got-ratio(req)) > 1e-9 || rec[col["hl_change_pct"]] != "" {
					t.Errorf("request-rate: median_change_pct %v, hl_change_pct %q; want %v and none", got, rec[col["hl_change_pct"]], ratio(req))
				}
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		js, err := JSON(tab, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ChangeMethod string `json:"change_method"`
			HLMethod     string `json:"hl_method"`
			Rows         []struct {
				Metric string `json:"metric"`
				Cells  []struct {
					MedianChange *float64 `json:"median_change_pct"`
					Change       string   `json:"change"`
					HLChange     *float64 `json:"hl_change_pct"`
					HL           string   `json:"hl"`
				} `json:"cells"`
			} `json:"rows"`
		}
		if err := json.Unmarshal(js, &doc); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(doc.ChangeMethod, "ratio of medians") || !strings.HasPrefix(doc.HLMethod, "Hodges-Lehmann") {
			t.Errorf("change_method %q, hl_method %q; want them to say which is which", doc.ChangeMethod, doc.HLMethod)
		}
		for _, r := range doc.Rows {
			c := r.Cells[1]
			switch r.Metric {
			case "record-send-rate":
				if c.MedianChange == nil || math.Abs(*c.MedianChange-want) > 1e-9 || !strings.HasPrefix(c.Change, FormatDelta(want)) ||
					c.HLChange == nil || *c.HLChange != *hl || !strings.HasPrefix(c.HL, FormatDelta(*hl)) {
					t.Errorf("record-send-rate cell %+v; want the ratio %v in the change and %v in hl", c, want, *hl)
				}
			case "request-rate":
				if c.MedianChange == nil || !strings.HasPrefix(c.Change, FormatDelta(ratio(req))) || c.HLChange != nil || c.HL != "" {
					t.Errorf("request-rate cell %+v; want the ratio, no hl", c)
				}
			}
		}
	})
}
