package ui

import (
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/rundoc"
)

// DefaultPerPage is the runs list's page size when none is asked for;
// MaxPerPage caps what a query may ask for.
const (
	DefaultPerPage = 50
	MaxPerPage     = 500
)

// URL paths the pages link to. The runs list is the home page; its
// filters are the query parameters workload, label, status, group, ids,
// page and per_page. Runs live under RunPathPrefix, and the new-run form posts
// to CreateRunPath.
const (
	ListPath      = "/"
	RunPathPrefix = "/runs/"
	CreateRunPath = "/runs"
	NewRunPath    = "/runs/new"
	ComparePath   = "/compare"
)

// RunsQuery is the runs list's filter and page. Empty strings match
// everything; Page is 1-based.
type RunsQuery struct {
	Workload string
	Label    string
	Status   string
	// Group narrows the list to one repetition group (query parameter
	// group); the group markers of the list link to it.
	Group string
	// IDs narrows the list to the runs listed (query parameter ids, run
	// ids separated by commas): the list's script asks for the rows of
	// unfinished runs this way to refresh them. It is kept normalized
	// ("3,5,7": no blanks, no repeats, at most MaxPerPage ids) so the
	// query stays comparable and its URL stable.
	IDs     string
	Page    int
	PerPage int
	// Before and After are a cursor (query parameters before and after,
	// run ids): the page of runs older than run Before, or the one of runs
	// newer than run After. The pagination links use them (SetPlace), so
	// that a page deep in a long history costs what the first does and
	// does not shift as runs are added. Page is 1 with a cursor.
	Before uint
	After  uint
}

// IDList returns the run ids of f.IDs.
func (f RunsQuery) IDList() []uint {
	var ids []uint
	for _, s := range strings.Split(f.IDs, ",") {
		if n, err := strconv.ParseUint(s, 10, 32); err == nil && n > 0 {
			ids = append(ids, uint(n))
		}
	}
	return ids
}

// normalizeIDs keeps the valid, distinct run ids of a comma-separated list
// (or several: the parameter may be repeated), in their order, and at most
// MaxPerPage of them.
func normalizeIDs(lists []string) string {
	seen := map[uint64]bool{}
	var out []string
	for _, l := range lists {
		for _, s := range strings.Split(l, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
			if err != nil || n == 0 || seen[n] || len(out) == MaxPerPage {
				continue
			}
			seen[n] = true
			out = append(out, strconv.FormatUint(n, 10))
		}
	}
	return strings.Join(out, ",")
}

// ParseRunsQuery reads a RunsQuery from the list's query parameters,
// clamping the page to 1.. and the page size to 1..MaxPerPage.
func ParseRunsQuery(q url.Values) RunsQuery {
	f := RunsQuery{
		Workload: strings.TrimSpace(q.Get("workload")),
		Label:    strings.TrimSpace(q.Get("label")),
		Status:   strings.TrimSpace(q.Get("status")),
		Group:    strings.TrimSpace(q.Get("group")),
		IDs:      normalizeIDs(q["ids"]),
	}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.PerPage, _ = strconv.Atoi(q.Get("per_page"))
	for _, c := range []struct {
		name string
		dst  *uint
	}{{"before", &f.Before}, {"after", &f.After}} {
		if n, err := strconv.ParseUint(q.Get(c.name), 10, 32); err == nil {
			*c.dst = uint(n)
		}
	}
	return f.normalized()
}

func (f RunsQuery) normalized() RunsQuery {
	if f.Page < 1 {
		f.Page = 1
	}
	if f.PerPage < 1 {
		f.PerPage = DefaultPerPage
	}
	f.PerPage = min(f.PerPage, MaxPerPage)
	if f.Before > 0 {
		f.After = 0
	}
	if f.Cursor() {
		f.Page = 1
	}
	return f
}

// Cursor reports whether the page is chosen by a cursor (Before, After)
// rather than by its number.
func (f RunsQuery) Cursor() bool { return f.Before > 0 || f.After > 0 }

// Offset is the number of runs before the page, for the store's query
// (0 with a cursor).
func (f RunsQuery) Offset() int {
	f = f.normalized()
	return (f.Page - 1) * f.PerPage
}

