package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/kbench/kbench/internal/runimport"
)

// TestClassifyImportErrors: what the CSV and table parsers refuse
// (package runimport) is a 400 on the field, naming the cell, or a 413
// over a limit; wrapped, the same.
func TestClassifyImportErrors(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
		field  string
		msg    string
	}{
		{&runimport.CellError{Field: "file", Line: 3, Column: 7, Msg: "bad"}, http.StatusBadRequest, "file", "file: line 3, column 7: bad"},
		{&runimport.CellError{Field: "table", Line: 2, Msg: "bad line"}, http.StatusBadRequest, "table", "table: line 2: bad line"},
		{fmt.Errorf("import: %w", &runimport.LimitError{Field: "table", Msg: "too many"}), http.StatusRequestEntityTooLarge, "table", "table: too many"},
	} {
		status, field, msg := classify(tt.err)
		if status != tt.status || field != tt.field || msg != tt.msg {
			t.Errorf("classify(%v) = %d %q %q, want %d %q %q", tt.err, status, field, msg, tt.status, tt.field, tt.msg)
		}
	}
}
