// Importing Kafka tool output and profiles as a run: GET and POST /import,
// POST /api/import.

package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runimport"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/toolexec"
	"github.com/kbench/kbench/ui"
)

// importRun creates an imported run from a multipart request: the text
// output of kafka-producer-perf-test, kafka-consumer-perf-test,
// kafka-share-consumer-perf-test or kafka-e2e-latency (field "output", a file or pasted text, with the
// command line that printed it in "command" if known) and/or uploaded
// profiles (field "profile"). Everything is checked before anything is stored, and the run
// with its metrics, series and profiles is stored in one CreateRuns call:
// nothing is ever half imported. Shared by the API and the import page.
func (s *Server) importRun(c *gin.Context) (*rundoc.Run, error) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		return nil, uploadErr(err)
	}
	if hasResult(c.Request.MultipartForm) {
		return s.importResult(c)
	}
	// The label's and the tags' errors are reported together.
	var errs rundoc.FieldErrors
	label := strings.TrimSpace(c.PostForm("label"))
	if len(label) > rundoc.MaxLabel {
		errs.Add("label", "must be at most %d characters", rundoc.MaxLabel)
	}
	tags, err := importTags(c.Request.MultipartForm)
	if err := errs.Append(asFieldError(err)); err != nil {
		return nil, err
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	role, err := uploadRole(c)
	if err != nil {
		return nil, err
	}
	kind, err := uploadKind(c)
	if err != nil {
		return nil, err
	}
	ending, err := readEnding(c.Request.MultipartForm)
	if err != nil {
		return nil, err
	}
	out, err := readOutput(c.Request.MultipartForm, ending.failed())
	if err != nil {
		return nil, err
	}
	command, err := readCommand(c.Request.MultipartForm, out)
	if err != nil {
		return nil, err
	}
	files := c.Request.MultipartForm.File["profile"]
	if out == nil && len(files) == 0 {
		return nil, badInput("profile", "no file given: attach the output of kafka-producer-perf-test, kafka-consumer-perf-test, kafka-share-consumer-perf-test or kafka-e2e-latency (\"output\"), a pprof profile or folded stacks (\"profile\")")
	}
	var ups []uploaded
	if len(files) > 0 {
		if ups, err = readUploads(files); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(ups)+1)
	if out != nil {
		names = append(names, out.name)
	}
	for _, u := range ups {
		names = append(names, u.name)
	}
	spec := rundoc.ImportSpec{Workload: rundoc.Imported, Files: names}
	outcome := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Profiles: storedProfiles(ups, role, kind)}
	workload := rundoc.Imported
	switch {
	case out != nil && out.imp != nil:
		spec.Tool = out.imp.Tool
		workload = importedOutcome(&outcome, out)
	case out != nil:
		// A failed run's partial output the parser refused: kept as
		// printed, with why it gave no figures.
		outcome.Output = out.text
		outcome.Measurement = &rundoc.Measurement{Source: rundoc.SourceImported, Notes: []string{"the output gave no figures: " + out.parseErr.Error()}}
	}
	if command != nil {
		if outcome.Measurement == nil {
			outcome.Measurement = &rundoc.Measurement{Source: rundoc.SourceImported}
		}
		outcome.Measurement.Command = command
	}
	ending.apply(&outcome)
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("server: encode import spec: %w", err)
	}
	run := &store.Run{Label: label, Workload: workload, Source: rundoc.SourceImported, Spec: string(specJSON),
		Meta: tags.meta, RunAt: tags.at, SeriesKey: tags.series}
	if err := run.Record(outcome); err != nil {
		return nil, err
	}
	if err := s.store.CreateRuns(c.Request.Context(), []*store.Run{run}); err != nil {
		return nil, err
	}
	return s.store.GetRun(c.Request.Context(), run.ID)
}

// importTagging is what an import says about the run besides its
// figures: when it happened, its metadata and the series it joins.
type importTagging struct {
	at     time.Time // zero: now
	meta   store.Meta
	series string // "": its tool, label and branch
}