// URL is the runs list's address for this query; defaults are left out.
func (f RunsQuery) URL() string {
	q := url.Values{}
	if f.Workload != "" {
		q.Set("workload", f.Workload)
	}
	if f.Label != "" {
		q.Set("label", f.Label)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Group != "" {
		q.Set("group", f.Group)
	}
	if f.IDs != "" {
		q.Set("ids", f.IDs)
	}
	if f.Page > 1 {
		q.Set("page", strconv.Itoa(f.Page))
	}
	if f.Before > 0 {
		q.Set("before", strconv.FormatUint(uint64(f.Before), 10))
	} else if f.After > 0 {
		q.Set("after", strconv.FormatUint(uint64(f.After), 10))
	}
	if f.PerPage != DefaultPerPage && f.PerPage > 0 {
		q.Set("per_page", strconv.Itoa(f.PerPage))
	}
	if len(q) == 0 {
		return ListPath
	}
	return ListPath + "?" + q.Encode()
}

// RunsView is the runs list page.
type RunsView struct {
	Page
	Rows []RunRow
	// Total is the number of runs matching the filter, over all pages.
	Total     int64
	TotalText string // "1,234 runs", or with filters "1 run matches the filters"
	Query     RunsQuery
	Filtered  bool // a filter is set
	// Group is the repetition group the list is narrowed to, "" for none;
	// the filter form keeps it in a hidden field.
	Group string
	// IDs are the runs the list is narrowed to ("3,5,7"), "" for all; the
	// filter form keeps them in a hidden field too.
	IDs string
	// Filter form options, the current value selected.
	Workloads []Option
	Labels    []Option
	Statuses  []Option
	// Pagination.
	PageNum     int
	PageCount   int
	PageText    string // "page 2 of 7"
	PrevURL     string // "" on the first page
	NextURL     string // "" on the last page
	ClearURL    string // the list without filters
	ListPath    string // where the filter form submits
	NewRunURL   string
	ComparePath string
	// ShowWorker adds the column of the worker host that ran each run
	// (SetShowWorker): a shared store's runs run on several machines.
	ShowWorker bool
}

// SetShowWorker shows the worker column.
func (v *RunsView) SetShowWorker(show bool) { v.ShowWorker = show }

// RunRow is one line of the runs list.
type RunRow struct {
	ID uint
	// Regressions badge the run when its series regressed at it
	// (SetRegressions).
	Regressions []RegressionBadge
	URL         string
	Workload    string
	Label       string
	Status      string
	StatusClass string
	Created     string // UTC, 2006-01-02 15:04:05
	CreatedISO  string // RFC 3339, for <time datetime>
	Duration    string
	Records     string // records/s
	MB          string // MB/s
	P99         string // ms
	Group       string // "a1b2c3d4 rep 2", "a1b2c3d4 warm-up" or ""
	GroupTitle  string // the full group id
	GroupURL    string // the list narrowed to the group
	Warmup      bool
	Incomplete  bool // finished without a complete result
	// Worker is the host of the worker that took the run; Queue the queue
	// it waits (waited) in.
	Worker string
	Queue  string

	index int // position in NewRunsView's input, for sorting
}

// Option is one choice of a select, radio group or checkbox group.
type Option struct {
	Value    string
	Label    string
	Selected bool
	// Queues, on a named cluster's option of the new-run form, are the
	// queues whose workers name it, space-separated (data-queues), so
	// that new_run.js offers only the chosen queue's clusters.
	Queues string
}

// Workloads and statuses the filters offer: every value a stored run may
// have, from rundoc's lists, so that a new workload is never missing.
var (
	filterWorkloads = names(rundoc.AllWorkloads())
	filterStatuses  = names(rundoc.Statuses())
)

// NewRunsView builds the runs list from one page of runs (newest first,
// as the store returns them), the total matching the filter and every
// label in use, for the label filter.
func NewRunsView(runs []rundoc.Run, total int64, f RunsQuery, labels []string) RunsView {
	f = f.normalized()
	v := RunsView{
		Page:        Page{Title: "Runs"},
		Rows:        make([]RunRow, 0, len(runs)),
		Total:       total,
		Query:       f,
		Filtered:    f.Workload != "" || f.Label != "" || f.Status != "" || f.Group != "" || f.IDs != "",
		ClearURL:    ListPath,
		ListPath:    ListPath,
		NewRunURL:   NewRunPath,
		ComparePath: ComparePath,
	}
	for i := range runs {
		row := newRunRow(&runs[i])
		row.index = i
		v.Rows = append(v.Rows, row)
	}
	// Newest first, whatever order the page came in.
	sort.SliceStable(v.Rows, func(i, j int) bool {
		a, b := &runs[v.Rows[i].index], &runs[v.Rows[j].index]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	switch {
	case total == 1 && v.Filtered:
		v.TotalText = "1 run matches the filters"
	case total == 1:
		v.TotalText = "1 run"
	case v.Filtered:
		v.TotalText = FormatInt(total) + " runs match the filters"
	default:
		v.TotalText = FormatInt(total) + " runs"
	}

	v.Workloads = options(filterWorkloads, f.Workload, "any workload")
	v.Statuses = options(filterStatuses, f.Status, "any status")
	var ls []string
	for _, l := range labels {
		if l != "" && !contains(ls, l) {
			ls = append(ls, l)
		}
	}
	if f.Label != "" && !contains(ls, f.Label) {
		ls = append(ls, f.Label) // keep the filter visible even if no run has it now
	}
	v.Labels = options(ls, f.Label, "any label")
	v.Group = f.Group
	v.IDs = f.IDs

	v.PageNum = f.Page
	v.PageCount = max(1, int((total+int64(f.PerPage)-1)/int64(f.PerPage)))
	v.PageText = "page " + strconv.Itoa(v.PageNum) + " of " + strconv.Itoa(v.PageCount)
	if f.Page > 1 {
		p := f
		p.Page = min(f.Page-1, v.PageCount)
		v.PrevURL = p.URL()
	}
	if f.Page < v.PageCount {
		n := f
		n.Page = f.Page + 1
		v.NextURL = n.URL()
	}
	return v
}

// SetPlace puts the page where the store found it: newer runs of the
// filter come before it and, if older, some come after it. The page
// number counts from that, and the previous and next links become
// cursors next to the page's runs (the first page keeps its plain
// address), so following them costs the same at any depth and skips or
// repeats no run when runs are added meanwhile.
func (v *RunsView) SetPlace(newer int64, older bool) {
	f := v.Query
	per := int64(f.PerPage)
	v.PageNum = int(newer/per) + 1
	v.PageCount = max(v.PageCount, v.PageNum, int((newer+int64(len(v.Rows))+per-1)/per))
	v.PageText = "page " + strconv.Itoa(v.PageNum) + " of " + strconv.Itoa(v.PageCount)
	first := f
	first.Page, first.Before, first.After = 1, 0, 0
	v.PrevURL, v.NextURL = "", ""
	if len(v.Rows) == 0 {
		if newer > 0 {
			v.PrevURL = first.URL()
		}
		return
	}
	lo, hi := v.Rows[0].ID, v.Rows[0].ID
	for _, r := range v.Rows {
		lo, hi = min(lo, r.ID), max(hi, r.ID)
	}
	switch {
	case newer > per:
		p := first
		p.After = hi
		v.PrevURL = p.URL()
	case newer > 0:
		v.PrevURL = first.URL()
	}
	if older {
		n := first
		n.Before = lo
		v.NextURL = n.URL()
	}
}

func newRunRow(r *rundoc.Run) RunRow {
	row := RunRow{
		ID:          r.ID,
		URL:         runURL(r.ID),
		Workload:    string(r.Workload),
		Label:       r.Label,
		Status:      string(r.Status),
		StatusClass: statusClass(r.Status),
		Created:     FormatTime(r.CreatedAt),
		Duration:    runDuration(r),
		Records:     formatOptional(r.RecordsPerSec, "records/s"),
		MB:          formatOptional(r.MBPerSec, "MB/s"),
		P99:         formatOptional(r.P99Ms, "ms"),
		Warmup:      r.Warmup,
		Incomplete:  r.Final() && r.Status == rundoc.StatusSucceeded && !r.Complete,
		Worker:      r.Worker,
		Queue:       r.Queue,
	}
	if !r.CreatedAt.IsZero() {
		row.CreatedISO = r.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	row.Group, row.GroupTitle = groupMarker(r)
	if r.GroupID != "" {
		row.GroupURL = RunsQuery{Group: r.GroupID}.URL()
	}
	return row
}

// groupMarker is a run's place in its repetition group, short enough for
// a table cell, and the full group id.
func groupMarker(r *rundoc.Run) (string, string) {
	if r.GroupID == "" {
		if r.Warmup {
			return "warm-up", ""
		}
		return "", ""
	}
	short := r.GroupID
	if len(short) > 8 {
		short = short[:8]
	}
	if r.Warmup {
		return short + " warm-up", "repetition group " + r.GroupID + ", discarded warm-up run"
	}
	return short + " rep " + strconv.Itoa(r.GroupIndex), "repetition group " + r.GroupID + ", measured run " + strconv.Itoa(r.GroupIndex)
}

// runDuration is how long a run took, or "—" while it has not finished.
func runDuration(r *rundoc.Run) string {
	if r.StartedAt == nil || r.FinishedAt == nil {
		return dash
	}
	return FormatDuration(r.FinishedAt.Sub(*r.StartedAt))
}

// statusClass is the CSS class of a status badge; unknown statuses share one.
func statusClass(status rundoc.Status) string {
	if status.Valid() {
		return "badge badge-" + string(status)
	}
	return "badge badge-unknown"
}

func options(values []string, current, anyLabel string) []Option {
	out := []Option{{Value: "", Label: anyLabel, Selected: current == ""}}
	for _, v := range values {
		out = append(out, Option{Value: v, Label: v, Selected: v == current})
	}
	return out
}

// names is a list of string-typed values (rundoc's enums) as strings.
func names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}

func runURL(id uint) string { return RunPathPrefix + strconv.FormatUint(uint64(id), 10) }

// SetRegressions badges the rows of runs at which their series regressed
// (the regressions list by first run after the change).
func (v *RunsView) SetRegressions(at map[uint][]regressions.Regression) {
	for i := range v.Rows {
		v.Rows[i].Regressions = NewRegressionBadges(at[v.Rows[i].ID])
	}
}
