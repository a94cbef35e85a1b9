// Importing a command's ending: the import fields "status", "error" and
// "exit_code" of Kafka tool output, and results of Kafka's tools run by
// `kbench exec` (result.json with an imported environment).

package server

import (
	"encoding/json"
	"fmt"
	"mime/multipart"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/toolexec"
)

// maxImportError bounds the "error" field: a message and a stderr tail.
const maxImportError = 64 << 10

// importEnding is what an import says about how the tool's run ended:
// the fields "status" (succeeded or failed), "error" (text) and
// "exit_code" (0 to 255, as a shell reports it).
type importEnding struct {
	status rundoc.Status
	err    string
	exit   *int
}

// endingFields are the fields of an importEnding.
var endingFields = []string{"status", "error", "exit_code"}

// readEnding reads status, error and exit_code. Without status, a run
// with an error or a non-zero exit code failed, any other succeeded; a
// succeeded run has neither.
func readEnding(form *multipart.Form) (importEnding, error) {
	var e importEnding
	vals := map[string]string{}
	for _, f := range endingFields {
		var got []string
		for _, v := range form.Value[f] {
			if strings.TrimSpace(v) != "" {
				got = append(got, v)
			}
		}
		if len(got) > 1 {
			return e, badInput(f, "give one, not %d", len(got))
		}
		if len(got) == 1 {
			vals[f] = got[0]
		}
	}
	e.err = strings.TrimSpace(vals["error"])
	if len(e.err) > maxImportError {
		return e, badInput("error", "is %d bytes, at most %d", len(e.err), maxImportError)
	}
	if v, ok := vals["exit_code"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 255 {
			return e, badInput("exit_code", "want an integer from 0 to 255 (128+n for a command killed by signal n), got %q", v)
		}
		e.exit = &n
	}
	switch s := strings.TrimSpace(vals["status"]); s {
	case "":
		e.status = rundoc.StatusSucceeded
		if e.err != "" || (e.exit != nil && *e.exit != 0) {
			e.status = rundoc.StatusFailed
		}
	case string(rundoc.StatusSucceeded):
		e.status = rundoc.StatusSucceeded
		switch {
		case e.exit != nil && *e.exit != 0:
			return e, badInput("exit_code", "is %d: a succeeded run exits 0 (give status failed)", *e.exit)
		case e.err != "":
			return e, badInput("error", "only with status failed")
		}
	case string(rundoc.StatusFailed):
		e.status = rundoc.StatusFailed
	default:
		return e, badInput("status", "must be succeeded or failed, got %q", s)
	}
	if e.status == rundoc.StatusFailed && e.err == "" {
		e.err = "the tool failed"
		if e.exit != nil {
			e.err = fmt.Sprintf("the tool exited with status %d", *e.exit)
		}
	}
	return e, nil
}

// failed reports whether the import is of a failed run.
func (e importEnding) failed() bool { return e.status == rundoc.StatusFailed }

// apply records the ending in o: status, error, completeness and the exit
// code (in the measurement, with a note the run page shows).
func (e importEnding) apply(o *store.Outcome) {
	o.Status, o.Error = e.status, e.err
	o.Complete = o.Complete && !e.failed()
	if e.exit == nil {
		return
	}
	if o.Measurement == nil {
		o.Measurement = &rundoc.Measurement{Source: rundoc.SourceImported}
	}
	o.Measurement.ExitCode = e.exit
	o.Measurement.Notes = append(o.Measurement.Notes, fmt.Sprintf("exit status %d", *e.exit))
}

// isToolResult reports whether a result document is a Kafka tool's run
// measured by `kbench exec` (or a tool run's child) rather than one of
// kbench's own: its environment says imported.
func isToolResult(res *rundoc.Result) bool {
	return res.Environment.Source == rundoc.SourceImported
}

// importToolResult stores the result of a Kafka tool run by `kbench exec`
// as an imported run of the tool's workload: its figures, the CPU of the
// tool's process tree, its output, its ending (status, error, exit code
// in the measurement) and its profiles, in the series of imports of the
// same tool, label and branch unless "series" names one, as an import of
// the tool's output alone would be.
func (s *Server) importToolResult(c *gin.Context, res *rundoc.Result, label string, tags importTagging) (*rundoc.Run, error) {
	switch res.Workload {
	case rundoc.Producer, rundoc.Consumer, rundoc.E2E, rundoc.Imported:
	default:
		return nil, badInput("result", "workload %q: a Kafka tool's run is producer, consumer, e2e or imported", res.Workload)
	}
	if err := rundoc.ValidateMeta(res.Meta); err != nil {
		return nil, badInput("result", "meta: %v", strings.TrimPrefix(err.Error(), "--meta: "))
	}
	meta := rundoc.WithDefaultMeta(tags.meta, res.Meta)
	if err := rundoc.ValidateMeta(meta); err != nil {
		return nil, err
	}
	form := c.Request.MultipartForm
	ups, err := resultUploads(form.File["profile"], res)
	if err != nil {
		return nil, err
	}
	o := store.Outcome{Status: rundoc.StatusSucceeded, Complete: res.Complete, Error: res.Error, Output: res.Output,
		Metrics: res.Metrics, Series: res.Series, Environment: &res.Environment, Measurement: &res.Measurement, FinishedAt: res.FinishedAt.UTC()}
	if !res.Complete || res.Error != "" {
		o.Status, o.Complete = rundoc.StatusFailed, false
		if o.Error == "" {
			o.Error = "the command did not complete (its result.json says complete: false)"
		}
	}
	// kbench exec replaced the secrets it knew of; a document made by
	// hand may hold more: KEY=VALUE arguments of secret keys never reach
	// the store.
	o.Measurement.Command = toolexec.RedactArgs(o.Measurement.Command, nil)
	names := []string{"result.json"}
	for _, pf := range res.Profiles {
		if !pf.Role.Valid() {
			return nil, badInput("result", "profile %s: unknown role %q", pf.File, pf.Role)
		}
		if !pf.Kind.Valid() {
			return nil, badInput("result", "profile %s: unknown kind %q", pf.File, pf.Kind)
		}
		p, err := loadResultProfile(ups, pf)
		if err != nil {
			return nil, err
		}
		p.Role, p.Kind = pf.Role, pf.Kind
		o.Profiles = append(o.Profiles, p)
		names = append(names, pf.File)
	}
	spec := rundoc.ImportSpec{Workload: rundoc.Imported, Files: names}
	if res.Workload != rundoc.Imported {
		spec.Tool = string(res.Workload)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("server: encode import spec: %w", err)
	}
	run := &store.Run{Label: label, Workload: res.Workload, Source: rundoc.SourceImported, Spec: string(specJSON),
		Meta: meta, RunAt: tags.at, SeriesKey: tags.series}
	if run.RunAt.IsZero() {
		run.RunAt = res.StartedAt
	}
	if !res.StartedAt.IsZero() {
		started := res.StartedAt.UTC()
		run.StartedAt = &started
	}
	if err := run.Record(o); err != nil {
		return nil, err
	}
	if err := s.store.CreateRuns(c.Request.Context(), []*store.Run{run}); err != nil {
		return nil, err
	}
	return s.store.GetRun(c.Request.Context(), run.ID)
}
