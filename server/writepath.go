package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// The write-path lab's preset runs every write strategy with the same
// parameters, interleaved as an A/B submission is (abtest.go: gather,
// per-buffer, …, then the other way round) so that noise hits all alike;
// its runs' A/B batch is "wp-<batch>". Runs are labelled with their strategy; the runs
// of one strategy form a repetition group "wp-<batch>-<strategy>", which
// is how /writepath/<batch> finds them again.

// writepathPreset is the body of POST /api/presets/writepath; every field
// is optional.
type writepathPreset struct {
	RecordsPerRequest *int  `json:"records-per-request"`
	RecordSize        *int  `json:"record-size"`
	Requests          *int  `json:"requests"`
	Repetitions       *int  `json:"repetitions"`
	Sink              *bool `json:"sink"`
	InFlight          *int  `json:"in-flight"`
	// Duration is the measured seconds of each run; without it and
	// without Requests, ui.WPDefaultSeconds.
	Duration *float64 `json:"duration"`
}

// Preset defaults and limits. Runs measure for ui.WPDefaultSeconds unless
// a number of requests is given: a fixed count finished in 0.4–1 s here,
// a window too short to trust (compare.MinWindowSeconds).
const (
	wpDefaultRecords     = 16
	wpDefaultRecordSize  = 256
	wpDefaultRepetitions = 3
	wpDefaultInFlight    = 5
	wpMaxRepetitions     = 10
	wpGroupPrefix        = "wp-"
)

// wpBatchRE matches a batch id as the preset makes them.
var wpBatchRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// wpGroup is the repetition group of one strategy's runs in a batch.
func wpGroup(batch, strategy string) string { return wpGroupPrefix + batch + "-" + strategy }

// findJDK says whether the Java strategies can run here: nil when java,
// javac and jfr are on PATH, else jdk.Find's error saying what to
// install. Tests replace it.
var findJDK = func() error {
	_, err := jdk.Find("")
	return err
}

// presetStrategies are the strategies the preset runs: the Go ones, and
// the Java ones when this machine has a JDK (noJava says why not).
func presetStrategies() (strategies []string, noJava error) {
	strategies = rundoc.GoWritepathStrategies()
	if noJava = findJDK(); noJava == nil {
		strategies = append(strategies, rundoc.JavaWritepathStrategies()...)
	}
	return strategies, noJava
}

// presetOrder is the order of the preset's fields on its form.
var presetOrder = []string{ui.WPFieldRecords, ui.WPFieldRecordSize, ui.WPFieldDuration, ui.WPFieldRequests, ui.WPFieldInFlight, ui.WPFieldRepetitions, ui.WPFieldSink}

// presetSpecs validates a preset into its repetitions and one spec per
// strategy, reporting every bad field (a rundoc.FieldErrors).
func (s *Server) presetSpecs(p writepathPreset, strategies []string) (int, []rundoc.Spec, error) {
	var errs rundoc.FieldErrors
	reps := intOr(p.Repetitions, wpDefaultRepetitions)
	if reps < 1 || reps > wpMaxRepetitions {
		errs.Add("repetitions", "must be between 1 and %d, got %d", wpMaxRepetitions, reps)
	}
	sink := true
	if p.Sink != nil {
		sink = *p.Sink
	}
	// 0 requests would mean the runner's default, not none.
	if p.Requests != nil && *p.Requests < 1 {
		errs.Add("requests", "must be at least 1, got %d", *p.Requests)
	}
	num := func(n int) json.RawMessage { return json.RawMessage(strconv.Itoa(n)) }
	specs := make([]rundoc.Spec, len(strategies))
	for i, strategy := range strategies {
		params := map[string]json.RawMessage{
			"strategy":            json.RawMessage(strconv.Quote(strategy)),
			"records-per-request": num(intOr(p.RecordsPerRequest, wpDefaultRecords)),
			"record-size":         num(intOr(p.RecordSize, wpDefaultRecordSize)),
			"in-flight":           num(intOr(p.InFlight, wpDefaultInFlight)),
			"sink":                json.RawMessage(strconv.FormatBool(sink)),
		}
		// A count or a duration; both given is refused by the
		// workload's own check, naming duration.
		if p.Requests != nil {
			params["requests"] = num(*p.Requests)
		}
		switch {
		case p.Duration != nil:
			params["duration"] = json.RawMessage(strconv.FormatFloat(*p.Duration, 'g', -1, 64))
		case p.Requests == nil:
			params["duration"] = json.RawMessage(strconv.FormatFloat(ui.WPDefaultSeconds, 'g', -1, 64))
		}
		req := createRequest{Workload: string(rundoc.Writepath), Label: strategy, Repetitions: 1, Params: params}
		spec, err := s.prepare(&req)
		// The strategies share every parameter but the strategy, so
		// their errors are the same ones: each field is reported once.
		if err := errs.Append(err); err != nil {
			return 0, nil, err
		}
		specs[i] = spec
	}
	errs.SortBy(presetOrder)
	return reps, specs, errs.Err()
}

