package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// oldJSON is a two-label comparison as compare.JSON wrote it before issue
// 11: every row with a direction is tested at α.
const oldJSON = `{
  "title": "", "alpha": 0.05, "confidence": 0.95, "interval_min_n": 6, "test_min_n": 4, "hide_unchanged": false,
  "columns": [{"name": "a", "baseline": true, "runs": [1,3,5,7,9]}, {"name": "b", "baseline": false, "runs": [2,4,6,8,10]}],
  "rows": [
    {"section": "Throughput", "metric": "record-send-rate", "unit": "records/s", "better": "higher", "cells": [
      {"column": "a", "n": 5, "value": 100, "values": [96, 98, 100, 102, 104], "lo": null, "hi": null, "median_change_pct": null, "p_value": null, "test": "", "verdict": "", "text": "", "change": ""},
      {"column": "b", "n": 5, "value": 101, "values": [97, 99, 101, 103, 105], "lo": null, "hi": null, "median_change_pct": 1, "p_value": 0.69, "test": "not significant", "verdict": "same", "text": "", "change": ""}]},
    {"section": "Network and syscalls", "metric": "syscr", "unit": "syscalls", "better": "lower", "cells": [
      {"column": "a", "n": 5, "value": 1000, "values": [996, 998, 1000, 1001, 1003], "p_value": null, "test": "", "verdict": ""},
      {"column": "b", "n": 5, "value": 1008, "values": [1005, 1006, 1008, 1010, 1012], "p_value": 0.016, "test": "significant", "verdict": "worse"}]},
    {"section": "Throughput", "metric": "records-sent", "unit": "records", "better": "", "cells": [
      {"column": "a", "n": 5, "value": 5, "values": [5, 5, 5, 5, 5], "p_value": null, "test": "", "verdict": ""},
      {"column": "b", "n": 5, "value": 5, "values": [5, 5, 5, 5, 5], "p_value": 1, "test": "not significant", "verdict": ""}]},
    {"section": "Other", "metric": "heap-peak", "unit": "MiB", "better": "lower", "cells": [
      {"column": "a", "n": 1, "value": 5, "values": [5], "p_value": null, "test": "", "verdict": ""},
      {"column": "b", "n": 1, "value": 6, "values": [6], "p_value": null, "test": "single runs", "verdict": "worse"}]}
  ],
  "table_notes": [], "legend": "", "some_field_added_later": {"x": 1}
}`

// newJSON is the same with issue 11's marking: headline rows tested with a
// Benjamini-Hochberg adjustment, the others descriptive.
const newJSON = `{
  "alpha": 0.05, "test_min_n": 4, "fdr_q": 0.05, "headline_metrics": ["record-send-rate"],
  "columns": [{"name": "a", "baseline": true, "runs": [1,3,5,7,9]}, {"name": "b", "baseline": false, "runs": [2,4,6,8,10], "more_repetitions": 0}],
  "rows": [
    {"metric": "record-send-rate", "better": "higher", "headline": true, "cells": [
      {"n": 5, "values": [96, 98, 100, 102, 104], "test": "", "verdict": ""},
      {"n": 5, "values": [110, 111, 112, 113, 114], "p_value": 0.0079, "p_adjusted": 0.0079, "test": "significant", "verdict": "better", "state": "significant"}]},
    {"metric": "syscr", "better": "lower", "headline": false, "cells": [
      {"n": 5, "values": [996, 998, 1000, 1001, 1003], "test": "", "verdict": ""},
      {"n": 5, "values": [1005, 1006, 1008, 1010, 1012], "p_value": null, "test": "descriptive", "verdict": ""}]}
  ]
}`

