package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// mdCell makes text safe in a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// counts tallies the verdicts.
func (s *suite) counts() (ok, differs, skip, info int) {
	for _, c := range s.checks {
		switch c.Verdict {
		case verdictOK:
			ok++
		case verdictDiffers:
			differs++
		case verdictSkipped:
			skip++
		default:
			info++
		}
	}
	return
}

// markdown is the summary, ready to paste under bench/README.md's "Truth
// suite".
func (s *suite) markdown() string {
	var b strings.Builder
	ok, differs, skip, info := s.counts()
	fmt.Fprintf(&b, "### Truth suite run %s\n\n", s.started.Format("2006-01-02 15:04 UTC"))
	if s.cfg.command != "" {
		fmt.Fprintf(&b, "Command: `%s`\n\n", s.cfg.command)
	}
	fmt.Fprintf(&b, "- kbench: %s\n", firstNonEmpty(s.cfg.kbenchDesc, "the given binary"))
	fmt.Fprintf(&b, "- machine: %d cores (%s), Linux %s, %s; load average (1, 5, 15 min) %s at the start, %s at the end\n",
		runtime.NumCPU(), cpuModel(), kernel(), runtime.Version(), s.loadStart, s.loadEnd)
	fmt.Fprintf(&b, "- broker: one `kbench broker` process (kfake, in RAM) for every checked run; comparisons: `kbench serve` on a throwaway data directory, each run with its own embedded broker\n")
	fmt.Fprintf(&b, "- duration: %s\n", s.finished.Sub(s.started).Round(1e9))
	fmt.Fprintf(&b, "- verdicts: %d ok, %d DIFFERS, %d skipped, %d informational\n\n", ok, differs, skip, info)

	b.WriteString("| area | run | what | kbench | independent | difference | tolerance | verdict |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range s.checks {
		if c.Verdict == verdictSkipped {
			fmt.Fprintf(&b, "| %s | %s | %s | — | — | — | — | skipped: %s |\n", c.Area, mdCell(c.Run), mdCell(c.What), mdCell(c.Note))
			continue
		}
		verdict := c.Verdict
		if verdict == verdictDiffers {
			verdict = "**DIFFERS**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Area, mdCell(c.Run), mdCell(c.What), mdCell(c.Kbench),
			mdCell(c.Indep), mdCell(c.Diff), mdCell(c.Tol), verdict)
	}
	if len(s.tables) > 0 {
		b.WriteString("\nIdentical-config comparisons (`GET /api/compare?…&by=label`, the second label against the first):\n\n")
		b.WriteString("| batch | workload | runs | queued | rows | headline / descriptive | tested by kbench | flagged by kbench | every directional row, Mann-Whitney p ≤ α uncorrected |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, t := range s.tables {
			if t.Err != "" {
				fmt.Fprintf(&b, "| %d | %s | %d vs %d | %s | — | — | — | — | %s |\n", t.Batch, t.Workload, t.N, t.N, mdCell(t.How), mdCell(t.Err))
				continue
			}
			f := t.Flags
			var flagged []string
			for _, r := range f.Flagged {
				flagged = append(flagged, r.String())
			}
			fl := fmt.Sprintf("%d", len(f.Flagged))
			if len(flagged) > 0 {
				fl += ": " + strings.Join(flagged, "; ")
			}
			hd := "not marked"
			if f.HeadlineKnown {
				hd = fmt.Sprintf("%d / %d", f.Headline, f.Descriptive)
			}
			fmt.Fprintf(&b, "| %d | %s | %d vs %d | %s | %d | %s | %d | %s | %d of %d |\n", t.Batch, t.Workload, t.N, t.N, mdCell(t.How),
				f.Rows, hd, f.Tested, mdCell(fl), f.RecountBelowAlpha, f.Recount)
		}
	}
	// The details: every check's note, the suite's notes and the runs.
	b.WriteString("\n<details><summary>Notes and runs</summary>\n\n")
	for _, c := range s.checks {
		if c.Note != "" && c.Verdict != verdictSkipped {
			fmt.Fprintf(&b, "- %s, %s, %s: %s\n", c.Area, mdCell(c.Run), mdCell(c.What), mdCell(c.Note))
		}
	}
	for _, n := range s.notes {
		fmt.Fprintf(&b, "- %s\n", mdCell(n))
	}
	if len(s.runs) > 0 {
		b.WriteString("\nRuns (each with `--progress json --out DIR`):\n\n")
		for _, r := range s.runs {
			line := fmt.Sprintf("- %s: `kbench run %s`, window %.3f s, %d CPU samples", r.Name, redactAddr(r.Args), r.Window, r.CPUSamples)
			if r.Err != "" {
				line += "; **failed**: " + mdCell(r.Err)
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// redactAddr replaces the broker's loopback port, which changes every
// run, by ADDR.
func redactAddr(args string) string {
	f := strings.Fields(args)
	for i := range f {
		if i > 0 && f[i-1] == "--bootstrap-server" {
			f[i] = "ADDR"
		}
		if strings.HasSuffix(f[i], "Z") && strings.Contains(f[i], "truth-") {
			// Topic and group names carry the run's time stamp.
			if j := strings.LastIndexByte(f[i], '-'); j > 0 {
				f[i] = f[i][:j]
			}
		}
	}
	return strings.Join(f, " ")
}

// consoleSummary is the verdict tally and the disagreements.
func (s *suite) consoleSummary() string {
	var b strings.Builder
	ok, differs, skip, info := s.counts()
	fmt.Fprintf(&b, "truth: %d ok, %d DIFFERS, %d skipped, %d informational\n", ok, differs, skip, info)
	for _, c := range s.checks {
		if c.Verdict == verdictDiffers || c.Verdict == verdictSkipped {
			fmt.Fprintln(&b, "  "+c.line())
		}
	}
	return b.String()
}