// createWritepathPreset validates the preset and stores and queues its
// runs; it returns the batch id and the runs in creation order.
func (s *Server) createWritepathPreset(ctx context.Context, p writepathPreset) (string, []*store.Run, error) {
	strategies, _ := presetStrategies()
	reps, specs, err := s.presetSpecs(p, strategies)
	if err != nil {
		return "", nil, err
	}
	batch := randomID(6)
	sides := make([]abSide, len(strategies))
	for i, strategy := range strategies {
		if sides[i], err = newSide(strategy, wpGroup(batch, strategy), specs[i]); err != nil {
			return "", nil, err
		}
	}
	n := len(sides) * reps
	if err := s.admitRuns(ctx, "repetitions", n, strconv.Itoa(len(sides))+" strategies × "+strconv.Itoa(reps)+" repetitions make "+strconv.Itoa(n)+" runs"); err != nil {
		return "", nil, err
	}
	runs, err := s.queueInterleaved(ctx, wpGroupPrefix+batch, sides, 0, reps)
	if err != nil {
		return "", nil, err
	}
	return batch, runs, nil
}

// apiWritepathPreset answers POST /api/presets/writepath with 201
// {"batch", "runs", "compare_url"}.
func (s *Server) apiWritepathPreset(c *gin.Context) {
	var p writepathPreset
	if err := decodeJSON(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	batch, runs, err := s.createWritepathPreset(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(runs))
	for _, r := range runs {
		d := r.Doc()
		out = append(out, toAPIRun(&d, false))
	}
	u := ui.WritepathResultURL(batch)
	c.Header("Location", u)
	c.JSON(http.StatusCreated, client.Created{Batch: batch, Runs: out, CompareURL: u})
}

// wpPastBatches is how many earlier batches /writepath lists.
const wpPastBatches = 20

// writepathPage is /writepath: what the lab measures, the preset's form
// and the earlier batches, newest first.
func (s *Server) writepathPage(c *gin.Context) {
	v := ui.NewWritepathForm(url.Values{}, nil)
	if err := s.pastBatches(c.Request.Context(), &v); err != nil {
		s.fail(c, err)
		return
	}
	v.SetStrategies(presetStrategies())
	v.Page = s.page(c, v.Page.Title)
	s.render(c, http.StatusOK, "writepath", v)
}

// pastBatches lists the lab's newest batches on its page, each with the
// parameters of its first run.
func (s *Server) pastBatches(ctx context.Context, v *ui.WritepathView) error {
	batches, more, err := s.store.WritepathBatches(ctx, wpPastBatches)
	if err != nil || len(batches) == 0 {
		return err
	}
	ids := make([]uint, len(batches))
	for i, b := range batches {
		ids[i] = b.FirstRun
	}
	firsts, _, err := s.store.ListRuns(ctx, store.RunFilter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return err
	}
	byID := map[uint]*rundoc.Run{}
	for i := range firsts {
		byID[firsts[i].ID] = &firsts[i]
	}
	for _, b := range batches {
		v.Past = append(v.Past, ui.NewWPBatchRow(b.Batch, b.Runs, b.Final, b.Succeeded, byID[b.FirstRun]))
	}
	v.PastMore = more
	return nil
}

// writepathForm handles the "Write-path comparison" button: 303 to the
// batch's page, or the form again naming the bad field.
func (s *Server) writepathForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	// Fields that do not parse keep their defaults while the others are
	// checked, so that every bad field is reported at once.
	var errs rundoc.FieldErrors
	p, err := presetFromForm(form)
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	var batch string
	if len(errs) == 0 {
		batch, _, err = s.createWritepathPreset(c.Request.Context(), p)
	} else {
		_, _, err = s.presetSpecs(p, rundoc.GoWritepathStrategies())
	}
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		errs.SortBy(presetOrder)
		v := ui.NewWritepathForm(form, formErrors(errs))
		if err := s.pastBatches(c.Request.Context(), &v); err != nil {
			s.fail(c, err)
			return
		}
		v.SetStrategies(presetStrategies())
		v.Page = s.page(c, v.Page.Title)
		s.render(c, http.StatusBadRequest, "writepath", v)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.WritepathResultURL(batch))
}

