package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/rundoc"
	"github.com/kbench/kbench/runner"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/store"
	"github.com/kbench/kbench/ui"
)

var errNotFound = fmt.Errorf("server: %w", store.ErrNotFound)

// createRequest is the body of POST /api/runs; the form is turned into one.
type createRequest struct {
	Workload    string                     `json:"workload"`
	Label       string                     `json:"label"`
	Repetitions int                        `json:"repetitions"`
	WarmupRuns  int                        `json:"warmup_runs"`
	Params      map[string]json.RawMessage `json:"params"`
	Target      *targetRequest             `json:"target,omitempty"`
	// Configs makes an A/B submission (see abtest.go): several
	// configurations queued interleaved. Label, Params and Target are
	// then each configuration's own.
	Configs []configRequest `json:"configs,omitempty"`
}

// targetRequest names a real cluster; the password never leaves memory.
type targetRequest struct {
	BootstrapServer  string `json:"bootstrap_server"`
	SecurityProtocol string `json:"security_protocol"`
	SASLMechanism    string `json:"sasl_mechanism"`
	SASLUsername     string `json:"sasl_username"`
	SASLPassword     string `json:"sasl_password"`
}

// Limits of a request.
const (
	maxRepetitions = 50
	maxWarmupRuns  = 10
	maxLabel       = 200
)

// serverRefused are runner flags that name files on the server's disk.
var serverRefused = map[string]bool{"payload-file": true, "payload-delimiter": true, "producer.config": true, "consumer.config": true}

// prepare validates a request into a spec. It reports every bad field (a
// runner.FieldErrors), in the form's order: the run's fields, the
// target's, then the workload options.
func (s *Server) prepare(req *createRequest) (rundoc.Spec, error) {
	req.Label = strings.TrimSpace(req.Label)
	var errs rundoc.FieldErrors
	workloadOK := checkWorkload(req.Workload, &errs)
	if len(req.Label) > maxLabel {
		errs.Add("label", "must be at most %d characters", maxLabel)
	}
	checkCounts(req, &errs)
	if !workloadOK {
		return rundoc.Spec{}, errs
	}
	spec, target, opts, err := s.prepareConfig(req.Workload, req.Params, req.Target)
	if err != nil {
		return spec, err
	}
	errs = append(append(errs, target...), opts...)
	return spec, errs.Err()
}

// checkWorkload reports whether workload is one kbench runs, adding an
// error to errs when it is not.
func checkWorkload(workload string, errs *rundoc.FieldErrors) bool {
	if rundoc.Workload(workload).Runnable() {
		return true
	}
	errs.Add("workload", "must be producer, consumer or writepath, got %q", workload)
	return false
}

// checkCounts checks a request's repetitions and warm-up runs; 0
// repetitions means one.
func checkCounts(req *createRequest, errs *rundoc.FieldErrors) {
	if req.Repetitions < 0 || req.Repetitions > maxRepetitions {
		errs.Add("repetitions", "must be between 1 and %d, got %d", maxRepetitions, req.Repetitions)
	}
	if req.WarmupRuns < 0 || req.WarmupRuns > maxWarmupRuns {
		errs.Add("warmup_runs", "must be between 0 and %d, got %d", maxWarmupRuns, req.WarmupRuns)
	}
	if req.Repetitions == 0 {
		req.Repetitions = 1
	}
}

