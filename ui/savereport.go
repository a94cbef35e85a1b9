package ui

import "strconv"

// SaveReportForm is the "Save as report" form a page offers: it posts to
// Action (CreateReportPath) what the report holds (Hidden: its runs and
// how they form columns, or the sweep or search it shows) and a Title
// to start from. templates/_save_report.html draws it.
type SaveReportForm struct {
	Action, CSRF, Title string
	Hidden              []HiddenField
}

// SaveReport is the comparison's form: its runs, how they form columns
// and, for a before/after comparison, where it splits.
func (v CompareView) SaveReport() SaveReportForm {
	f := SaveReportForm{Action: v.SaveAction, CSRF: v.CSRF, Title: v.DefaultTitle,
		Hidden: []HiddenField{{"runs", v.Query.RunsParam()}, {"by", v.Query.By}}}
	if v.Query.At != 0 {
		f.Hidden = append(f.Hidden, HiddenField{"at", strconv.FormatUint(uint64(v.Query.At), 10)})
	}
	return f
}

// SaveReport is the batch's form: its runs by label (strategy).
func (v WritepathView) SaveReport() SaveReportForm {
	return SaveReportForm{Action: CreateReportPath, CSRF: v.CSRF, Title: v.SaveTitle,
		Hidden: []HiddenField{{"runs", v.SaveRuns}, {"by", "label"}}}
}

// SaveReport is the sweep's form.
func (v SweepView) SaveReport() SaveReportForm {
	return SaveReportForm{Action: CreateReportPath, CSRF: v.CSRF, Title: "Latency vs throughput: sweep " + v.ID,
		Hidden: []HiddenField{{"sweep", v.ID}}}
}

// SaveReport is the search's form.
func (v SLOView) SaveReport() SaveReportForm {
	return SaveReportForm{Action: CreateReportPath, CSRF: v.CSRF, Title: "Latency target: search " + v.ID,
		Hidden: []HiddenField{{"slo", v.ID}}}
}
