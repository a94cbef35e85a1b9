package compare

import (
	"encoding/csv"
	"strconv"
	"strings"

	"github.com/kbench/kbench/client/wire"
)

// A report that shows a latency-target search carries it in every
// export: the Markdown has a section with the question, the answer and
// one row per run; the CSV one record per figure of each run (section
// "slo"); the JSON the search as GET /api/slos/{id} answers it ("slo").

// sloQuestion says what s searched for, in the exports' words.
func sloQuestion(s *wire.SLO) string {
	q := "highest rate (records/s) at which " + s.Config.Latency + " p" + trimFloat(s.Percentile) + " stays under " + trimFloat(s.LatencyMs) +
		" ms, to " + trimFloat(s.PrecisionPct) + " %, " + strconv.Itoa(s.Repetitions) + " run(s) per rate, each holding at least " +
		strconv.FormatInt(s.MinSamples, 10) + " latencies and reaching 98 % of its rate (" + s.Config.RateMetric + ")"
	if s.MaxRate > 0 {
		q += "; rates up to " + FormatNumber(s.MaxRate)
	} else {
		q += "; rates up to the maximum an unthrottled run reached"
	}
	return q
}

// sloOutcome is the answer of s in words.
func sloOutcome(s *wire.SLO) string {
	switch s.Outcome {
	case "found":
		return "between " + FormatNumber(s.Lo) + " (met the target) and " + FormatNumber(s.Hi) + " records/s (missed it)"
	case "at-maximum":
		return "at or above " + FormatNumber(s.Hi) + " records/s, the highest rate the search may try, which met the target"
	case "none":
		return "no rate the search may try met the target"
	case "gave-up":
		return "no answer within the precision: the search gave up"
	}
	return s.Phase
}

// markdownSLO writes s as a section: heading linking its page, the
// question, the answer, and one row per run of its probes.
func markdownSLO(b *strings.Builder, s *wire.SLO) {
	b.WriteString("### Latency target: search ")
	if s.URL != "" {
		b.WriteString("[" + escapeInline(s.SLO) + "](" + escapeURL(s.URL) + ")")
	} else {
		b.WriteString(escapeInline(s.SLO))
	}
	b.WriteString("\n\n" + escapeInline(s.Config.Label) + " (" + escapeInline(string(s.Config.Workload)) + "): " + escapeInline(sloQuestion(s)) + ".\n\n")
	b.WriteString("**Answer:** " + escapeInline(sloOutcome(s)) + ".\n\n")
	if s.Note != "" {
		b.WriteString(escapeInline(s.Note) + "\n\n")
	}
	b.WriteString("| Probe | Rate (records/s) | Achieved (records/s) | p" + trimFloat(s.Percentile) + " (ms) | Latencies | Verdict | Run |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | :--- | :--- |\n")
	for _, p := range s.Probes {
		rate := FormatNumber(p.Rate)
		if p.Max {
			rate = "max"
		}
		for _, r := range p.Runs {
			verdict := "fail"
			if r.Pass {
				verdict = "pass"
			}
			if !r.Status.Final() {
				verdict = string(r.Status)
			}
			lat, n := "—", "—"
			if r.Samples > 0 {
				lat, n = FormatNumber(r.LatencyMs), FormatNumber(float64(r.Samples))
			}
			run := "#" + strconv.FormatUint(uint64(r.ID), 10)
			if r.URL != "" {
				run = "[" + run + "](" + escapeURL(r.URL) + ")"
			}
			b.WriteString("| " + strconv.Itoa(p.Probe) + " | " + rate + " | " + FormatNumber(r.Achieved) + " | " + lat + " | " +
				n + " | " + verdict + ": " + escapeInline(r.Reason) + " | " + run + " |\n")
		}
	}
	b.WriteString("\n")
}

// csvSLO appends s's records: section "slo"; first the answer (metrics
// "slo-lo" and "slo-hi", records/s, column the outcome), then for each
// run of each probe (column "probe N · RATE · run #ID") its
// "probe-rate" and "achieved-rate" (records/s), "latency-pNN" (ms),
// "latencies" (count) and "pass" (1 or 0); the unthrottled probe, which
// measures no latency, only its achieved rate and pass.
func csvSLO(w *csv.Writer, s *wire.SLO) {
	rec := make([]string, len(csvHeader))
	write := func(metric, unit, col string, value float64) {
		clear(rec)
		rec[0], rec[1], rec[2], rec[4], rec[5], rec[6] = "slo", csvText(metric), unit, csvText(col), "1", rawFloat(value)
		_ = w.Write(rec)
	}
	write("slo-lo", "records/s", s.Outcome, s.Lo)
	write("slo-hi", "records/s", s.Outcome, s.Hi)
	for _, p := range s.Probes {
		rate := rawFloat(p.Rate)
		if p.Max {
			rate = "max"
		}
		for _, r := range p.Runs {
			col := "probe " + strconv.Itoa(p.Probe) + " · " + rate + " · run #" + strconv.FormatUint(uint64(r.ID), 10)
			pass := 0.0
			if r.Pass {
				pass = 1
			}
			if !p.Max {
				write("probe-rate", "records/s", col, p.Rate)
			}
			write("achieved-rate", "records/s", col, r.Achieved)
			if !p.Max {
				write("latency-p"+trimFloat(s.Percentile), "ms", col, r.LatencyMs)
				write("latencies", "count", col, float64(r.Samples))
			}
			write("pass", "flag", col, pass)
		}
	}
}
