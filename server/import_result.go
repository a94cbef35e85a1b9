// Importing a kbench result measured elsewhere: POST /api/import with a
// "result" file (result.json of `kbench run --out DIR`) and the profiles
// it names, as `kbench import DIR` and `kbench run --server` send them.

package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"path/filepath"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/lifecycle"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

// maxResultBytes bounds an uploaded result.json: a run's document holds
// at most rundoc.MaxSeriesPoints intervals and its Kafka-format output,
// far below this.
const maxResultBytes = 32 << 20

// hasResult reports whether an import request carries a "result" field.
func hasResult(form *multipart.Form) bool {
	return len(form.File["result"]) > 0 || len(form.Value["result"]) > 0
}

// importResult stores a kbench run measured elsewhere as an imported run
// holding everything its result.json holds: the spec (as a stored spec
// file, redacted, with its fingerprint), status, documents, metrics,
// series, output and profiles, read into a store.Outcome by the same
// code as the server's own runs (lifecycle.ResultOutcome). Its meta is
// result.json's with the request's "meta" fields over it, its time the
// run's start unless "time" says otherwise, and its series that of a
// run of its spec on its branch, so it joins the history of the
// server's own runs of the same workload and target, unless "series"
// names one. Everything is checked first; the run is stored in one
// CreateRuns.
func (s *Server) importResult(c *gin.Context) (*rundoc.Run, error) {
	form := c.Request.MultipartForm
	if out, _ := readOutputPresent(form); out {
		return nil, badInput("result", "give a kbench result (\"result\") or a Kafka tool's output (\"output\"), not both")
	}
	for _, f := range append([]string{"role", "kind"}, endingFields...) {
		if strings.TrimSpace(c.PostForm(f)) != "" {
			return nil, badInput(f, "not with a result: result.json says each profile's role and kind, and how the run ended")
		}
	}
	label := strings.TrimSpace(c.PostForm("label"))
	if len(label) > rundoc.MaxLabel {
		return nil, badInput("label", "must be at most %d characters", rundoc.MaxLabel)
	}
	tags, err := importTags(form)
	if err != nil {
		return nil, err
	}
	res, err := readResultField(form)
	if err != nil {
		return nil, err
	}
	if isToolResult(res) {
		return s.importToolResult(c, res, label, tags)
	}
	// The spec as the run read it, checked as a spec file is: what the
	// store keeps must be a spec this server can read back.
	params, err := res.Spec.Params()
	if err != nil {
		return nil, badInput("result", "spec: %v", err)
	}
	spec, err := rundoc.SpecFromParams(res.Workload, params)
	if err != nil {
		return nil, badInput("result", "spec: %v", err)
	}
	specJSON, fingerprint, err := launch.EncodeSpec(spec)
	if err != nil {
		return nil, err
	}
	if err := rundoc.ValidateMeta(res.Meta); err != nil {
		return nil, badInput("result", "meta: %v", strings.TrimPrefix(err.Error(), "--meta: "))
	}
	meta := rundoc.WithDefaultMeta(tags.meta, res.Meta)
	if err := rundoc.ValidateMeta(meta); err != nil {
		return nil, err
	}
	ups, err := resultUploads(form.File["profile"], res)
	if err != nil {
		return nil, err
	}
	histLog, err := readHistogramLogField(form, res)
	if err != nil {
		return nil, err
	}
	for _, h := range res.Histograms {
		if _, err := runhist.Check(h); err != nil {
			return nil, badInput("result", "histograms: %v", err)
		}
	}
	outcome, err := lifecycle.ResultOutcome(res, func(pf rundoc.ProfileFile) (store.Profile, error) {
		return loadResultProfile(ups, pf)
	}, histLog)
	if err != nil {
		return nil, err
	}
	if cfg := outcome.Environment.Config; cfg != nil {
		// kbench records no secret setting; a document made by hand
		// might: never store one.
		for i, st := range cfg.Settings {
			cfg.Settings[i].Value = rundoc.RedactProps(map[string]string{st.Name: st.Value})[st.Name]
		}
	}
	run := &store.Run{Label: label, Workload: res.Workload, Source: rundoc.SourceImported, Spec: specJSON, Fingerprint: fingerprint,
		Meta: meta, RunAt: tags.at, SeriesKey: tags.series}
	if run.RunAt.IsZero() {
		run.RunAt = res.StartedAt
	}
	if run.SeriesKey == "" {
		run.SeriesKey = rundoc.SeriesKey(fingerprint, meta[rundoc.MetaBranch])
	}
	if !res.StartedAt.IsZero() {
		started := res.StartedAt.UTC()
		run.StartedAt = &started
	}
	if err := run.Record(outcome); err != nil {
		return nil, err
	}
	if err := s.store.CreateRuns(c.Request.Context(), []*store.Run{run}); err != nil {
		return nil, err
	}
	return s.store.GetRun(c.Request.Context(), run.ID)
}

// readOutputPresent reports whether the request has an "output" field.
func readOutputPresent(form *multipart.Form) (bool, error) {
	if len(form.File["output"]) > 0 {
		return true, nil
	}
	for _, v := range form.Value["output"] {
		if strings.TrimSpace(v) != "" {
			return true, nil
		}
	}
	return false, nil
}

