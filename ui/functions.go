package ui

import (
	"strings"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/numfmt"
)

// TopFunctionsShown is how many of a change's moved functions a page
// lists; the rest are in the JSON and the diff it links.
const TopFunctionsShown = 3

// FunctionsCell is what a change point's or a regression's row shows of
// the functions that moved at it: the top few, each with its change,
// "computing…" while they are being named, or a short note why none can
// be. The zero cell shows nothing (no run has profiles, or the server
// names no functions).
type FunctionsCell struct {
	Computing bool
	Top       []MovedFunctionView
	// More counts the functions named beyond Top.
	More int
	// None says the change was tested and no function moved
	// significantly.
	None bool
	// Note says why none could be named ("2 runs with profiles before
	// the change…"), "" otherwise.
	Note string
	// DiffURL is the run-set differential flame graph of the runs
	// compared.
	DiffURL string
}

// MovedFunctionView is one moved function as a page lists it.
type MovedFunctionView struct {
	Name   string
	Change string // "+30.7% (+612 ns/record)"
	Title  string // the means and q value
}

// Shown reports whether the cell has anything to show.
func (c FunctionsCell) Shown() bool {
	return c.Computing || len(c.Top) > 0 || c.None || c.Note != ""
}

// NewFunctionsCell is the cell of a change's functions fs as named by n;
// nil n (not named on this server, or a tentative change) is the empty
// cell, as is a change no run of which has profiles.
func NewFunctionsCell(fs []wire.MovedFunction, n *wire.FunctionNaming) FunctionsCell {
	if n == nil {
		return FunctionsCell{}
	}
	c := FunctionsCell{DiffURL: n.DiffURL}
	switch n.Status {
	case wire.FunctionsComputing:
		c.Computing = true
	case wire.FunctionsNamed:
		for i, f := range fs {
			if i == TopFunctionsShown {
				c.More = len(fs) - i
				break
			}
			c.Top = append(c.Top, MovedFunctionView{Name: f.Name, Change: numfmt.SignedPercent(f.DeltaPct) + " (" + functionValue(f.Delta, n.Unit, true) + ")",
				Title: functionValue(f.Base, n.Unit, false) + " → " + functionValue(f.Target, n.Unit, false) + ", q = " + numfmt.PValue(f.QValue) +
					", " + numfmt.Int(int64(len(n.RunsBase))) + " runs against " + numfmt.Int(int64(len(n.RunsTarget)))})
		}
		c.None = len(fs) == 0
	case wire.FunctionsNoProfiles:
		return FunctionsCell{}
	default:
		c.Note = n.Reason
	}
	return c
}

// functionValue formats a value per unit of work ("ns/record", from the
// sample type's unit) or a share of the total (in percent), with its
// sign when signed (a change).
func functionValue(v float64, unit string, signed bool) string {
	if u, ok := strings.CutSuffix(unit, "/record"); ok {
		if signed {
			return numfmt.SignedProfileValue(v, u) + "/record"
		}
		return numfmt.ProfileValue(v, u) + "/record"
	}
	if signed {
		return numfmt.SignedPercent(100*v) + " of the total"
	}
	return numfmt.Percent(100*v) + " of the total"
}
