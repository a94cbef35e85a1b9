package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/runner/kafkasec"
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

// prepare validates a request into a spec. Errors name the field.
func (s *Server) prepare(req *createRequest) (runner.Spec, error) {
	req.Label = strings.TrimSpace(req.Label)
	switch {
	case req.Workload != runner.Producer && req.Workload != runner.Consumer && req.Workload != runner.Writepath:
		return runner.Spec{}, badInput("workload", "must be producer, consumer or writepath, got %q", req.Workload)
	case len(req.Label) > maxLabel:
		return runner.Spec{}, badInput("label", "must be at most %d characters", maxLabel)
	case req.Repetitions < 0 || req.Repetitions > maxRepetitions:
		return runner.Spec{}, badInput("repetitions", "must be between 1 and %d, got %d", maxRepetitions, req.Repetitions)
	case req.WarmupRuns < 0 || req.WarmupRuns > maxWarmupRuns:
		return runner.Spec{}, badInput("warmup_runs", "must be between 0 and %d, got %d", maxWarmupRuns, req.WarmupRuns)
	}
	if req.Repetitions == 0 {
		req.Repetitions = 1
	}
	for k := range req.Params {
		if serverRefused[k] {
			return runner.Spec{}, badInput(k, "is not accepted by the server: it names a file on the server's disk")
		}
	}
	spec, err := runner.SpecFromParams(req.Workload, req.Params)
	if err != nil {
		return spec, err
	}
	if t := req.Target; t != nil {
		if err := applyTarget(&spec, t); err != nil {
			return spec, err
		}
	}
	for _, addr := range spec.Targets() {
		if !s.targetAllowed(addr) {
			return spec, badInput("bootstrap-server", "%s is not an allowed target; start kbench serve with --allow-target '%s' to allow it", addr, addr)
		}
	}
	return spec, nil
}

