// Back-filling a series from a CSV of past results: POST /api/import/csv.

package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/rundoc"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/store"
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
		var ce *csvError
		if errors.As(err, &ce) {
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": ce.Error(), "field": "file", "line": ce.line, "column": ce.column})
			return
		}
		s.fail(c, err)
		return
	}
	out := make([]apiRun, len(runs))
	for i, r := range runs {
		d := r.Doc()
		out[i] = toAPIRun(&d, false)
	}
	c.JSON(http.StatusCreated, gin.H{"series": runs[0].SeriesKey, "runs": out})
}

func (s *Server) importCSVRuns(c *gin.Context) ([]*store.Run, error) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		return nil, uploadErr(err)
	}
	form := c.Request.MultipartForm
	var errs rundoc.FieldErrors
	series := strings.TrimSpace(c.PostForm("series"))
	if err := rundoc.ValidateSeriesName(series); err != nil {
		errs.Append(err)
	}
	workload := rundoc.Workload(strings.TrimSpace(c.PostForm("workload")))
	if !workload.Runnable() {
		errs.Add("workload", "must be producer, consumer or writepath (its metrics name the CSV's columns), got %q", workload)
	}
	label := strings.TrimSpace(c.PostForm("label"))
	if len(label) > maxLabel {
		errs.Add("label", "must be at most %d characters", maxLabel)
	}
	files := form.File["file"]
	if len(files) != 1 {
		errs.Add("file", "give one CSV file, not %d", len(files))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if label == "" {
		label = series
		if len(label) > maxLabel {
			label = label[:maxLabel]
		}
	}
	fh := files[0]
	if fh.Size > maxCSVBytes {
		return nil, &limitError{field: "file", msg: fmt.Sprintf("%s is %d bytes, at most %d", fh.Filename, fh.Size, maxCSVBytes)}
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("server: open csv: %w", err)
	}
	defer f.Close()
	// Kafka's Java client metrics are named too: a CSV of what the
	// Java tools report keeps every column under its own name.
	rows, err := parseResultsCSV(f, runner.ImportMetrics(workload))
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(rundoc.ImportSpec{Workload: rundoc.Imported, Files: []string{fh.Filename}, Tool: "csv"})
	if err != nil {
		return nil, fmt.Errorf("server: encode import spec: %w", err)
	}
	runs := make([]*store.Run, len(rows))
	for i, row := range rows {
		note := fmt.Sprintf("imported from line %d of %s", row.line, fh.Filename)
		o := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: row.metrics, FinishedAt: row.at,
			Measurement: &rundoc.Measurement{Source: rundoc.SourceImported, Tool: "csv", Lines: 1, Notes: []string{note}},
			Environment: &rundoc.Environment{Source: rundoc.SourceImported, Tool: "csv", Broker: "imported: a CSV row does not say"}}
		r := &store.Run{Label: label, Workload: workload, Source: rundoc.SourceImported, Spec: string(spec),
			Meta: row.meta, RunAt: row.at, SeriesKey: series}
		if err := r.Record(o); err != nil {
			return nil, err
		}
		runs[i] = r
	}
	if err := s.store.CreateRuns(c.Request.Context(), runs); err != nil {
		return nil, err
	}
	return runs, nil
}