// importTags reads the fields "time" (RFC 3339), "meta" (repeated
// key=value) and "series" of an import. Blank fields are left out, as a
// form sends them.
func importTags(form *multipart.Form) (importTagging, error) {
	var t importTagging
	one := func(field string) (string, error) {
		var got []string
		for _, v := range form.Value[field] {
			if v = strings.TrimSpace(v); v != "" {
				got = append(got, v)
			}
		}
		if len(got) > 1 {
			return "", badInput(field, "give one, not %d", len(got))
		}
		if len(got) == 0 {
			return "", nil
		}
		return got[0], nil
	}
	v, err := one("time")
	if err != nil {
		return t, err
	}
	if v != "" {
		if t.at, err = time.Parse(time.RFC3339, v); err != nil {
			return t, badInput("time", "want RFC 3339 such as 2022-06-21T10:00:00Z, got %q", v)
		}
		if err := runimport.CheckRunTime(v, t.at); err != nil {
			return t, badInput("time", "%v", err)
		}
	}
	var pairs []string
	for _, v := range form.Value["meta"] {
		// A form's text area sends its lines in one value.
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				pairs = append(pairs, line)
			}
		}
	}
	meta, err := rundoc.ParseMeta(pairs)
	if err != nil {
		return t, err
	}
	t.meta = meta
	if t.series, err = one("series"); err != nil || t.series == "" {
		return t, err
	}
	return t, rundoc.ValidateSeriesName(t.series)
}

// importedOutput is the parsed "output" field of an import.
type importedOutput struct {
	name string // the file's name, or "pasted output"
	text string
	imp  *kafkafmt.Imported
	// parseErr is why the output of a failed run gave no figures (imp is
	// nil then).
	parseErr error
}

// outputParseError is a line of an uploaded output the parser refused: a
// 400 on the "output" field (through its inputError) that also carries the
// *kafkafmt.ParseError, so the API can name the line.
type outputParseError struct {
	input error
	parse *kafkafmt.ParseError
}

func (e *outputParseError) Error() string { return e.input.Error() }

func (e *outputParseError) Unwrap() []error { return []error{e.input, e.parse} }

// readOutput reads and parses the "output" field: an uploaded file or
// pasted text, not both. It returns nil when the request has neither.
// Output the parser refuses is an error, unless partial (of a failed
// run): then it is returned unparsed, with the parser's error.
func readOutput(form *multipart.Form, partial bool) (*importedOutput, error) {
	fhs := form.File["output"]
	var pasted string
	for _, v := range form.Value["output"] {
		if strings.TrimSpace(v) != "" {
			pasted = v
		}
	}
	var out importedOutput
	switch {
	case len(fhs) > 1:
		return nil, badInput("output", "give one output file, not %d", len(fhs))
	case len(fhs) == 1 && pasted != "":
		return nil, badInput("output", "give the output as a file or pasted, not both")
	case len(fhs) == 1:
		f, err := fhs[0].Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(f, kafkafmt.MaxImportBytes+1))
		f.Close()
		if err != nil {
			return nil, err
		}
		out.name, out.text = fhs[0].Filename, string(data)
	case pasted != "":
		out.name, out.text = "pasted output", pasted
	default:
		return nil, nil
	}
	imp, err := kafkafmt.ParseOutput(strings.NewReader(out.text))
	if err != nil {
		var pe *kafkafmt.ParseError
		switch {
		case partial && errors.As(err, &pe):
			out.parseErr = pe
			return &out, nil
		case errors.As(err, &pe):
			return nil, &outputParseError{input: badInput("output", "%v", pe), parse: pe}
		case errors.Is(err, kafkafmt.ErrImportTooLarge):
			return nil, fmt.Errorf("output: %w: %w", errTooLarge, err)
		}
		return nil, fmt.Errorf("server: parse output: %w", err)
	}
	out.imp = imp
	return &out, nil
}

// maxImportCommand bounds the "command" field.
const maxImportCommand = 8 << 10

// readCommand reads the "command" field: the command line that printed
// the imported output, as typed in a shell, so that comparisons know the
// run's record size, count and acks (the output does not print them). It
// is split as a shell would, its secrets replaced, and must run the tool
// whose output it comes with. Nil when not given.
func readCommand(form *multipart.Form, out *importedOutput) ([]string, error) {
	var got []string
	for _, v := range form.Value["command"] {
		if v = strings.TrimSpace(v); v != "" {
			got = append(got, v)
		}
	}
	switch {
	case len(got) == 0:
		return nil, nil
	case len(got) > 1:
		return nil, badInput("command", "give one, not %d", len(got))
	case len(got[0]) > maxImportCommand:
		return nil, badInput("command", "is %d bytes, at most %d", len(got[0]), maxImportCommand)
	case out == nil || out.imp == nil:
		return nil, badInput("command", "only with the output of the Kafka tool it ran")
	}
	argv, err := rundoc.SplitCommandLine(got[0])
	if err != nil {
		return nil, badInput("command", "%v", err)
	}
	tool := rundoc.ToolCommandTool(argv)
	if want := kafkafmt.Command(out.imp.Tool); tool != want {
		if tool == "" {
			return nil, badInput("command", "names none of Kafka's perf tools: want the %s command line that printed the output", want)
		}
		return nil, badInput("command", "runs %s, but the output is %s's", tool, want)
	}
	return toolexec.RedactArgs(argv, nil), nil
}

