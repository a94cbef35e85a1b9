package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ffTable is one comparison of identical configurations.
type ffTable struct {
	Batch    int
	Workload string
	N        int
	How      string
	Failed   []string
	Flags    tableFlags
	Err      string
	URL      string
}

// ffParams are the params of a comparison's runs; both labels get the
// same.
func (s *suite) ffParams(workload string) map[string]any {
	p := map[string]any{"record-size": s.cfg.recordSize, "profile": "none"}
	if workload == "producer" {
		p["num-records"] = s.cfg.ffRecords
		p["throughput"] = -1
	} else {
		p["messages"] = s.cfg.ffRecords
	}
	return p
}

// falseFlags runs the identical-config comparisons through `kbench serve`.
func (s *suite) falseFlags(ctx context.Context) error {
	c := s.cfg
	if c.ffBatches == 0 {
		return nil
	}
	data, err := os.MkdirTemp("", "kbench-truth-serve-")
	if err != nil {
		return err
	}
	if c.ffKeep {
		s.note("comparisons' data directory kept: %s", data)
	} else {
		defer os.RemoveAll(data)
	}
	sp, err := startServe(ctx, c.kbench, data, filepath.Join(c.outDir, "serve.log"))
	if err != nil {
		return err
	}
	defer sp.stop()
	s.logf("kbench serve at %s (data %s)", sp.base, data)
	for b := 1; b <= c.ffBatches; b++ {
		w := c.ffWorkloads[(b-1)%len(c.ffWorkloads)]
		t := ffTable{Batch: b, Workload: w, N: c.ffN}
		labelA := fmt.Sprintf("truth-%s-b%d-a", s.stamp, b)
		labelB := fmt.Sprintf("truth-%s-b%d-b", s.stamp, b)
		s.logf("comparison %d/%d: %s, %d vs %d identical runs", b, c.ffBatches, w, c.ffN, c.ffN)
		a, bb, how, err := sp.submitBatch(ctx, w, labelA, labelB, s.ffParams(w), c.ffN, c.ffSubmit)
		if err != nil {
			return fmt.Errorf("comparison %d: %w", b, err)
		}
		t.How = how
		statuses, err := sp.waitRuns(ctx, append(append([]uint{}, a...), bb...), 2*time.Hour)
		if err != nil {
			return fmt.Errorf("comparison %d: %w", b, err)
		}
		keep := func(ids []uint) []uint {
			var out []uint
			for _, id := range ids {
				if statuses[id] == "succeeded" {
					out = append(out, id)
				} else {
					t.Failed = append(t.Failed, fmt.Sprintf("#%d %s", id, statuses[id]))
				}
			}
			return out
		}
		a, bb = keep(a), keep(bb)
		if len(a) == 0 || len(bb) == 0 {
			t.Err = "no succeeded run on a side"
			s.tables = append(s.tables, t)
			s.add(skipped("falseflag", fmt.Sprintf("batch %d %s", b, w), "identical-config comparison", t.Err+": "+strings.Join(t.Failed, "; ")))
			continue
		}
		body, err := sp.compare(ctx, a, bb)
		if err != nil {
			return fmt.Errorf("comparison %d: %w", b, err)
		}
		os.WriteFile(filepath.Join(c.outDir, fmt.Sprintf("compare-batch%d.json", b)), body, 0o644)
		t.URL = fmt.Sprintf("/compare?runs=%s&by=label", joinIDs(append(append([]uint{}, a...), bb...)))
		t.Flags, err = countFalseFlags(body)
		if err != nil {
			return fmt.Errorf("comparison %d: %w", b, err)
		}
		s.tables = append(s.tables, t)
		s.add(t.check())
	}
	if ch, ok := overallFalseFlags(s.tables); ok {
		s.add(ch)
	}
	return nil
}

func joinIDs(ids []uint) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", id)
	}
	return b.String()
}

// check is the table's line: its false flags, and how many a table without
// a correction for many rows would have had.
func (t ffTable) check() check {
	f := t.Flags
	var flagged []string
	for _, r := range f.Flagged {
		flagged = append(flagged, r.String())
	}
	k := fmt.Sprintf("%d of %d tested rows flagged", len(f.Flagged), f.Tested)
	if len(flagged) > 0 {
		k += ": " + strings.Join(flagged, "; ")
	}
	indep := fmt.Sprintf("none (identical configurations); every directional row tested at α %.2g without correction: %d of %d p ≤ α",
		f.Alpha, f.RecountBelowAlpha, f.Recount)
	v := verdictOK
	if len(f.Flagged) > 0 {
		v = verdictDiffers
	}
	ch := check{Area: "falseflag", Run: fmt.Sprintf("batch %d %s %dv%d", t.Batch, t.Workload, t.N, t.N), What: "rows flagged better/worse between identical configs",
		Kbench: k, Indep: indep, Diff: fmt.Sprintf("%d false flags", len(f.Flagged)), Tol: "0 per table (the overall rate is judged below)", Verdict: v}
	var notes []string
	notes = append(notes, t.How)
	if f.HeadlineKnown {
		notes = append(notes, fmt.Sprintf("%d headline (tested) rows, %d descriptive", f.Headline, f.Descriptive))
	} else {
		notes = append(notes, "the JSON marks no row headline or descriptive")
	}
	if len(t.Failed) > 0 {
		notes = append(notes, "left out: "+strings.Join(t.Failed, "; "))
	}
	ch.Note = strings.Join(notes, "; ")
	// A single table's flag is information; the verdict that counts is
	// the rate over all tables.
	if v == verdictDiffers {
		ch.Verdict = "flagged"
	}
	return ch
}

// overallFalseFlags judges the false-flag rate over every tested row of
// every table: under no difference each tested row is flagged with
// probability at most α, so k flags among n are suspicious when
// P(X ≥ k | Binomial(n, α)) < 0.01. Rows of a table are correlated
// (records/s and MB/s move together), which makes clusters of flags more
// likely than the binomial says: a failure is a reason to look, with
// this in mind.
func overallFalseFlags(tables []ffTable) (check, bool) {
	n, k, raw, recount := 0, 0, 0, 0
	alpha := 0.0
	tablesFlagged, tablesTested := 0, 0
	for _, t := range tables {
		if t.Err != "" {
			continue
		}
		tablesTested++
		n += t.Flags.Tested
		k += len(t.Flags.Flagged)
		raw += t.Flags.RecountBelowAlpha
		recount += t.Flags.Recount
		alpha = t.Flags.Alpha
		if len(t.Flags.Flagged) > 0 {
			tablesFlagged++
		}
	}
	if n == 0 {
		return check{}, false
	}
	rate := float64(k) / float64(n)
	p := binomUpperTail(n, k, alpha)
	v := verdictOK
	if p < 0.01 {
		v = verdictDiffers
	}
	ch := check{Area: "falseflag", Run: fmt.Sprintf("all %d tables", tablesTested), What: "false-flag rate over all tested rows",
		Kbench: fmt.Sprintf("%d of %d rows flagged (%.1f%%); %d of %d tables with a flag", k, n, 100*rate, tablesFlagged, tablesTested),
		Indep: fmt.Sprintf("≤ α = %.2g per tested row (≤ %.1f expected); every directional row at α, uncorrected: %d of %d (%.1f%%)",
			alpha, alpha*float64(n), raw, recount, 100*float64(raw)/float64(max(recount, 1))),
		Diff: fmt.Sprintf("P(≥ %d flags | %d rows, α) = %.3g", k, n, p),
		Tol:  "binomial tail ≥ 0.01", Verdict: v}
	return ch, true
}
