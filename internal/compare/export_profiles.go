package compare

import (
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/numfmt"
)

// FunctionChange is one function's change in a comparison's profile
// diff, as the Markdown export lists it. Its figures are per unit of the
// runs' reference (ProfileChanges.PerUnit): the change of the function's
// mean flat and cumulative value per record moved, or of its share of
// the profile's total. It is a plain value, so compare links no profile
// library: the server fills it from the diff.
type FunctionChange struct {
	Name string
	// DeltaFlat and DeltaCum are target − base, per unit.
	DeltaFlat, DeltaCum float64
	// DeltaCumPct is DeltaCum in percent of the base's cumulative value.
	DeltaCumPct float64
	// QValue and FlatQValue are the Benjamini-Hochberg adjusted p-values
	// of the function's cumulative and flat tests, Significant the
	// cumulative verdict: nil when not tested.
	QValue, FlatQValue *float64
	Significant        *bool
}

// ProfileChanges is the top-changes table of a comparison's first
// profile diff: its candidate column against the baseline.
type ProfileChanges struct {
	// Title names the diff: "client cpu: branch against trunk".
	Title string
	// Unit is the profile's sample unit ("nanoseconds", "count").
	Unit string
	// PerRecord says the figures are per record moved (normalize=work);
	// otherwise they are shares of each run's total.
	PerRecord bool
	// Decided says whether both sides had the runs the significance test
	// needs (RunsNeeded a side); when not, the table says so.
	Decided    bool
	RunsNeeded int
	BaseRuns   int
	TargetRuns int
	// URL is the diff's page.
	URL     string
	Changes []FunctionChange
}

// figure formats a per-unit figure of p.
func (p *ProfileChanges) figure(v float64) string {
	if p.PerRecord {
		return numfmt.SignedProfileValue(v, p.Unit) + "/record"
	}
	return numfmt.SignedPercent(v*100) + " of total"
}

// markdownProfiles writes the Profiles section: the diff's top changes
// with their q values and verdicts, or why there are none.
func markdownProfiles(b *strings.Builder, p *ProfileChanges) {
	b.WriteString("\n### Profiles: ")
	b.WriteString(escapeInline(p.Title))
	b.WriteString("\n\n")
	if p.URL != "" {
		b.WriteString("[Differential flame graph](" + escapeURL(p.URL) + ")\n\n")
	}
	if !p.Decided {
		b.WriteString("> **Not decided.** With " + strconv.Itoa(p.BaseRuns) + " against " + strconv.Itoa(p.TargetRuns) +
			" runs the diff cannot separate a change from noise; " + strconv.Itoa(p.RunsNeeded) + " runs per side would.\n\n")
	}
	if len(p.Changes) == 0 {
		b.WriteString("No function changed.\n")
		return
	}
	b.WriteString("| Function | Δ flat | Δ cumulative | Δ cum % | q (cum) | q (flat) | Significant |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|\n")
	for _, c := range p.Changes {
		b.WriteString("| `")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(c.Name, "`", "'"), "|", "\\|"))
		b.WriteString("` | ")
		b.WriteString(p.figure(c.DeltaFlat))
		b.WriteString(" | ")
		b.WriteString(p.figure(c.DeltaCum))
		b.WriteString(" | ")
		b.WriteString(numfmt.SignedPercent(c.DeltaCumPct))
		b.WriteString(" | ")
		b.WriteString(qText(c.QValue))
		b.WriteString(" | ")
		b.WriteString(qText(c.FlatQValue))
		b.WriteString(" | ")
		switch {
		case c.Significant == nil && !p.Decided:
			b.WriteString("—")
		case c.Significant == nil:
			b.WriteString("not tested")
		case *c.Significant:
			b.WriteString("**yes**")
		default:
			b.WriteString("no")
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\nΔ is candidate − baseline, each side the mean of its runs; q is the Benjamini-Hochberg adjusted p-value of Welch's t on the log of each run's share (functions under 1 % of the total are not tested).\n")
}

func qText(q *float64) string {
	if q == nil {
		return "—"
	}
	return numfmt.PValue(*q)
}
