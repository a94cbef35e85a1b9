package ui

import (
	"net/url"
	"strconv"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/regressions"
)

// Paths of the regressions list.
const (
	RegressionsPath    = "/regressions"
	APIRegressionsPath = "/api/regressions"
)

// RegressionsQuery is what the regressions list shows: the threshold (in
// percent) and the detector's parameters (zero for Otava's defaults).
type RegressionsQuery struct {
	Threshold float64
	Options   changepoint.Options
}

// Values encodes the query as the page and the API take it, the
// parameters only when set.
func (q RegressionsQuery) Values() url.Values {
	v := url.Values{}
	v.Set("threshold", strconv.FormatFloat(q.Threshold, 'g', -1, 64))
	setDetectOptions(v, q.Options)
	return v
}

// RegressionLinks are the links and names the regressions cache gives
// each regression: the before/after comparison, the history page and the
// series' name, as every page writes them.
func RegressionLinks() regressions.Links {
	return regressions.Links{
		BeforeAfter: BeforeAfterURL,
		History: func(series, metric string, opts changepoint.Options) string {
			return HistoryURL(HistoryQuery{Series: series, Metric: metric, Options: opts})
		},
		SeriesName: SeriesName,
	}
}

// RegressionsView is the regressions page.
type RegressionsView struct {
	Page
	Rows []RegressionRow
	// Threshold (percent) and the detection parameters as the form shows
	// them.
	Threshold string
	Detect    DetectFields
	JSONURL   string
	// Computing is set while a regression's functions are being named:
	// the page is then not cached.
	Computing bool
}

// Volatile reports whether the page must not be cached: it shows
// "computing…" for some regression's functions.
func (v RegressionsView) Volatile() bool { return v.Computing }

// RegressionRow is one regression as the table shows it.
type RegressionRow struct {
	Series, SeriesURL string
	Metric            string
	CommitRange       string
	Run               RunLink
	Change            string
	PValue            string
	Time, TimeISO     string
	Before, After     string
	CompareURL        string

	// Name is the series' name, "" when unknown (the key is shown).
	Name string
	// Functions are the functions that moved at it (the server fills
	// them in).
	Functions FunctionsCell
}

// NewRegressionsView is the page of regs (newest first) found with q.
func NewRegressionsView(regs []regressions.Regression, q RegressionsQuery) RegressionsView {
	v := RegressionsView{Page: Page{Title: "Regressions"}, Rows: make([]RegressionRow, 0, len(regs)),
		Threshold: strconv.FormatFloat(q.Threshold, 'g', -1, 64), Detect: newDetectFields("regressions", q.Options),
		JSONURL: APIRegressionsPath + "?" + q.Values().Encode()}
	for _, r := range regs {
		v.Rows = append(v.Rows, RegressionRow{Series: r.Series, Name: r.Name, SeriesURL: r.HistoryURL, Metric: r.Metric,
			CommitRange: r.CommitRange(), Run: RunLink{ID: r.RunID, URL: runURL(r.RunID), Text: "#" + uintStr(r.RunID)},
			Change: numfmt.SignedPercent(r.ChangePct), PValue: numfmt.PValue(r.PValue),
			Time: FormatTime(r.Time), TimeISO: r.Time.UTC().Format(time.RFC3339),
			Before: numfmt.Value(r.Before, r.Unit), After: numfmt.Value(r.After, r.Unit), CompareURL: r.CompareURL})
	}
	return v
}

// RegressionBadge marks a run at which its series regressed.
type RegressionBadge struct {
	Text  string // "record-send-rate −8.7%"
	Title string
	URL   string // the before/after comparison, else the history
}

// NewRegressionBadges are the badges of the regressions at one run.
func NewRegressionBadges(regs []regressions.Regression) []RegressionBadge {
	var out []RegressionBadge
	for _, r := range regs {
		b := RegressionBadge{Text: r.Metric + " " + numfmt.SignedPercent(r.ChangePct), URL: r.CompareURL,
			Title: "the series regressed at this run: " + r.Metric + " " + numfmt.Value(r.Before, r.Unit) + " → " +
				numfmt.Value(r.After, r.Unit) + ", commits " + r.CommitRange() + ", p = " + numfmt.PValue(r.PValue)}
		if b.URL == "" {
			b.URL = r.HistoryURL
		}
		out = append(out, b)
	}
	return out
}