// prepareConfig validates one configuration of a workload (its params and
// target) into a spec. Errors are returned by where they point: target
// holds those of the target's fields (under their form names, e.g.
// "bootstrap-server", also when the address came from the params), opts
// those of the workload options, sorted as the option table lists them;
// err is an error that is not the input's.
func (s *Server) prepareConfig(workload string, reqParams map[string]json.RawMessage, t *targetRequest) (spec rundoc.Spec, target, opts rundoc.FieldErrors, err error) {
	params := make(map[string]json.RawMessage, len(reqParams))
	for k, v := range reqParams {
		if serverRefused[k] {
			opts.Add(k, "is not accepted by the server: it names a file on the server's disk")
			continue
		}
		params[k] = v
	}
	spec, err = rundoc.SpecFromParams(rundoc.Workload(workload), params, runner.Validate)
	if err := opts.Append(err); err != nil {
		return spec, nil, nil, err
	}
	if t != nil {
		if err := applyTarget(&spec, t, &target, &opts); err != nil {
			return spec, nil, nil, err
		}
	}
	if !target.Has("bootstrap-server") && !opts.Has("bootstrap-server") {
		if err := s.checkTargets(spec.Targets()); err != nil {
			var ie *inputError
			if !errors.As(err, &ie) {
				return spec, nil, nil, err
			}
			target.Add(ie.Field, "%s", ie.Msg)
		}
	}
	opts.SortByOptions()
	return spec, target, opts, nil
}

// targetProps are the Kafka properties the target's form fields stand for.
var targetProps = []struct{ prop, field string }{{"security.protocol", "security-protocol"},
	{"sasl.mechanism", "sasl-mechanism"}, {"sasl.username", "sasl-username"}, {"sasl.password", "sasl-password"}}

// targetField is the target field a message about the client's security
// properties points at, "" for none: what it says is needed ("… needs
// sasl.mechanism"), else the first property it names.
func targetField(msg string) string {
	if _, after, ok := strings.Cut(msg, " needs "); ok {
		if f := firstTargetProp(after); f != "" {
			return f
		}
	}
	return firstTargetProp(msg)
}

func firstTargetProp(text string) string {
	best, field := len(text), ""
	for _, tp := range targetProps {
		if i := strings.Index(text, tp.prop); i >= 0 && i < best {
			best, field = i, tp.field
		}
	}
	return field
}

// applyTarget moves the target fields into the spec as the Kafka
// properties they stand for, then validates again: errors about those
// properties go to target under the field the user filled in, the rest to
// opts (which already holds the first validation's).
func applyTarget(spec *rundoc.Spec, t *targetRequest, target, opts *rundoc.FieldErrors) error {
	if strings.TrimSpace(t.BootstrapServer) == "" {
		target.Add("bootstrap-server", "is required for a bootstrap target")
	}
	spec.BootstrapServer = strings.TrimSpace(t.BootstrapServer)
	set := func(k, v string) {
		if v == "" {
			return
		}
		if spec.Props == nil {
			spec.Props = map[string]string{}
		}
		spec.Props[k] = v
	}
	set("security.protocol", t.SecurityProtocol)
	set("sasl.mechanism", t.SASLMechanism)
	set("sasl.username", t.SASLUsername)
	set("sasl.password", t.SASLPassword)
	var again rundoc.FieldErrors
	if err := again.Append(spec.Validate(runner.Validate)); err != nil {
		return err
	}
	for _, fe := range again {
		field := ""
		if strings.HasSuffix(fe.Field, "-props") {
			// Point at the target field the user filled in.
			field = targetField(fe.Msg)
		}
		if field != "" {
			target.Add(field, "%s", strings.TrimPrefix(fe.Msg, "kafkasec: "))
		} else if fe.Field != "bootstrap-server" || !target.Has("bootstrap-server") {
			opts.Add(fe.Field, "%s", fe.Msg)
		}
	}
	return nil
}

