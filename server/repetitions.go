package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// Adding repetitions to a comparison runs each column's configuration N
// more times, interleaved as an A/B submission is (abtest.go), in a new
// A/B batch, the new runs appended to the columns' repetition groups: the
// comparison grows on both sides at once. A column's configuration is the
// spec stored with its runs. Runs that cannot be run again are named with
// why, and nothing is queued: imported runs (no spec), a column whose runs
// differ in configuration, a spec that needs a secret the server no longer
// holds (secrets stay in memory only until a run starts), a target
// --allow-target no longer allows, a run in no repetition group when
// columns are by group.

// repetitionsRequest is the body of POST /api/compare/repetitions: the
// comparison as runs and by (group by default), or as the comparison
// page's query ("runs=1,2,3&by=label", with or without "/compare?"), and
// how many repetitions of each column to add.
type repetitionsRequest struct {
	Runs  []uint `json:"runs"`
	By    string `json:"by"`
	Query string `json:"query"`
	N     int    `json:"n"`
}

// refusal is a run whose configuration cannot be run again, and why.
type refusal struct {
	Run    uint   `json:"run"`
	Reason string `json:"reason"`
}

// rerunError refuses to add repetitions, naming every run that cannot be
// run again. It is a conflict (409): the request is well formed, but the
// runs' state does not allow it; fail adds the list as "not_rerunnable".
// A request naming imported runs is bad input instead (400, field "runs"):
// no state of the server would ever let them run.
type rerunError struct{ refused []refusal }

// reasonImported is why an imported run cannot be run again.
const reasonImported = "imported: kbench has no configuration of it to run again"

// imported reports whether any refused run is an imported one.
func (e *rerunError) imported() bool {
	for _, r := range e.refused {
		if r.Reason == reasonImported {
			return true
		}
	}
	return false
}

// Error names the runs by reason, in the order they come.
func (e *rerunError) Error() string {
	var reasons []string
	runs := map[string][]string{}
	for _, r := range e.refused {
		if runs[r.Reason] == nil {
			reasons = append(reasons, r.Reason)
		}
		runs[r.Reason] = append(runs[r.Reason], "#"+strconv.FormatUint(uint64(r.Run), 10))
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = "run " + strings.Join(runs[why], ", ") + ": " + why
		if len(runs[why]) > 1 {
			parts[i] = "runs " + strings.Join(runs[why], ", ") + ": " + why
		}
	}
	return "cannot add repetitions: " + strings.Join(parts, "; ")
}

func (e *rerunError) Is(target error) bool { return target == store.ErrConflict && !e.imported() }

// As makes a refusal of imported runs an *inputError on field "runs", so
// that classify answers it 400 naming the field.
func (e *rerunError) As(target any) bool {
	if ie, ok := target.(**inputError); ok && e.imported() {
		*ie = &inputError{Field: "runs", Msg: e.Error()}
		return true
	}
	return false
}

// notRerunnable is the list a rerunError names, for an API answer.
func notRerunnable(err error) ([]refusal, bool) {
	var re *rerunError
	if errors.As(err, &re) {
		return re.refused, true
	}
	return nil, false
}

// parseRepetitions checks a request into the comparison it names,
// reporting every bad field.
func parseRepetitions(req repetitionsRequest) (ui.CompareQuery, error) {
	var errs rundoc.FieldErrors
	var q ui.CompareQuery
	byField := "by"
	if req.Query != "" {
		byField = "query"
		if req.Runs != nil || req.By != "" {
			errs.Add("query", "give the comparison's query, or runs and by, not both")
		} else {
			raw := req.Query
			if i := strings.IndexByte(raw, '?'); i >= 0 {
				raw = raw[i+1:]
			}
			vals, err := url.ParseQuery(raw)
			if err == nil {
				q, err = parseCompareQuery(vals)
			}
			if err != nil {
				errs.Add("query", "%v", err)
			}
		}
	} else {
		parts := make([]string, len(req.Runs))
		for i, id := range req.Runs {
			parts[i] = strconv.FormatUint(uint64(id), 10)
		}
		ids, err := parseRunIDs([]string{strings.Join(parts, ",")})
		if err := errs.Append(asFieldError(err)); err != nil {
			return q, err
		}
		by := req.By
		if by == "" {
			by = compare.ByGroup
		}
		by, err = parseBy(by)
		if err := errs.Append(asFieldError(err)); err != nil {
			return q, err
		}
		q = ui.CompareQuery{Runs: ids, By: by}
	}
	if q.By == compare.ByChange && !errs.Has(byField) {
		errs.Add(byField, "compares the runs before and after a change point: repetitions added now would belong to neither")
	}
	if q.By == compare.ByRun && !errs.Has(byField) {
		errs.Add(byField, "compares by run: add repetitions to columns by group or by label (by run, a column is one run)")
	}
	if req.N < 1 || req.N > maxRepetitions {
		errs.Add("n", "must be between 1 and %d, got %d", maxRepetitions, req.N)
	}
	return q, errs.Err()
}