// writepathRuns loads a batch's runs, strategy by strategy in the lab's
// order, each strategy's by id.
func (s *Server) writepathRuns(ctx context.Context, batch string) ([]rundoc.Run, error) {
	if !wpBatchRE.MatchString(batch) {
		return nil, errNotFound
	}
	var ids []uint
	for _, strategy := range rundoc.WritepathStrategies() {
		list, _, err := s.store.ListRuns(ctx, store.RunFilter{GroupID: wpGroup(batch, strategy), Limit: wpMaxRepetitions + 1})
		if err != nil {
			return nil, err
		}
		sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
		for _, r := range list {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return nil, errNotFound
	}
	return s.loadRuns(ctx, ids)
}

// writepathResult is /writepath/<batch>: the runs' status while any is
// unfinished, then the comparison by strategy with gather as baseline,
// the ratios to gather, the write-path panels (from the client CPU
// profiles, and the JVM's wall profiles for the Java strategies) and the
// differential flame graphs per-buffer vs gather and, with Java runs,
// java-per-buffer vs java-gather.
func (s *Server) writepathResult(c *gin.Context) {
	ctx := c.Request.Context()
	batch := c.Param("batch")
	runs, err := s.writepathRuns(ctx, batch)
	if err != nil {
		s.fail(c, err)
		return
	}
	var table *compare.Table
	panels := map[string]*ui.WritePaths{}
	if ui.AllFinal(runs) {
		table, err = compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
		if err != nil {
			s.fail(c, err)
			return
		}
		for i := range runs {
			r := &runs[i]
			id := ui.WritepathProfile(r)
			if _, done := panels[r.Label]; done || id == 0 {
				continue
			}
			lp, err := s.loadProfile(ctx, id)
			if err != nil {
				s.log.Warn("write-path panel", "profile", id, "err", err)
				continue
			}
			idx, err := profiles.PickSample(lp.prof, "")
			if err != nil {
				continue
			}
			panels[r.Label] = uiWritePaths(profiles.WritePaths(lp.prof, idx))
		}
	}
	v := ui.NewWritepathResult(batch, runs, table, panels)
	if len(runs) > maxCompareRuns {
		// A report compares at most maxCompareRuns runs.
		v.SaveRuns = ""
		v.NoSave = fmt.Sprintf("This comparison has %d runs; a report holds at most %d, so it cannot be saved as one. The page's link stays valid while its runs are kept.", len(runs), maxCompareRuns)
	}
	v.Page = s.page(c, v.Page.Title)
	s.render(c, http.StatusOK, "writepath", v)
}