// createRuns stores the runs of a request (warm-up runs first, then the
// measured repetitions) and queues them.
func (s *Server) createRuns(ctx context.Context, req createRequest, spec rundoc.Spec) ([]*store.Run, error) {
	_, secrets := rundoc.SplitSecrets(spec)
	specJSON, fingerprint, err := encodeSpec(spec)
	if err != nil {
		return nil, err
	}
	total := req.WarmupRuns + req.Repetitions
	group := ""
	if total > 1 {
		group = randomID(8)
	}
	runs := make([]*store.Run, 0, total)
	for i := 0; i < total; i++ {
		r := &store.Run{Label: req.Label, Workload: spec.Workload, Status: rundoc.StatusQueued, Source: rundoc.SourceLaunched,
			Spec: specJSON, Fingerprint: fingerprint, GroupID: group}
		if i < req.WarmupRuns {
			r.Warmup = true
		} else if group != "" {
			r.GroupIndex = i - req.WarmupRuns + 1
		}
		runs = append(runs, r)
	}
	if err := s.store.CreateRuns(ctx, runs); err != nil {
		return nil, err
	}
	for _, r := range runs {
		if err := s.runs.Submit(ctx, r.ID, secrets); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// encodeSpec is what the store keeps of a spec: its redacted spec file
// and its fingerprint. An error here is a bug (validation lets no
// unencodable value through), never a reason to store less.
func encodeSpec(spec rundoc.Spec) (specJSON, fingerprint string, err error) {
	params, err := spec.Redacted().Params()
	if err != nil {
		return "", "", fmt.Errorf("server: encode spec: %w", err)
	}
	data, err := json.Marshal(rundoc.SpecFile{Workload: spec.Workload, Params: params})
	if err != nil {
		return "", "", fmt.Errorf("server: encode spec: %w", err)
	}
	fingerprint, err = spec.Fingerprint()
	if err != nil {
		return "", "", fmt.Errorf("server: fingerprint spec: %w", err)
	}
	return string(data), fingerprint, nil
}

func parseID(c *gin.Context) (uint, error) {
	id, err := strconv.ParseUint(c.Param("id"), 10, 32)
	if err != nil || id == 0 {
		return 0, errNotFound
	}
	return uint(id), nil
}

// --- Pages ---

func (s *Server) runsPage(c *gin.Context) {
	q := ui.ParseRunsQuery(c.Request.URL.Query())
	ctx := c.Request.Context()
	s.cachedRender(c, "runs?"+q.URL(), func(csrf string) (string, any, error) {
		runs, total, err := s.store.ListRuns(ctx, store.RunFilter{Workload: q.Workload, Label: q.Label, Status: q.Status,
			GroupID: q.Group, IDs: q.IDList(), Offset: q.Offset(), Limit: q.PerPage})
		if err != nil {
			return "", nil, err
		}
		labels, err := s.store.Labels(ctx)
		if err != nil {
			return "", nil, err
		}
		v := ui.NewRunsView(runs, total, q, labels)
		v.Page = ui.Page{Title: "Runs", CSRF: csrf}
		return "runs", v, nil
	})
}

func (s *Server) newRunPage(c *gin.Context) {
	v := ui.NewRunForm(url.Values{}, nil)
	v.Page = s.page(c, "New run")
	s.render(c, http.StatusOK, "new_run", v)
}

// createRunForm handles the new-run form: invalid input re-renders the form
// with the bad field named and every value kept (but the password).
func (s *Server) createRunForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	// "Add a configuration" and "Remove" buttons (without JavaScript):
	// the form again, changed, with nothing started.
	if form.Has(ui.FieldAddConfig) || form.Has(ui.FieldRemoveConfig) {
		v := ui.NewRunForm(form, nil)
		v.Page = s.page(c, "New run")
		s.render(c, http.StatusOK, "new_run", v)
		return
	}
	for _, fc := range ui.FormConfigs(form) {
		if !fc.Blank() {
			s.createABForm(c, form, ui.FormConfigs(form))
			return
		}
	}
	// The form's own fields and the request's are checked alike, and
	// every bad field is shown beside itself.
	var errs rundoc.FieldErrors
	req, err := requestFromForm(form)
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	spec, err := s.prepare(&req)
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		v := ui.NewRunForm(form, formErrors(errs))
		v.Page = s.page(c, "New run")
		s.render(c, http.StatusBadRequest, "new_run", v)
		return
	}
	runs, err := s.createRuns(c.Request.Context(), req, spec)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", runs[0].ID))
}