// planRepetitions makes one side per column of runs (formed by by) to
// queue more repetitions of, or names every run that cannot be run again.
func (s *Server) planRepetitions(runs []rundoc.Run, by string) ([]abSide, []refusal) {
	var sides []abSide
	var refused []refusal
	for _, col := range compare.Columns(runs, by) {
		side, bad := s.planColumn(col, by)
		if len(bad) > 0 {
			refused = append(refused, bad...)
			continue
		}
		sides = append(sides, side)
	}
	return sides, refused
}

// planColumn is planRepetitions for one column.
func (s *Server) planColumn(col compare.Column, by string) (abSide, []refusal) {
	var measured []rundoc.Run
	for _, r := range col.Runs {
		if !r.Warmup {
			measured = append(measured, r)
		}
	}
	if len(measured) == 0 {
		measured = col.Runs
	}
	all := func(format string, args ...any) []refusal {
		out := make([]refusal, len(measured))
		for i, r := range measured {
			out[i] = refusal{r.ID, fmt.Sprintf(format, args...)}
		}
		return out
	}
	var bad []refusal
	for _, r := range measured {
		if isImported(&r) {
			bad = append(bad, refusal{r.ID, reasonImported})
		}
	}
	if len(bad) > 0 {
		return abSide{}, bad
	}
	first := measured[0]
	if by == compare.ByGroup && first.GroupID == "" {
		return abSide{}, all("in no repetition group: compare by label to add repetitions to it")
	}
	for _, r := range measured[1:] {
		if r.Spec != first.Spec {
			bad = append(bad, refusal{r.ID, fmt.Sprintf("configuration differs from run #%d's in column %s: compare by group to repeat each", first.ID, col.Name)})
		}
	}
	if len(bad) > 0 {
		return abSide{}, bad
	}
	file, err := rundoc.ParseSpecFile([]byte(first.Spec))
	if err != nil {
		return abSide{}, all("stored configuration unreadable: %v", err)
	}
	spec, err := rundoc.SpecFromParams(file.Workload, file.Params, s.validate)
	if err != nil {
		return abSide{}, all("stored configuration no longer accepted: %v", err)
	}
	if err := s.checkTargets(spec.Targets()); err != nil {
		var ie *inputError
		if !errors.As(err, &ie) {
			return abSide{}, all("target cannot be checked: %v", err)
		}
		return abSide{}, all("target no longer allowed: %s", ie.Msg)
	}
	var secrets map[string]string
	if needs := redactedProps(spec); len(needs) > 0 {
		var same []uint
		for _, r := range col.Runs {
			if r.Spec == first.Spec {
				same = append(same, r.ID)
			}
		}
		if secrets = s.runs.HeldSecrets(same, needs); secrets == nil {
			return abSide{}, all("needs a secret the server no longer holds (%s): secrets stay in memory only until a run starts; submit the configuration again with it",
				strings.Join(needs, ", "))
		}
	}
	group := first.GroupID
	if by == compare.ByLabel {
		group = ""
		for _, r := range measured {
			switch {
			case r.GroupID == "" || r.GroupID == group:
			case group == "":
				group = r.GroupID
			default:
				group = "-" // several: the new runs get a group of their own
			}
		}
		if group == "" || group == "-" {
			group = randomID(8)
		}
	}
	return abSide{label: first.Label, group: group, workload: file.Workload, specJSON: first.Spec, fingerprint: first.Fingerprint, secrets: secrets,
		meta: repeatedMeta(&first), queue: first.Queue}, nil
}

// isImported reports whether r was imported: kbench has no spec of it to
// run again.
func isImported(r *rundoc.Run) bool { return r.Source == rundoc.SourceImported || r.Spec == "" }

