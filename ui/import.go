package ui

import "slices"

// ImportView is the page that creates an imported run from the text output
// of Kafka's perf tools and/or uploaded profiles (pprof, gzipped or not, or
// folded stacks).
type ImportView struct {
	Page
	// Label and Output (pasted text) are kept when the form is shown again
	// after an error.
	Label  string
	Output string
	// Command is the tool's command line, kept too.
	Command string
	// Time, Meta (one key=value a line) and Series are kept too: when the
	// run happened, its tags and the series it joins.
	Time, Meta, Series string
	// Table (pasted) and TableWorkload are the table form's, kept when
	// it is shown again after an error.
	Table, TableWorkload string
	// Error is the reason the last upload was refused.
	Error string
	// ErrorField is the form field Error is about ("label", "output",
	// "role", "profile"); its input is marked invalid. Empty, or a field
	// without an input, marks none.
	ErrorField string
	// Errors are every message of the refusal, ErrorFields the fields
	// they are about: several when the upload broke several rules.
	Errors      []string
	ErrorFields []string
}

// Invalid reports whether the input of field is the one to mark invalid.
// The output has two inputs, a file and a text box: the text box is
// marked when the refused output was pasted (it is shown again), the file
// input otherwise.
func (v ImportView) Invalid(field string) bool {
	bad := func(f string) bool { return f != "" && (v.ErrorField == f || slices.Contains(v.ErrorFields, f)) }
	switch field {
	case "output-text":
		return bad("output") && v.Output != ""
	case "output":
		return bad("output") && v.Output == ""
	}
	return bad(field)
}

// TableWorkloads are the workloads a table's runs may be, as the table
// form offers them.
func (ImportView) TableWorkloads() []string {
	return []string{"producer", "consumer", "e2e", "writepath"}
}
