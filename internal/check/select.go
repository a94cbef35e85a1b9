package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// Selector is how the candidates were named: by ID (--run), or by label
// and metadata (--label, --meta; both may be given).
type Selector struct {
	IDs   []uint
	Label string
	Meta  map[string]string
}

// ParseIDs reads run IDs, each "N" or "#N", from values that may each be
// a comma list; repeats count once.
func ParseIDs(vs []string) ([]uint, error) {
	var ids []uint
	for _, list := range vs {
		for _, v := range strings.Split(list, ",") {
			if v = strings.TrimSpace(v); v == "" {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimPrefix(v, "#"), 10, 32)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("%q is not a run ID", v)
			}
			if !slices.Contains(ids, uint(n)) {
				ids = append(ids, uint(n))
			}
		}
	}
	return ids, nil
}

// find returns the candidates with their metrics, in time order.
func (s Selector) find(ctx context.Context, src Source) ([]Run, error) {
	ids := s.IDs
	if len(ids) == 0 {
		// The runs API filters by label; metadata is matched here.
		listed, err := src.Runs(ctx, RunFilter{Label: s.Label}, func(r Run) bool {
			if s.Label != "" && r.Label != s.Label {
				return false
			}
			for k, v := range s.Meta {
				if r.Meta[k] != v {
					return false
				}
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		for _, r := range listed {
			ids = append(ids, r.ID)
		}
	}
	var runs []Run
	for _, id := range ids {
		r, err := src.Run(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("run #%d: no such run on %s", id, src.Base())
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sortRuns(runs)
	return runs, nil
}

func (s Selector) String() string {
	if len(s.IDs) > 0 {
		return "runs " + idText(s.IDs)
	}
	var parts []string
	if s.Label != "" {
		parts = append(parts, "label "+strconv.Quote(s.Label))
	}
	keys := make([]string, 0, len(s.Meta))
	for k := range s.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+s.Meta[k])
	}
	return "runs with " + strings.Join(parts, " and ")
}

// Candidates finds the runs sel names, in time order. With wait > 0 it
// asks again every poll until they exist and have all finished, or wait
// has passed, calling waiting once, with what it waits for, before the
// first wait. A candidate that did not succeed is an error: there is
// nothing to judge.
func Candidates(ctx context.Context, src Source, sel Selector, wait, poll time.Duration, waiting func(pending error)) ([]Run, error) {
	deadline := time.Now().Add(wait)
	announced := false
	for {
		runs, err := sel.find(ctx, src)
		var pending error
		switch {
		case err != nil && wait > 0 && len(sel.IDs) > 0 && strings.Contains(err.Error(), "no such run"):
			pending = err
		case err != nil:
			return nil, err
		case len(runs) == 0:
			pending = fmt.Errorf("no %s on %s", sel, src.Base())
		}
		for _, r := range runs {
			if !r.Status.Final() {
				pending = fmt.Errorf("run #%d is %s", r.ID, r.Status)
				break
			}
		}
		if pending == nil {
			for _, r := range runs {
				if r.Status != rundoc.StatusSucceeded {
					msg := fmt.Sprintf("run #%d %s", r.ID, r.Status)
					if r.Error != "" {
						msg += ": " + r.Error
					}
					return nil, errors.New(msg)
				}
			}
			return runs, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			if wait > 0 {
				return nil, fmt.Errorf("%w after waiting %s", pending, wait)
			}
			return nil, fmt.Errorf("%w (--wait DURATION waits for it)", pending)
		}
		if !announced {
			waiting(pending)
			announced = true
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(min(poll, left)):
		}
	}
}

func sortRuns(runs []Run) {
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Time.Equal(runs[j].Time) {
			return runs[i].Time.Before(runs[j].Time)
		}
		return runs[i].ID < runs[j].ID
	})
}

// groupBySeries splits the candidates by series, in order of each
// series' first candidate.
func groupBySeries(runs []Run) [][]Run {
	var keys []string
	groups := map[string][]Run{}
	for _, r := range runs {
		if _, ok := groups[r.SeriesKey]; !ok {
			keys = append(keys, r.SeriesKey)
		}
		groups[r.SeriesKey] = append(groups[r.SeriesKey], r)
	}
	out := make([][]Run, len(keys))
	for i, k := range keys {
		out[i] = groups[k]
	}
	return out
}

func idText(ids []uint) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(parts, ", ")
}