// redactedProps are the properties of spec whose secret the store does
// not have, sorted.
func redactedProps(spec rundoc.Spec) []string {
	var out []string
	for k, v := range spec.Props {
		if strings.Contains(v, rundoc.Redacted) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// addRepetitions queues n more repetitions of each column of q and returns
// the new runs, their A/B batch and the comparison with them.
func (s *Server) addRepetitions(ctx context.Context, q ui.CompareQuery, n int) ([]*store.Run, string, string, error) {
	runs, err := s.loadRuns(ctx, q.Runs)
	if err != nil {
		return nil, "", "", err
	}
	cols := len(compare.Columns(runs, q.By))
	if total := len(q.Runs) + n*cols; total > maxCompareRuns {
		return nil, "", "", badInput("n", "%d more runs of each of %d columns would make the comparison %d runs; at most %d can be compared",
			n, cols, total, maxCompareRuns)
	}
	sides, refused := s.planRepetitions(runs, q.By)
	if len(refused) > 0 {
		return nil, "", "", &rerunError{refused}
	}
	if err := s.admitRuns(ctx, "n", n*len(sides), fmt.Sprintf("%d more runs of each of %d columns make %d runs", n, len(sides), n*len(sides))); err != nil {
		return nil, "", "", err
	}
	batch := randomID(8)
	added, err := s.queueInterleaved(ctx, batch, sides, 0, n)
	if err != nil {
		return nil, "", "", err
	}
	grown := q
	grown.Runs = slices.Clone(q.Runs)
	for _, r := range added {
		grown.Runs = append(grown.Runs, r.ID)
	}
	return added, batch, ui.CompareURL(grown), nil
}

// apiAddRepetitions answers POST /api/compare/repetitions with 201 {"runs"
// (the new ones, in queue order), "ab_batch", "compare_url"} and Location
// the grown comparison; 409 {"error", "not_rerunnable": [{"run",
// "reason"}]} when runs cannot be run again.
func (s *Server) apiAddRepetitions(c *gin.Context) {
	var req repetitionsRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	q, err := parseRepetitions(req)
	if err != nil {
		s.fail(c, err)
		return
	}
	added, batch, u, err := s.addRepetitions(c.Request.Context(), q, req.N)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(added))
	for _, r := range added {
		d := r.Doc()
		out = append(out, toAPIRun(&d, false))
	}
	c.Header("Location", u)
	c.JSON(http.StatusCreated, gin.H{"runs": out, "ab_batch": batch, "compare_url": u})
}

// addRepetitionsForm handles the comparison page's "Add repetitions"
// button: 303 to the grown comparison.
func (s *Server) addRepetitionsForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	ids, err := parseRunIDs(form["runs"])
	if err != nil {
		s.fail(c, err)
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(form.Get("n")))
	if err != nil {
		s.fail(c, badInput("n", "%q is not a whole number", form.Get("n")))
		return
	}
	q, err := parseRepetitions(repetitionsRequest{Runs: ids, By: form.Get("by"), N: n})
	if err != nil {
		s.fail(c, err)
		return
	}
	q.HideUnchanged = form.Get("hide_unchanged") == "1"
	_, _, u, err := s.addRepetitions(c.Request.Context(), q, n)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, u)
}

// addRepetitionsView is the comparison page's offer to add repetitions to
// q's columns, or why it cannot; suggested is the table's own count of the
// repetitions its undecided changes need.
func (s *Server) addRepetitionsView(q ui.CompareQuery, runs []rundoc.Run, suggested int, csrf string) ui.AddRepetitionsView {
	var refused []ui.RefusedRun
	columns := 0
	if q.By == compare.ByGroup || q.By == compare.ByLabel {
		columns = len(compare.Columns(runs, q.By))
		_, bad := s.planRepetitions(runs, q.By)
		byID := map[uint]*rundoc.Run{}
		for i := range runs {
			byID[runs[i].ID] = &runs[i]
		}
		for _, b := range bad {
			link := ui.RunLink{ID: b.Run, URL: fmt.Sprintf("/runs/%d", b.Run), Text: fmt.Sprintf("#%d", b.Run)}
			if r := byID[b.Run]; r != nil && r.Label != "" {
				link.Text += " " + r.Label
			}
			refused = append(refused, ui.RefusedRun{Link: link, Reason: b.Reason})
		}
	} else {
		// By run nothing is offered, but the way to an offer (compare by
		// label or group) leads nowhere for imported runs: say so instead.
		for i := range runs {
			if r := &runs[i]; isImported(r) {
				link := ui.RunLink{ID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Text: fmt.Sprintf("#%d", r.ID)}
				if r.Label != "" {
					link.Text += " " + r.Label
				}
				refused = append(refused, ui.RefusedRun{Link: link, Reason: reasonImported})
			}
		}
	}
	v := ui.NewAddRepetitions(q, columns, refused, maxCompareRuns, maxRepetitions, suggested)
	v.CSRF = csrf
	return v
}

// repeatedMeta is the metadata of runs added to a column: its first run's
// tags, but for a version that run recorded itself (the kafka-go of its
// build, see runner's resultMeta): the new runs record their own.
func repeatedMeta(first *rundoc.Run) map[string]string {
	meta := maps.Clone(first.Meta)
	if v, ok := meta[rundoc.MetaVersion]; ok && first.Environment != nil && v == first.Environment.KafkaGoVersion {
		delete(meta, rundoc.MetaVersion)
	}
	return meta
}
