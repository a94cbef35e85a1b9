// Back-filling a series from a CSV of past results: POST /api/import/csv,
// and the import page's CSV form (POST /import/csv).

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runimport"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// importCSV handles POST /api/import/csv: multipart fields "file" (the
// CSV), "series" (the series the rows join) and "workload" (whose
// metrics the columns name), and an optional "label" (default: the
// series). Each row becomes an imported, succeeded run of the workload in
// the series, at the row's time, with its metrics and tags; all rows are
// stored in one CreateRuns, or none. A bad cell is a 400 with its line
// and column.
func (s *Server) importCSV(c *gin.Context) {
	runs, err := s.importCSVRuns(c)
	if err != nil {
		s.fail(c, err) // a bad cell's 400 gives its line and column
		return
	}
	out := make([]apiRun, len(runs))
	for i, r := range runs {
		d := r.Doc()
		out[i] = toAPIRun(&d, false)
	}
	c.JSON(http.StatusCreated, client.Created{Series: runs[0].SeriesKey, Runs: out})
}

func (s *Server) importCSVRuns(c *gin.Context) ([]*store.Run, error) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		return nil, uploadErr(err)
	}
	in, errs := readCSVFields(c)
	files := c.Request.MultipartForm.File["file"]
	if len(files) != 1 {
		errs.Add("file", "give one CSV file, not %d", len(files))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return s.storeCSVFile(c.Request.Context(), in, files[0])
}

// csvImport is what a CSV back-fill's fields say besides the file.
type csvImport struct {
	series   string
	workload rundoc.Workload
	label    string
}

// readCSVFields reads the fields "series", "workload" and "label" of a
// parsed multipart form (the API's or the import page's), recording each
// bad one in the returned errors.
func readCSVFields(c *gin.Context) (csvImport, rundoc.FieldErrors) {
	var errs rundoc.FieldErrors
	in := csvImport{series: strings.TrimSpace(c.PostForm("series")), workload: rundoc.Workload(strings.TrimSpace(c.PostForm("workload"))),
		label: strings.TrimSpace(c.PostForm("label"))}
	if err := rundoc.ValidateSeriesName(in.series); err != nil {
		errs.Append(err)
	}
	if !in.workload.Runnable() {
		errs.Add("workload", "must be one of %s (its metrics name the CSV's columns), got %q", workloadList(), in.workload)
	}
	if len(in.label) > rundoc.MaxLabel {
		errs.Add("label", "must be at most %d characters", rundoc.MaxLabel)
	}
	if in.label == "" {
		in.label = in.series
		if len(in.label) > rundoc.MaxLabel {
			in.label = in.label[:rundoc.MaxLabel]
		}
	}
	return in, errs
}

// storeCSV reads the CSV r (named name) and stores its rows as runs of
// in's series, all or none.
func (s *Server) storeCSV(ctx context.Context, in csvImport, name string, r io.Reader) ([]*store.Run, error) {
	// Kafka's Java client metrics are named too: a CSV of what the
	// Java tools report keeps every column under its own name.
	rows, err := runimport.ParseResultsCSV(r, s.importMetrics(in.workload))
	if err != nil {
		return nil, err
	}
	runs := make([]importedRun, len(rows))
	for i, row := range rows {
		runs[i] = importedRun{label: in.label, workload: in.workload, seriesKey: in.series, metrics: row.Metrics, meta: row.Meta,
			runAt: row.At, finishedAt: row.At, lines: 1, notes: []string{fmt.Sprintf("imported from line %d of %s", row.Line, name)}}
	}
	return s.storeImportedRuns(ctx, "csv", name, "imported: a CSV row does not say", runs)
}

// importCSVForm handles the import page's CSV form (POST /import/csv): the
// API's fields, with the CSV as a file ("file") or pasted ("csv"). It
// redirects to the series' history; a bad field or cell shows the page
// again with the message (a cell's with its line and column, as the API
// gives them) and what was typed.
func (s *Server) importCSVForm(c *gin.Context) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		s.fail(c, uploadErr(err))
		return
	}
	if !s.checkCSRF(c) {
		return
	}
	pasted := c.PostForm("csv")
	runs, err := s.importCSVFormRuns(c, pasted)
	if err != nil {
		status, field, msg := classify(err)
		if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
			s.fail(c, err)
			return
		}
		v := ui.ImportView{CSV: ui.CSVImportForm{Series: c.PostForm("series"), Workload: c.PostForm("workload"), Label: c.PostForm("label"),
			Text: pasted, Error: msg, ErrorField: field}}
		var ce *runimport.CellError
		if errors.As(err, &ce) {
			v.CSV.Line, v.CSV.Column = ce.Line, ce.Column
		}
		v.Page = s.page(c, "Import")
		s.render(c, status, "import", v)
		return
	}
	q := url.Values{"series": {runs[0].SeriesKey}}
	c.Redirect(http.StatusSeeOther, "/history?"+q.Encode())
}

func (s *Server) importCSVFormRuns(c *gin.Context, pasted string) ([]*store.Run, error) {
	in, errs := readCSVFields(c)
	files := c.Request.MultipartForm.File["file"]
	// A browser sends an empty file part when no file was chosen.
	files = slices.DeleteFunc(slices.Clone(files), func(fh *multipart.FileHeader) bool { return fh.Filename == "" && fh.Size == 0 })
	switch {
	case len(files) > 1:
		errs.Add("file", "give one CSV file, not %d", len(files))
	case len(files) == 1 && strings.TrimSpace(pasted) != "":
		errs.Add("file", "give a CSV file or paste one, not both")
	case len(files) == 0 && strings.TrimSpace(pasted) == "":
		errs.Add("file", "choose a CSV file or paste one")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return s.storeCSV(c.Request.Context(), in, "pasted CSV", strings.NewReader(pasted))
	}
	return s.storeCSVFile(c.Request.Context(), in, files[0])
}

// storeCSVFile stores the uploaded CSV fh as storeCSV does, refusing one
// over runimport.MaxCSVBytes before reading it.
func (s *Server) storeCSVFile(ctx context.Context, in csvImport, fh *multipart.FileHeader) ([]*store.Run, error) {
	if fh.Size > runimport.MaxCSVBytes {
		return nil, &limitError{field: "file", msg: fmt.Sprintf("%s is %d bytes, at most %d", fh.Filename, fh.Size, runimport.MaxCSVBytes)}
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("server: open csv: %w", err)
	}
	defer f.Close()
	return s.storeCSV(ctx, in, fh.Filename, f)
}

// workloadList names the runnable workloads, comma-separated.
func workloadList() string {
	names := make([]string, 0, len(rundoc.Workloads()))
	for _, w := range rundoc.Workloads() {
		names = append(names, string(w))
	}
	return strings.Join(names, ", ")
}