// requestFromForm maps the form's fields (named after the runner's flags)
// onto an API request, so both paths validate alike. Fields of its own
// that do not parse are returned together (a runner.FieldErrors) with the
// request made of the rest.
func requestFromForm(form url.Values) (createRequest, error) {
	req := createRequest{Workload: form.Get("workload"), Label: form.Get("label"), Params: map[string]json.RawMessage{}}
	var errs rundoc.FieldErrors
	for _, f := range []struct {
		name string
		dst  *int
	}{{"repetitions", &req.Repetitions}, {"warmup_runs", &req.WarmupRuns}} {
		if v := strings.TrimSpace(form.Get(f.name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs.Add(f.name, "%q is not a whole number", v)
				continue
			}
			*f.dst = n
		}
	}
	switch form.Get("target") {
	case "", "embedded":
	case "bootstrap":
		req.Target = &targetRequest{BootstrapServer: form.Get("bootstrap-server"), SecurityProtocol: form.Get("security-protocol"),
			SASLMechanism: form.Get("sasl-mechanism"), SASLUsername: form.Get("sasl-username"), SASLPassword: form.Get("sasl-password")}
		if req.Target.SecurityProtocol == "PLAINTEXT" || req.Target.SecurityProtocol == "SSL" {
			req.Target.SASLMechanism, req.Target.SASLUsername, req.Target.SASLPassword = "", "", ""
		}
	default:
		errs.Add("target", "must be embedded or bootstrap")
	}
	for _, f := range rundoc.Flags() {
		if !applies(f, req.Workload) || f.Name == "bootstrap-server" || serverRefused[f.Name] {
			continue
		}
		vals := form[f.Name]
		var raw any
		switch f.Kind {
		case "bool":
			// The checkbox sends "true"; any other value goes to the
			// runner's parser, which names what it does not understand.
			if len(vals) == 0 {
				raw = false
			} else {
				raw = vals[0]
			}
		case "list":
			// The form sends a hidden "none" before the ticked kinds, so
			// nothing ticked arrives as "none" rather than as the default.
			if len(vals) == 0 {
				continue
			}
			raw = vals
		case "props":
			var kvs []string
			for _, v := range vals {
				for _, line := range strings.Split(v, "\n") {
					if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
						kvs = append(kvs, line)
					}
				}
			}
			if len(kvs) == 0 {
				continue
			}
			raw = kvs
		default:
			if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
				continue // empty: the default
			}
			raw = strings.TrimSpace(vals[0])
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return req, fmt.Errorf("server: encode form field %s: %w", f.Name, err)
		}
		req.Params[f.Name] = b
	}
	return req, errs.Err()
}

func applies(f rundoc.Flag, workload string) bool {
	for _, w := range f.Workloads {
		if string(w) == workload {
			return true
		}
	}
	return false
}

func (s *Server) runPage(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	s.cachedRender(c, fmt.Sprintf("run/%d", id), func(csrf string) (string, any, error) {
		run, err := s.store.GetRun(ctx, id)
		if err != nil {
			return "", nil, err
		}
		pos, err := s.store.QueuePosition(ctx, id)
		if err != nil {
			return "", nil, err
		}
		v, err := ui.NewRunView(run, pos)
		if err != nil {
			return "", nil, err
		}
		if run.Final() {
			reports, err := s.store.ReportsUsingRun(ctx, id)
			if err != nil {
				return "", nil, err
			}
			v.SetUsedBy(reports)
		}
		v.Page = ui.Page{Title: fmt.Sprintf("Run %d", id), CSRF: csrf}
		return "run", v, nil
	})
}

