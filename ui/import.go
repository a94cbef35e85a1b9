package ui

// ImportView is the page that creates an imported run from uploaded
// profiles (pprof, gzipped or not, or folded stacks).
type ImportView struct {
	Page
	// Label is kept when the form is shown again after an error.
	Label string
	// Error is the reason the last upload was refused.
	Error string
}
