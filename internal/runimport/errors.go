package runimport

import (
	"fmt"
	"strconv"

	"github.com/kbench/kbench/internal/rundoc"
)

// CellError is a bad cell or line of an uploaded file (a CSV back-fill's
// "file", a table's "table"): it names the line and column (1-based;
// column 0 when the whole line is wrong). It is bad input on Field
// (Unwrap: a *rundoc.FieldError), whose answer gives Line and Column.
type CellError struct {
	Field        string
	Line, Column int
	Msg          string
}

func (e *CellError) Error() string { return e.Field + ": " + e.where() }

// where is the message without the field: "line 3, column 7: msg".
func (e *CellError) where() string {
	if e.Column > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Unwrap makes it bad input on its field.
func (e *CellError) Unwrap() error { return &rundoc.FieldError{Field: e.Field, Msg: e.where()} }

// LimitError is an upload over one of the limits (bytes, rows, runs) on
// Field: too large, rather than wrong (a 413 from the server).
type LimitError struct {
	Field, Msg string
}

func (e *LimitError) Error() string { return e.Field + ": " + e.Msg }