// deleteRunForm handles the run page's Delete form: the same deletion as
// DELETE /api/runs/{id}, then the runs list. A run a report uses, or one
// not finished, is refused with 409 and a page saying why.
func (s *Server) deleteRunForm(c *gin.Context) {
	if _, ok := s.postedForm(c); !ok {
		return
	}
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.deleteRun(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/")
}

// deleteRun deletes a finished run no report uses, then its files.
func (s *Server) deleteRun(ctx context.Context, id uint) error {
	if err := s.store.DeleteRun(ctx, id); err != nil {
		return err
	}
	s.removeRunFiles(id)
	return nil
}

// runFilesDir is where a run's spec, result, profiles and logs are kept.
func (s *Server) runFilesDir(id uint) string {
	return filepath.Join(s.cfg.DataDir, "runs", strconv.FormatUint(uint64(id), 10))
}

// removeRunFiles removes a deleted run's files. The run is gone from the
// store already, so a failure is only logged.
func (s *Server) removeRunFiles(id uint) {
	if err := os.RemoveAll(s.runFilesDir(id)); err != nil {
		s.log.Warn("delete run files", "run", id, "err", err)
	}
}

func (s *Server) cancelRunForm(c *gin.Context) {
	if !s.checkCSRF(c) {
		return
	}
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.store.GetRun(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.runs.Cancel(c.Request.Context(), id); err != nil && !errors.Is(err, store.ErrConflict) {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
}

// --- API ---

// apiRun is a run as the API shows it.
type apiRun struct {
	ID            uint            `json:"id"`
	URL           string          `json:"url"`
	Label         string          `json:"label"`
	Workload      rundoc.Workload `json:"workload"`
	Status        rundoc.Status   `json:"status"`
	Source        rundoc.Source   `json:"source"`
	Error         string          `json:"error"`
	Complete      bool            `json:"complete"`
	Spec          json.RawMessage `json:"spec"`
	Fingerprint   string          `json:"fingerprint"`
	GroupID       string          `json:"group_id,omitempty"`
	GroupIndex    int             `json:"group_index,omitempty"`
	Warmup        bool            `json:"warmup,omitempty"`
	ABBatch       string          `json:"ab_batch,omitempty"`
	QueuePosition int             `json:"queue_position,omitempty"`
	RecordsPerSec *float64        `json:"records_per_sec"`
	MBPerSec      *float64        `json:"mb_per_sec"`
	P99Ms         *float64        `json:"p99_ms"`
	CreatedAt     time.Time       `json:"created_at"`
	StartedAt     *time.Time      `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
	// Only on a single run.
	Metrics     []apiMetric          `json:"metrics,omitempty"`
	Series      []rundoc.SeriesPoint `json:"series,omitempty"`
	Profiles    []apiProfile         `json:"profiles,omitempty"`
	Environment json.RawMessage      `json:"environment,omitempty"`
	Measurement json.RawMessage      `json:"measurement,omitempty"`
	Output      string               `json:"output,omitempty"`
}

type apiMetric struct {
	Name   string        `json:"name"`
	Value  float64       `json:"value"`
	Unit   string        `json:"unit"`
	Better rundoc.Better `json:"better"`
	Help   string        `json:"help,omitempty"`
}

type apiProfile struct {
	ID       uint               `json:"id"`
	Role     rundoc.ProfileRole `json:"role"`
	Kind     rundoc.ProfileKind `json:"kind"`
	Bytes    int64              `json:"bytes"`
	Samples  int64              `json:"samples"`
	SHA256   string             `json:"sha256"`
	Download string             `json:"download"`
}

func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func toAPIRun(r *rundoc.Run, full bool) apiRun {
	a := apiRun{ID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Label: r.Label, Workload: r.Workload, Status: r.Status,
		Source: r.Source, Error: r.Error, Complete: r.Complete, Spec: rawJSON(r.Spec), Fingerprint: r.Fingerprint,
		GroupID: r.GroupID, GroupIndex: r.GroupIndex, Warmup: r.Warmup, ABBatch: r.ABBatch, RecordsPerSec: r.RecordsPerSec, MBPerSec: r.MBPerSec,
		P99Ms: r.P99Ms, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
	if !full {
		return a
	}
	a.Metrics = []apiMetric{}
	for _, m := range r.Metrics {
		a.Metrics = append(a.Metrics, apiMetric{m.Name, m.Value, m.Unit, m.Better, m.Help})
	}
	a.Series = append([]rundoc.SeriesPoint{}, r.Series...)
	a.Profiles = toAPIProfiles(r.Profiles)
	// The documents as the run stored them, whichever kbench wrote them.
	a.Environment, a.Measurement, a.Output = rawJSON(r.Documents.Environment), rawJSON(r.Documents.Measurement), r.Output
	return a
}

func toAPIProfiles(ps []rundoc.Profile) []apiProfile {
	out := []apiProfile{}
	for _, p := range ps {
		out = append(out, apiProfile{ID: p.ID, Role: p.Role, Kind: p.Kind, Bytes: p.Bytes, Samples: p.Samples, SHA256: p.SHA256,
			Download: fmt.Sprintf("/api/profiles/%d/download", p.ID)})
	}
	return out
}

func (s *Server) apiListRuns(c *gin.Context) {
	f := store.RunFilter{Workload: c.Query("workload"), Label: c.Query("label"), Status: c.Query("status"), GroupID: c.Query("group"), Limit: 50}
	for _, q := range []struct {
		name string
		dst  *int
	}{{"limit", &f.Limit}, {"offset", &f.Offset}} {
		if v := c.Query(q.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				s.fail(c, badInput(q.name, "must be a whole number ≥ 0"))
				return
			}
			*q.dst = n
		}
	}
	runs, total, err := s.store.ListRuns(c.Request.Context(), f)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(runs))
	for i := range runs {
		out = append(out, toAPIRun(&runs[i], false))
	}
	c.JSON(http.StatusOK, gin.H{"runs": out, "total": total, "offset": f.Offset, "limit": f.Limit})
}

func (s *Server) apiCreateRuns(c *gin.Context) {
	var req createRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Configs != nil {
		s.apiCreateAB(c, &req)
		return
	}
	spec, err := s.prepare(&req)
	if err != nil {
		s.fail(c, err)
		return
	}
	runs, err := s.createRuns(c.Request.Context(), req, spec)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(runs))
	for _, r := range runs {
		d := r.Doc()
		out = append(out, toAPIRun(&d, false))
	}
	body := gin.H{"runs": out}
	if len(out) == 1 {
		body["id"], body["status"], body["url"] = out[0].ID, out[0].Status, out[0].URL
	} else {
		body["group_id"] = runs[0].GroupID
	}
	c.JSON(http.StatusCreated, body)
}

func (s *Server) apiGetRun(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	run, err := s.store.GetRun(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	a := toAPIRun(run, true)
	if run.Status == rundoc.StatusQueued {
		a.QueuePosition, _ = s.store.QueuePosition(c.Request.Context(), id)
	}
	c.JSON(http.StatusOK, a)
}

func (s *Server) apiCancelRun(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.store.GetRun(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.runs.Cancel(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"id": id, "canceling": true})
}

// apiDeleteRun answers DELETE /api/runs/{id}: 204, or 409 when the run is
// queued, running or used by a report (reports are recomputed from their
// runs, so their runs stay). The run's files go with it.
func (s *Server) apiDeleteRun(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.deleteRun(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) apiListProfiles(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ps, err := s.store.ListProfiles(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"profiles": toAPIProfiles(ps)})
}

func (s *Server) downloadProfile(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.store.GetProfile(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Content-Disposition", `attachment; filename="`+profileFileName(p)+`"`)
	c.Data(http.StatusOK, "application/octet-stream", p.Data)
}
