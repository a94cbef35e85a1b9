package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

// The write-path lab: its preset is checked, stored and queued by launch
// (launch.CreateWritepathPreset); here are its form, its answer and the
// pages of its batches.

// findJDK says whether the Java strategies can run here: nil when java,
// javac and jfr are on PATH, else jdk.Find's error saying what to
// install. Tests replace it; the launcher asks it (launch.Options.FindJDK).
var findJDK = func() error {
	_, err := jdk.Find("")
	return err
}

// apiWritepathPreset answers POST /api/presets/writepath with 201
// {"batch", "runs", "compare_url"}.
func (s *Server) apiWritepathPreset(c *gin.Context) {
	var p launch.WritepathPreset
	if err := decodeJSON(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	batch, runs, err := s.launcher.CreateWritepathPreset(c.Request.Context(), p)
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
	v.SetStrategies(s.launcher.PresetStrategies())
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
		batch, _, err = s.launcher.CreateWritepathPreset(c.Request.Context(), p)
	} else {
		_, _, err = s.launcher.PresetSpecs(p, rundoc.GoWritepathStrategies())
	}
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		errs.SortBy(launch.PresetOrder)
		v := ui.NewWritepathForm(form, formErrors(errs))
		if err := s.pastBatches(c.Request.Context(), &v); err != nil {
			s.fail(c, err)
			return
		}
		v.SetStrategies(s.launcher.PresetStrategies())
		v.Page = s.page(c, v.Page.Title)
		s.render(c, http.StatusBadRequest, "writepath", v)
		return
	}
	c.Redirect(http.StatusSeeOther, ui.WritepathResultURL(batch))
}

// writepathRuns loads a batch's runs, strategy by strategy in the lab's
// order, each strategy's by id.
func (s *Server) writepathRuns(ctx context.Context, batch string) ([]rundoc.Run, error) {
	if !launch.ValidBatchID(batch) {
		return nil, errNotFound
	}
	var ids []uint
	for _, strategy := range rundoc.WritepathStrategies() {
		list, _, err := s.store.ListRuns(ctx, store.RunFilter{GroupID: launch.WritepathGroup(batch, strategy), Limit: launch.MaxWritepathRepetitions + 1})
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
	if legacyZoom(c, map[string]string{"jfocus": "jzoom"}, anyZoom) {
		return
	}
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
