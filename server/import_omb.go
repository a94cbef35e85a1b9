// Importing OpenMessaging Benchmark results: POST /api/import with the
// field "omb", one run per file.

package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/omb"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// maxOMBFiles bounds the OMB results of one import: the runs of one
// CreateRuns.
const maxOMBFiles = 100

// hasOMB reports whether an import carries OMB results: "omb" files or
// pasted text.
func hasOMB(form *multipart.Form) bool {
	if form == nil {
		return false
	}
	if len(form.File["omb"]) > 0 {
		return true
	}
	for _, v := range form.Value["omb"] {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// ombFile is one "omb" field of an import: its name and text.
type ombFile struct {
	name string
	data []byte
}

// readOMBFiles reads the "omb" fields, files then pasted texts, each at
// most omb.MaxBytes (else a 413 naming it).
func readOMBFiles(form *multipart.Form) ([]ombFile, error) {
	var out []ombFile
	fhs := form.File["omb"]
	var pasted []string
	for _, v := range form.Value["omb"] {
		if strings.TrimSpace(v) != "" {
			pasted = append(pasted, v)
		}
	}
	if n := len(fhs) + len(pasted); n > maxOMBFiles {
		return nil, badInput("omb", "give at most %d results in one import, not %d", maxOMBFiles, n)
	}
	for i, fh := range fhs {
		if fh.Size > omb.MaxBytes {
			return nil, &limitError{field: "omb", msg: fmt.Sprintf("omb[%d] (%s) is %d bytes, at most %d", i, fh.Filename, fh.Size, omb.MaxBytes)}
		}
		f, err := fh.Open()
		if err != nil {
			return nil, fmt.Errorf("server: open omb[%d]: %w", i, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, omb.MaxBytes+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("server: read omb[%d]: %w", i, err)
		}
		out = append(out, ombFile{name: fh.Filename, data: data})
	}
	for i, text := range pasted {
		out = append(out, ombFile{name: "pasted result " + strconv.Itoa(i+1), data: []byte(text)})
	}
	return out, nil
}

// parseOMB parses the i-th result: a malformed one is a 400 naming its
// field ("omb[0].publishLatency99pct[3]") and file, an oversized one a
// 413.
func parseOMB(i int, f ombFile) (*omb.Parsed, error) {
	p, err := omb.Parse(f.data)
	var fe *omb.FieldError
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, omb.ErrTooLarge):
		return nil, &limitError{field: "omb", msg: fmt.Sprintf("omb[%d] (%s) is over %d bytes", i, f.name, omb.MaxBytes)}
	case errors.As(err, &fe):
		field := "omb[" + strconv.Itoa(i) + "]"
		if fe.Field != "" {
			field += "." + fe.Field
		}
		return nil, badInput(field, "%s (%s)", fe.Msg, f.name)
	}
	return nil, fmt.Errorf("server: omb[%d]: %w", i, err)
}

// importOMBRuns stores each "omb" result as an imported e2e run whose
// source is OMB (omb.Parsed.Run), labelled by the result's driver unless
// "label" is given; "time" and "meta" apply to every run, "series" only
// to the run of a single file (each run joins by default the series of
// its OMB workload, label and branch). Every file is read and checked
// first; all runs are stored in one CreateRuns, or none.
func (s *Server) importOMBRuns(c *gin.Context) ([]*store.Run, error) {
	form := c.Request.MultipartForm
	var errs rundoc.FieldErrors
	for _, f := range append([]string{"output", "profile", "result", "table", "file", "csv", "command", "workload", "role", "kind", "histogram_log"}, endingFields...) {
		if len(form.File[f]) > 0 || strings.TrimSpace(strings.Join(form.Value[f], "")) != "" {
			errs.Add(f, "not with an OMB result (\"omb\"): import it on its own")
		}
	}
	label := strings.TrimSpace(c.PostForm("label"))
	if len(label) > rundoc.MaxLabel {
		errs.Add("label", "must be at most %d characters", rundoc.MaxLabel)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	tags, err := importTags(form)
	if err != nil {
		return nil, err
	}
	files, err := readOMBFiles(form)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 { // the import page's form, sent without a result
		return nil, badInput("omb", "choose an OMB result file or paste one")
	}
	if tags.series != "" && len(files) > 1 {
		return nil, badInput("series", "only with one OMB result: each of several joins the series of its workload and driver")
	}
	runs := make([]*store.Run, len(files))
	for i, f := range files {
		p, err := parseOMB(i, f)
		if err != nil {
			return nil, err
		}
		in := p.Run(f.name)
		if label != "" {
			in.Label = label
		}
		spec, err := json.Marshal(in.Spec)
		if err != nil {
			return nil, fmt.Errorf("server: encode import spec: %w", err)
		}
		series := tags.series
		if series == "" {
			series = rundoc.ImportSeriesKey(rundoc.Workload(rundoc.ToolOMB), p.Result.Workload+" / "+in.Label, tags.meta[rundoc.MetaBranch])
		}
		r := &store.Run{Label: in.Label, Workload: in.Workload, Source: rundoc.SourceImported, Spec: string(spec),
			Meta: tags.meta, RunAt: tags.at, SeriesKey: series}
		o := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: in.Metrics, Series: in.Series,
			Environment: &in.Environment, Measurement: &in.Measurement, FinishedAt: tags.at}
		if o.FinishedAt.IsZero() {
			o.FinishedAt = time.Now()
		}
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

// importOMBAPI answers POST /api/import with "omb": 201 with the runs,
// in the files' order, and the comparison of them when there are
// several.
func (s *Server) importOMBAPI(c *gin.Context) {
	runs, err := s.importOMBRuns(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := client.Created{Runs: make([]apiRun, len(runs))}
	for i, r := range runs {
		d := r.Doc()
		out.Runs[i] = toAPIRun(&d, false)
	}
	if len(runs) == 1 {
		out.ID, out.URL = runs[0].ID, out.Runs[0].URL
	} else {
		out.CompareURL = tableCompareURL(runs)
	}
	c.JSON(http.StatusCreated, out)
}

// importOMBForm handles the import page's OMB form (the "omb" field of
// POST /import): the run's page for one result, the runs' comparison for
// several; a refusal shows the page again with its message inside the
// form's section and the form's fields kept.
func (s *Server) importOMBForm(c *gin.Context) {
	runs, err := s.importOMBRuns(c)
	if err != nil {
		status, field, msg := classify(err)
		if status != http.StatusBadRequest {
			s.fail(c, err)
			return
		}
		v := ui.ImportView{OMB: ui.OMBImportForm{Label: c.PostForm("label"), Time: c.PostForm("time"),
			Meta: strings.Join(c.PostFormArray("meta"), "\n"), Series: c.PostForm("series"), Text: pastedText(c.Request.MultipartForm, "omb"),
			Error: msg, ErrorField: field}}
		v.Page = s.page(c, "Import")
		s.render(c, status, "import", v)
		return
	}
	if len(runs) == 1 {
		c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", runs[0].ID))
		return
	}
	c.Redirect(http.StatusSeeOther, tableCompareURL(runs))
}