// pastedText is the pasted text of a form field ("output", "table",
// "omb"), kept when the import page is shown again: an uploaded file
// cannot be kept, nor a text over 1 MiB.
func pastedText(form *multipart.Form, field string) string {
	if form == nil {
		return ""
	}
	for _, v := range form.Value[field] {
		if strings.TrimSpace(v) != "" && len(v) <= 1<<20 {
			return v
		}
	}
	return ""
}

// importedOutcome makes o the result of the parsed output and returns
// the run's workload: the tool's (producer, consumer or e2e, so the runs list
// and comparisons put it next to kbench's own runs; the run's Source says
// it was imported). o gets the metrics under kbench's names, the
// intervals as the series, the text itself as the output, and the same
// Measurement and Environment documents a launched run has, saying where
// the figures came from.
func importedOutcome(o *store.Outcome, out *importedOutput) rundoc.Workload {
	imp := out.imp
	cmd := kafkafmt.Command(imp.Tool)
	o.Output = out.text
	notes := []string{"imported from Kafka's " + cmd + " output"}
	notes = append(notes, imp.Notes...)
	f := imp.Figures()
	notes = append(notes, f.Notes...)
	o.Metrics, o.Series = append(o.Metrics, f.Metrics...), append(o.Series, f.Series...)
	o.Measurement = &rundoc.Measurement{Source: rundoc.SourceImported, Tool: cmd, MeasuredRecords: f.MeasuredRecords,
		WindowSeconds: f.WindowSeconds, Lines: imp.Lines, Notes: notes}
	o.Environment = &rundoc.Environment{Source: rundoc.SourceImported, Tool: cmd,
		Broker: "imported: " + cmd + " does not print its environment"}
	return rundoc.Workload(kafkafmt.Workload(imp.Tool))
}

// importProfiles handles POST /api/import: OMB results ("omb") and
// tables go to their own handlers; anything else (profiles, a tool's
// output, a result) makes a new imported run.
func (s *Server) importProfiles(c *gin.Context) {
	if err := c.Request.ParseMultipartForm(8 << 20); err == nil {
		switch form := c.Request.MultipartForm; {
		case hasOMB(form):
			s.importOMBAPI(c)
			return
		case hasTable(form):
			s.importTableAPI(c)
			return
		}
	}
	run, err := s.importRun(c)
	if err != nil {
		var pe *kafkafmt.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			// As fail answers, plus the line, for clients to point at.
			_, field, msg := classify(err)
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": msg, "field": field, "line": pe.Line})
			return
		}
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, toAPIRun(run, true))
}

func (s *Server) importPage(c *gin.Context) {
	v := ui.ImportView{}
	v.Page = s.page(c, "Import")
	s.render(c, http.StatusOK, "import", v)
}

// importForm handles the import page; bad input re-renders it with the
// message and the label kept.
func (s *Server) importForm(c *gin.Context) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		s.fail(c, uploadErr(err))
		return
	}
	if !s.checkCSRF(c) {
		return
	}
	switch form := c.Request.MultipartForm; {
	case hasOMB(form) || c.PostForm("form") == "omb": // the OMB form, even sent empty
		s.importOMBForm(c)
		return
	case hasTable(form):
		s.importTableForm(c)
		return
	}
	run, err := s.importRun(c)
	if err != nil {
		status, field, msg := classify(err)
		if status != http.StatusBadRequest {
			s.fail(c, err)
			return
		}
		v := ui.ImportView{Label: c.PostForm("label"), Output: pastedText(c.Request.MultipartForm, "output"), Command: c.PostForm("command"), Error: msg, ErrorField: field,
			Time: c.PostForm("time"), Meta: strings.Join(c.PostFormArray("meta"), "\n"), Series: c.PostForm("series")}
		for _, fm := range fieldMessages(err) {
			v.Errors = append(v.Errors, fm.Error)
			v.ErrorFields = append(v.ErrorFields, fm.Field)
		}
		v.Page = s.page(c, "Import")
		s.render(c, status, "import", v)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", run.ID))
}