func TestCountFalseFlagsOldFormat(t *testing.T) {
	f, err := countFalseFlags([]byte(oldJSON))
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows != 4 || f.Tested != 2 || len(f.Flagged) != 1 || f.Flagged[0].Metric != "syscr" || f.Flagged[0].Verdict != "worse" {
		t.Errorf("rows %d, tested %d, flagged %+v; want 4, 2 and syscr worse (single runs and rows without direction are not tested)", f.Rows, f.Tested, f.Flagged)
	}
	if f.HeadlineKnown {
		t.Error("old format read as marking headline rows")
	}
	if f.KbenchPBelowAlpha != 1 || f.WithP != 3 {
		t.Errorf("kbench p ≤ α: %d of %d, want 1 of 3", f.KbenchPBelowAlpha, f.WithP)
	}
	// The recount tests the two directional rows with 5 samples a side:
	// syscr's samples do not overlap (p = 2/252).
	if f.Recount != 2 || f.RecountBelowAlpha != 1 {
		t.Errorf("recount %d of %d, want 1 of 2", f.RecountBelowAlpha, f.Recount)
	}
	if got := f.Flagged[0].String(); got != "syscr worse p=0.016" {
		t.Errorf("flagged row text %q", got)
	}
}

func TestCountFalseFlagsNewFormat(t *testing.T) {
	f, err := countFalseFlags([]byte(newJSON))
	if err != nil {
		t.Fatal(err)
	}
	if !f.HeadlineKnown || f.Headline != 1 || f.Descriptive != 1 {
		t.Errorf("headline %d, descriptive %d (known %v); want 1 and 1", f.Headline, f.Descriptive, f.HeadlineKnown)
	}
	if f.Tested != 1 || len(f.Flagged) != 1 || f.Flagged[0].String() != "record-send-rate better p=0.0079 (adjusted 0.0079)" {
		t.Errorf("tested %d, flagged %v", f.Tested, f.Flagged)
	}
	if f.Recount != 2 || f.RecountBelowAlpha != 2 {
		t.Errorf("recount %d of %d, want 2 of 2: descriptive rows are recounted too", f.RecountBelowAlpha, f.Recount)
	}
}

func TestCountFalseFlagsErrors(t *testing.T) {
	for _, bad := range []string{`not json`, `{"alpha": 0.05, "columns": [{"name": "a"}]}`, `{"columns": [{"name": "a"}, {"name": "b"}], "rows": []}`} {
		if _, err := countFalseFlags([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestCountFalseFlagsCompareJSON reads what the compare package really
// writes: 5 vs 5 runs with identical values except one metric that moves
// far, which the table must flag and countFalseFlags must find.
func TestCountFalseFlagsCompareJSON(t *testing.T) {
	var runs []rundoc.Run
	created := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	for i := 0; i < 10; i++ {
		label := "a"
		rate := 100000.0 + float64(i/2)
		if i%2 == 1 {
			label = "b"
			rate = 200000 + float64(i/2)
		}
		runs = append(runs, rundoc.Run{ID: uint(i + 1), Label: label, Workload: "producer", Status: rundoc.StatusSucceeded,
			Source: rundoc.SourceLaunched, Complete: true, CreatedAt: created.Add(time.Duration(i) * time.Minute),
			Metrics: []rundoc.Metric{
				{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: compare.HigherIsBetter},
				{Name: "gc-count", Value: 12, Unit: "cycles", Better: compare.LowerIsBetter},
				{Name: "records-sent", Value: 5000, Unit: "records"},
			}})
	}
	// Columns by label keep first-seen order: a (the baseline), then b.
	var ordered []rundoc.Run
	for _, l := range []string{"a", "b"} {
		for _, r := range runs {
			if r.Label == l {
				ordered = append(ordered, r)
			}
		}
	}
	tbl, err := compare.Build(compare.Columns(ordered, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := compare.JSON(tbl, compare.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := countFalseFlags(body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Columns, ",") != "a,b" || f.Alpha != compare.DefaultAlpha {
		t.Errorf("columns %v, alpha %v", f.Columns, f.Alpha)
	}
	if len(f.Flagged) != 1 || f.Flagged[0].Metric != "record-send-rate" || f.Flagged[0].Verdict != "better" {
		t.Errorf("flagged %v, want record-send-rate better", f.Flagged)
	}
	if f.Tested < 1 || f.Tested > 2 {
		t.Errorf("tested %d, want 1 or 2 (gc-count is tested unless the table calls it descriptive)", f.Tested)
	}
	if f.Recount != 2 || f.RecountBelowAlpha != 1 {
		t.Errorf("recount %d of %d, want 1 of 2", f.RecountBelowAlpha, f.Recount)
	}
}