// readResultField reads the "result" field: one result.json file (or
// its text), at most maxResultBytes, of a schema this kbench reads.
func readResultField(form *multipart.Form) (*rundoc.Result, error) {
	var data []byte
	switch fhs, vals := form.File["result"], form.Value["result"]; {
	case len(fhs)+len(vals) > 1:
		return nil, badInput("result", "give one result.json, not %d", len(fhs)+len(vals))
	case len(fhs) == 1:
		if fhs[0].Size > maxResultBytes {
			return nil, &limitError{field: "result", msg: fmt.Sprintf("%s is %d bytes, at most %d", fhs[0].Filename, fhs[0].Size, maxResultBytes)}
		}
		f, err := fhs[0].Open()
		if err != nil {
			return nil, fmt.Errorf("server: open result: %w", err)
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxResultBytes+1)); err != nil {
			return nil, fmt.Errorf("server: read result: %w", err)
		}
	default:
		data = []byte(vals[0])
	}
	if len(data) > maxResultBytes {
		return nil, &limitError{field: "result", msg: fmt.Sprintf("result.json is over %d bytes", maxResultBytes)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badInput("result", "is empty: attach the result.json that kbench run --out DIR wrote")
	}
	res, err := rundoc.DecodeResult(data, "result.json")
	if err != nil {
		return nil, badInput("result", "%s", strings.TrimPrefix(err.Error(), "rundoc: "))
	}
	return res, nil
}

// resultUploads matches the "profile" files of a result import with the
// profiles result.json names: each named one must be there, under its
// name, and no other.
func resultUploads(files []*multipart.FileHeader, res *rundoc.Result) (map[string]*multipart.FileHeader, error) {
	named := map[string]bool{}
	var names []string
	for _, pf := range res.Profiles {
		named[filepath.Base(pf.File)] = true
		names = append(names, filepath.Base(pf.File))
	}
	ups := map[string]*multipart.FileHeader{}
	for _, fh := range files {
		name := filepath.Base(fh.Filename)
		switch {
		case !named[name]:
			if len(names) == 0 {
				return nil, badInput("profile", "%s: result.json names no profiles", fh.Filename)
			}
			return nil, badInput("profile", "%s: result.json names no such profile (it names %s)", fh.Filename, strings.Join(names, ", "))
		case ups[name] != nil:
			return nil, badInput("profile", "%s given twice", name)
		}
		ups[name] = fh
	}
	for _, name := range names {
		if ups[name] == nil {
			return nil, badInput("profile", "%s: result.json names it, but it was not sent (attach it as a \"profile\" file of that name)", name)
		}
	}
	return ups, nil
}

// loadResultProfile reads an uploaded profile of a result as any upload
// is read (profiles.LoadUpload: capped, a decompression bomb refused
// cheaply) and stores its canonical form, marked uploaded: it came from
// outside the server.
func loadResultProfile(ups map[string]*multipart.FileHeader, pf rundoc.ProfileFile) (store.Profile, error) {
	fh := ups[filepath.Base(pf.File)]
	p, err := profiles.LoadUpload(func() (io.ReadCloser, error) { return fh.Open() })
	switch {
	case errors.Is(err, profiles.ErrTooLarge):
		return store.Profile{}, &limitError{field: "profile", msg: fh.Filename + ": " + err.Error()}
	case errors.Is(err, profiles.ErrNotProfile), errors.Is(err, profiles.ErrUnusable):
		return store.Profile{}, badInput("profile", "%s: %v", fh.Filename, err)
	case err != nil:
		return store.Profile{}, fmt.Errorf("server: read upload %s: %w", fh.Filename, err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return store.Profile{}, fmt.Errorf("server: encode %s: %w", fh.Filename, err)
	}
	return store.Profile{Data: buf.Bytes(), Samples: int64(len(p.Sample)), Uploaded: true}, nil
}

// readHistogramLogField reads the "histogram_log" file of a result
// import: the log result.json names (at most
// lifecycle.MaxHistogramLogBytes), checked line by line; nil when it
// names none.
func readHistogramLogField(form *multipart.Form, res *rundoc.Result) ([]byte, error) {
	fhs := form.File["histogram_log"]
	switch {
	case len(fhs) > 1:
		return nil, badInput("histogram_log", "give one histogram log, not %d", len(fhs))
	case res.HistogramLog == "" && len(fhs) == 1:
		return nil, badInput("histogram_log", "%s: result.json names no histogram log", fhs[0].Filename)
	case res.HistogramLog == "":
		return nil, nil
	case len(fhs) == 0:
		return nil, badInput("histogram_log", "result.json names %s, but it was not sent (attach it as the \"histogram_log\" file)", res.HistogramLog)
	case fhs[0].Size > lifecycle.MaxHistogramLogBytes:
		return nil, &limitError{field: "histogram_log", msg: fmt.Sprintf("%s is %d bytes, at most %d", fhs[0].Filename, fhs[0].Size, lifecycle.MaxHistogramLogBytes)}
	}
	f, err := fhs[0].Open()
	if err != nil {
		return nil, fmt.Errorf("server: open histogram log: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, lifecycle.MaxHistogramLogBytes+1))
	if err != nil {
		return nil, fmt.Errorf("server: read histogram log: %w", err)
	}
	if len(data) > lifecycle.MaxHistogramLogBytes {
		return nil, &limitError{field: "histogram_log", msg: fmt.Sprintf("%s is over %d bytes", fhs[0].Filename, lifecycle.MaxHistogramLogBytes)}
	}
	if _, _, err := runhist.ReadLog(bytes.NewReader(data)); err != nil {
		return nil, badInput("histogram_log", "%s: %v", fhs[0].Filename, err)
	}
	return data, nil
}
