// Package stats holds the statistical tests kbench shares between its
// comparisons: the Benjamini-Hochberg adjustment of a family of p-values
// (the metric table of internal/compare and the per-function significance
// of profiles both adjust with it, so there is one implementation), and
// Welch's two-sample t test with the Student t distribution behind it.
//
// The package is standard library only and holds no kbench types: inputs
// are plain float64 slices.
package stats
