package ui

// ImportView is the page that creates an imported run from the text output
// of Kafka's perf tools and/or uploaded profiles (pprof, gzipped or not, or
// folded stacks).
type ImportView struct {
	Page
	// Label and Output (pasted text) are kept when the form is shown again
	// after an error.
	Label  string
	Output string
	// Error is the reason the last upload was refused.
	Error string
}