// applyTarget moves the target fields into the spec as the Kafka
// properties they stand for, then validates again.
func applyTarget(spec *runner.Spec, t *targetRequest) error {
	if strings.TrimSpace(t.BootstrapServer) == "" {
		return badInput("bootstrap-server", "is required for a bootstrap target")
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
	if err := spec.Validate(); err != nil {
		var fe *runner.FieldError
		if errors.As(err, &fe) && strings.HasSuffix(fe.Field, "-props") {
			// Point at the target field the user filled in.
			for prop, field := range map[string]string{"sasl.username": "sasl-username", "sasl.password": "sasl-password",
				"sasl.mechanism": "sasl-mechanism", "security.protocol": "security-protocol"} {
				if strings.Contains(fe.Msg, prop) {
					return badInput(field, "%s", fe.Msg)
				}
			}
		}
		return err
	}
	return nil
}

func (s *Server) targetAllowed(addr string) bool {
	for _, p := range s.cfg.AllowTargets {
		if ok, _ := path.Match(p, addr); ok {
			return true
		}
	}
	return false
}

// specNeedsSecrets reports whether a stored spec had secrets removed.
func specNeedsSecrets(spec string) bool { return strings.Contains(spec, kafkasec.Redacted) }

// createRuns stores the runs of a request (warm-up runs first, then the
// measured repetitions) and queues them.
func (s *Server) createRuns(ctx context.Context, req createRequest, spec runner.Spec) ([]*store.Run, error) {
	_, secrets := runner.SplitSecrets(spec)
	specJSON, err := json.Marshal(runner.SpecFile{Workload: spec.Workload, Params: spec.Redacted().Params()})
	if err != nil {
		return nil, fmt.Errorf("server: encode spec: %w", err)
	}
	total := req.WarmupRuns + req.Repetitions
	group := ""
	if total > 1 {
		group = randomID(8)
	}
	runs := make([]*store.Run, 0, total)
	for i := 0; i < total; i++ {
		r := &store.Run{Label: req.Label, Workload: spec.Workload, Status: store.StatusQueued, Source: store.SourceLaunched,
			Spec: string(specJSON), Fingerprint: spec.Fingerprint(), GroupID: group}
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
		s.queue.enqueue(r.ID, secrets)
	}
	return runs, nil
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
			GroupID: q.Group, Offset: q.Offset(), Limit: q.PerPage})
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
	req, err := requestFromForm(form)
	var spec runner.Spec
	if err == nil {
		spec, err = s.prepare(&req)
	}
	if err != nil {
		status, field, msg := classify(err)
		if status != http.StatusBadRequest {
			s.fail(c, err)
			return
		}
		// The form shows the field's name itself.
		v := ui.NewRunForm(form, map[string]string{field: strings.TrimPrefix(msg, field+": ")})
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
// onto an API request, so both paths validate alike.
func requestFromForm(form url.Values) (createRequest, error) {
	req := createRequest{Workload: form.Get("workload"), Label: form.Get("label"), Params: map[string]json.RawMessage{}}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"repetitions", &req.Repetitions}, {"warmup_runs", &req.WarmupRuns}} {
		if v := strings.TrimSpace(form.Get(f.name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return req, badInput(f.name, "%q is not a whole number", v)
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
		return req, badInput("target", "must be embedded or bootstrap")
	}
	for _, f := range runner.Flags() {
		if !applies(f, req.Workload) || f.Name == "bootstrap-server" || serverRefused[f.Name] {
			continue
		}
		vals := form[f.Name]
		var raw any
		switch f.Kind {
		case "bool":
			raw = len(vals) > 0 && vals[0] == "true"
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
		b, _ := json.Marshal(raw)
		req.Params[f.Name] = b
	}
	return req, nil
}

func applies(f runner.Flag, workload string) bool {
	for _, w := range f.Workloads {
		if w == workload {
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
		v.Page = ui.Page{Title: fmt.Sprintf("Run %d", id), CSRF: csrf}
		return "run", v, nil
	})
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
	if err := s.queue.cancel(c.Request.Context(), id); err != nil && !errors.Is(err, store.ErrConflict) {
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
	Workload      string          `json:"workload"`
	Status        string          `json:"status"`
	Source        string          `json:"source"`
	Error         string          `json:"error"`
	Complete      bool            `json:"complete"`
	Spec          json.RawMessage `json:"spec"`
	Fingerprint   string          `json:"fingerprint"`
	GroupID       string          `json:"group_id,omitempty"`
	GroupIndex    int             `json:"group_index,omitempty"`
	Warmup        bool            `json:"warmup,omitempty"`
	QueuePosition int             `json:"queue_position,omitempty"`
	RecordsPerSec *float64        `json:"records_per_sec"`
	MBPerSec      *float64        `json:"mb_per_sec"`
	P99Ms         *float64        `json:"p99_ms"`
	CreatedAt     time.Time       `json:"created_at"`
	StartedAt     *time.Time      `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
	// Only on a single run.
	Metrics     []apiMetric          `json:"metrics,omitempty"`
	Series      []runner.SeriesPoint `json:"series,omitempty"`
	Profiles    []apiProfile         `json:"profiles,omitempty"`
	Environment json.RawMessage      `json:"environment,omitempty"`
	Measurement json.RawMessage      `json:"measurement,omitempty"`
	Output      string               `json:"output,omitempty"`
}

type apiMetric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Better string  `json:"better"`
	Help   string  `json:"help,omitempty"`
}

type apiProfile struct {
	ID       uint   `json:"id"`
	Role     string `json:"role"`
	Kind     string `json:"kind"`
	Bytes    int64  `json:"bytes"`
	Samples  int64  `json:"samples"`
	SHA256   string `json:"sha256"`
	Download string `json:"download"`
}

func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func toAPIRun(r *store.Run, full bool) apiRun {
	a := apiRun{ID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Label: r.Label, Workload: r.Workload, Status: r.Status,
		Source: r.Source, Error: r.Error, Complete: r.Complete, Spec: rawJSON(r.Spec), Fingerprint: r.Fingerprint,
		GroupID: r.GroupID, GroupIndex: r.GroupIndex, Warmup: r.Warmup, RecordsPerSec: r.RecordsPerSec, MBPerSec: r.MBPerSec,
		P99Ms: r.P99Ms, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
	if !full {
		return a
	}
	a.Metrics = []apiMetric{}
	for _, m := range r.Metrics {
		a.Metrics = append(a.Metrics, apiMetric{m.Name, m.Value, m.Unit, m.Better, m.Help})
	}
	a.Series = []runner.SeriesPoint{}
	for _, p := range r.Series {
		a.Series = append(a.Series, runner.SeriesPoint{T: p.T, Records: p.Records, Bytes: p.Bytes, RecordsPerSec: p.RecordsPerSec,
			MBPerSec: p.MBPerSec, LatencyAvgMs: p.LatencyAvgMs, LatencyMaxMs: p.LatencyMaxMs, CPUPercent: p.CPUPercent})
	}
	a.Profiles = toAPIProfiles(r.Profiles)
	a.Environment, a.Measurement, a.Output = rawJSON(r.Environment), rawJSON(r.Measurement), r.Output
	return a
}

func toAPIProfiles(ps []store.Profile) []apiProfile {
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
		out = append(out, toAPIRun(r, false))
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
	if run.Status == store.StatusQueued {
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
	if err := s.queue.cancel(c.Request.Context(), id); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"id": id, "canceling": true})
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
