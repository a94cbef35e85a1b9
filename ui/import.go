package ui

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

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
	// CSV is the back-fill form's state (kept after an error).
	CSV CSVImportForm
	// OMB is the OpenMessaging Benchmark form's state (kept after an
	// error).
	OMB OMBImportForm
}

// OMBImportForm is the import page's form for OpenMessaging Benchmark
// result files: the "omb" field of POST /api/import and its label,
// time, meta and series, posted to POST /import. Its refusal is shown
// inside its own section, so the other forms' inputs stay unmarked.
type OMBImportForm struct {
	Label, Time, Meta, Series string
	// Text is the pasted result, shown again after an error.
	Text string
	// Error is why the results were refused; ErrorField the field it is
	// about ("omb" for a result itself, "omb[1].backlog" for one of its
	// keys).
	Error, ErrorField string
}

// Invalid reports whether the input of field is the one to mark invalid:
// a refused result marks the text box when it was pasted, the file input
// otherwise.
func (f OMBImportForm) Invalid(field string) bool {
	result := f.ErrorField == "omb" || strings.HasPrefix(f.ErrorField, "omb[")
	switch field {
	case "omb-text":
		return result && f.Text != ""
	case "omb":
		return result && f.Text == ""
	}
	return f.ErrorField != "" && f.ErrorField == field
}

// CSVImportForm is the import page's second form: a CSV of past results
// (POST /import/csv, the fields of POST /api/import/csv) back-filling a
// series.
type CSVImportForm struct {
	Series, Workload, Label string
	// Text is the pasted CSV, shown again after an error.
	Text string
	// Error is why the CSV was refused; ErrorField the field it is about
	// ("file" for the CSV itself), and Line and Column the cell (1-based,
	// 0 when the error is about no one line or column).
	Error        string
	ErrorField   string
	Line, Column int
}

// Workloads are the workloads the form offers, whose metrics name the
// CSV's columns.
func (f CSVImportForm) Workloads() []string { return runnableWorkloads() }

// runnableWorkloads are the names of the workloads kbench runs, whose
// metrics name an imported CSV's columns or table's lines.
func runnableWorkloads() []string { return names(rundoc.Workloads()) }

// Invalid reports whether the input of field is the one to mark invalid:
// a refused CSV marks the text box when it was pasted, the file input
// otherwise.
func (f CSVImportForm) Invalid(field string) bool {
	switch field {
	case "csv":
		return f.ErrorField == "file" && f.Text != ""
	case "file":
		return f.ErrorField == "file" && f.Text == ""
	}
	return f.ErrorField != "" && f.ErrorField == field
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
func (ImportView) TableWorkloads() []string { return runnableWorkloads() }

// BadLine is the pasted CSV's line the error is about, as "LINE: text",
// or "" (no line, or the CSV came as a file).
func (f CSVImportForm) BadLine() string {
	if f.Line < 1 || f.Text == "" {
		return ""
	}
	lines := strings.Split(strings.ReplaceAll(f.Text, "\r\n", "\n"), "\n")
	if f.Line > len(lines) {
		return ""
	}
	return strconv.Itoa(f.Line) + ": " + lines[f.Line-1]
}
