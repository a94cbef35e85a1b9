// Importing a wide table of results (rows = metrics, columns = runs):
// POST /api/import and the import page with the field "table".

package server

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runimport"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// tableTool is the Tool of a table import's spec and documents.
const tableTool = "table"

// hasTable reports whether an import is a table: a "table" file or
// pasted text.
func hasTable(form *multipart.Form) bool {
	if form == nil {
		return false
	}
	if len(form.File["table"]) > 0 {
		return true
	}
	for _, v := range form.Value["table"] {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// readTable opens the "table" field, one file or pasted text (not both),
// and names it; runimport.ParseResultsTable reads it, within
// runimport.MaxTableBytes.
func readTable(form *multipart.Form) (name string, r io.ReadCloser, err error) {
	fhs := form.File["table"]
	var pasted []string
	for _, v := range form.Value["table"] {
		if strings.TrimSpace(v) != "" {
			pasted = append(pasted, v)
		}
	}
	switch {
	case len(fhs)+len(pasted) > 1:
		return "", nil, badInput("table", "give one table (a file or pasted text), not %d", len(fhs)+len(pasted))
	case len(pasted) == 1:
		return "pasted table", io.NopCloser(strings.NewReader(pasted[0])), nil
	}
	fh := fhs[0]
	if fh.Size > runimport.MaxTableBytes {
		return "", nil, &limitError{field: "table", msg: fmt.Sprintf("%s is %d bytes, at most %d", fh.Filename, fh.Size, runimport.MaxTableBytes)}
	}
	f, err := fh.Open()
	if err != nil {
		return "", nil, fmt.Errorf("server: open table: %w", err)
	}
	return fh.Filename, f, nil
}

// importTableRuns stores a table as one imported run of "workload" per
// column, labelled by the column's header, with the column's figures
// under kbench's metric names, the Java client's, or the table's own
// (see runimport.ParseResultsTable). "time" and "meta" apply to every run. Each run
// joins the series of its workload and label. All runs are stored in one
// CreateRuns, or none.
func (s *Server) importTableRuns(c *gin.Context) ([]*store.Run, error) {
	form := c.Request.MultipartForm
	var errs rundoc.FieldErrors
	workload := rundoc.Workload(strings.TrimSpace(c.PostForm("workload")))
	if !workload.Runnable() {
		errs.Add("workload", "must be producer, consumer, writepath or e2e (the workload whose metrics the table's rows name), got %q", workload)
	}
	if strings.TrimSpace(c.PostForm("label")) != "" {
		errs.Add("label", "not with a table: each column's header labels its run")
	}
	if strings.TrimSpace(c.PostForm("series")) != "" {
		errs.Add("series", "not with a table: its columns are different runs, each joins the series of its label")
	}
	for _, f := range []string{"output", "profile", "result", "file"} {
		if len(form.File[f]) > 0 || strings.TrimSpace(strings.Join(form.Value[f], "")) != "" {
			errs.Add(f, "not with a table: import it on its own")
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	tags, err := importTags(form)
	if err != nil {
		return nil, err
	}
	name, table, err := readTable(form)
	if err != nil {
		return nil, err
	}
	defer table.Close()
	t, err := runimport.ParseResultsTable(table, s.importMetrics(workload))
	if err != nil {
		return nil, err
	}
	runs := make([]importedRun, len(t.Runs))
	for i, tr := range t.Runs {
		notes := []string{fmt.Sprintf("imported from column %d (%q) of a %s table of %d metrics × %d runs (%s)",
			i+2, tr.Label, t.Format, t.Rows, len(t.Runs), name)}
		notes = append(append(notes, t.Notes...), tr.Notes...)
		runs[i] = importedRun{label: tr.Label, workload: workload, metrics: tr.Metrics, meta: tags.meta, runAt: tags.at, notes: notes}
	}
	return s.storeImportedRuns(c.Request.Context(), tableTool, name, "imported: a table does not say", runs)
}

// importTableAPI answers POST /api/import with a table: 201 with the
// runs, in column order, and the comparison of them; a bad cell is a 400
// naming its line and column.
func (s *Server) importTableAPI(c *gin.Context) {
	runs, err := s.importTableRuns(c)
	if err != nil {
		s.fail(c, err) // a bad cell's 400 gives its line and column
		return
	}
	out := make([]apiRun, len(runs))
	for i, r := range runs {
		d := r.Doc()
		out[i] = toAPIRun(&d, false)
	}
	c.JSON(http.StatusCreated, client.Created{Runs: out, CompareURL: tableCompareURL(runs)})
}

// tableCompareURL compares a table's runs, one column each.
func tableCompareURL(runs []*store.Run) string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = strconv.FormatUint(uint64(r.ID), 10)
	}
	return "/compare?runs=" + strings.Join(ids, ",")
}

// importTableForm handles the import page's table form: the runs'
// comparison on success, the page again with the message and the pasted
// table otherwise.
func (s *Server) importTableForm(c *gin.Context) {
	runs, err := s.importTableRuns(c)
	if err != nil {
		status, field, msg := classify(err)
		if status != http.StatusBadRequest {
			s.fail(c, err)
			return
		}
		v := ui.ImportView{Error: msg, ErrorField: field, Table: pastedText(c.Request.MultipartForm, "table"), TableWorkload: c.PostForm("workload"),
			Time: c.PostForm("time"), Meta: strings.Join(c.PostFormArray("meta"), "\n")}
		v.Page = s.page(c, "Import")
		s.render(c, status, "import", v)
		return
	}
	c.Redirect(http.StatusSeeOther, tableCompareURL(runs))
}
