package ui

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

// Paths of A/B comparisons.
const (
	// AddRepetitionsPath is where the comparison page's "add repetitions"
	// form posts.
	AddRepetitionsPath = "/compare/repetitions"
	// DefaultAddRepetitions is the form's number of repetitions to add.
	DefaultAddRepetitions = 5
)

// CompareProgress is how far a comparison's runs are: while some are
// queued or running, its figures cover only the finished ones.
type CompareProgress struct {
	Done, Total int
	// Pending are the runs not finished, in the comparison's order.
	Pending []PendingRun
}

// PendingRun is a run not finished yet.
type PendingRun struct {
	Link   RunLink
	Status string // queued or running
}

// NewCompareProgress counts the finished runs of a comparison.
func NewCompareProgress(runs []rundoc.Run) CompareProgress {
	p := CompareProgress{Total: len(runs)}
	for i := range runs {
		r := &runs[i]
		if r.Final() {
			p.Done++
			continue
		}
		p.Pending = append(p.Pending, PendingRun{Link: runLink(r), Status: string(r.Status)})
	}
	return p
}

// RefusedRun is a run whose configuration cannot be run again, and why.
type RefusedRun struct {
	Link   RunLink
	Reason string
}

// AddRepetitionsView is the comparison page's offer to run each column's
// configuration N more times, interleaved: the form, or why there is none.
type AddRepetitionsView struct {
	// ByRun: columns are single runs, which have no repetitions to add
	// to; the page says to switch to columns by label or group.
	ByRun bool
	// Refused are the runs that cannot be run again: no form then.
	Refused []RefusedRun
	// Full: the comparison already holds as many runs as one can.
	Full    bool
	MaxRuns int
	Action  string
	CSRF    string
	Query   CompareQuery
	Columns int
	N, MaxN int
	// Suggested is how many more runs per side the table itself asks for
	// to decide its undecided headline changes (0 when none); N starts
	// there when it fits.
	Suggested int
	HideFlag  string // "1" when unchanged rows are hidden, kept across the post
}

// Offered reports whether the page shows the form.
func (v AddRepetitionsView) Offered() bool { return !v.ByRun && len(v.Refused) == 0 && !v.Full }

// NewAddRepetitions builds the offer for comparison q of columns columns
// (by label or group), given the runs that cannot be run again and the
// most runs one comparison holds: N defaults to what the table suggests
// (suggested, its undecided changes' need), else DefaultAddRepetitions,
// and at most as many as keep the comparison within maxRuns.
func NewAddRepetitions(q CompareQuery, columns int, refused []RefusedRun, maxRuns, maxN, suggested int) AddRepetitionsView {
	v := AddRepetitionsView{ByRun: q.By == "" || q.By == compare.ByRun, Refused: refused, MaxRuns: maxRuns, Action: AddRepetitionsPath,
		Query: q, Columns: columns}
	if q.HideUnchanged {
		v.HideFlag = "1"
	}
	if columns > 0 {
		v.MaxN = min(maxN, (maxRuns-len(q.Runs))/columns)
	}
	v.Full = !v.ByRun && v.MaxN < 1
	v.Suggested = suggested
	n := DefaultAddRepetitions
	if suggested > 0 {
		n = suggested
	}
	v.N = min(n, max(v.MaxN, 1))
	return v
}

// The new-run form compares configurations: the form's own options are
// configuration A; each added configuration has a label and the options
// it changes, one name=value a line, in fields named "configs[1].label",
// "configs[1].params", "configs[2].label", … The "add" and "remove"
// buttons post the form back (FieldAddConfig, FieldRemoveConfig) so that
// they work without JavaScript; new_run.js does the same in the page.
const (
	FieldAddConfig    = "add_config"
	FieldRemoveConfig = "remove_config"
	// MaxConfigs is the most configurations one submission compares,
	// the form's own included.
	MaxConfigs = 10
	// templateIndex is the index of the blank fieldset the script copies
	// (and renumbers): 0 is no added configuration's.
	templateIndex = "0"
)

// ConfigField is the form field of the added configuration i (1 for B).
func ConfigField(i int, name string) string { return "configs[" + strconv.Itoa(i) + "]." + name }

var configFieldRE = regexp.MustCompile(`^configs\[([1-9][0-9]{0,2})\]\.(label|params)$`)

// FormConfig is one added configuration as submitted.
type FormConfig struct {
	Label  string
	Params string // name=value lines
}

// Blank reports whether the configuration was left empty: it is then no
// configuration.
func (c FormConfig) Blank() bool { return c.Label == "" && c.Params == "" }

// FormConfigs reads a submitted form's added configurations in the order
// of their indexes (which need not follow on: a script may have removed
// one), blank ones included.
func FormConfigs(values url.Values) []FormConfig {
	byIndex := map[int]*FormConfig{}
	for name, vals := range values {
		m := configFieldRE.FindStringSubmatch(name)
		if m == nil || len(vals) == 0 {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if byIndex[i] == nil {
			byIndex[i] = &FormConfig{}
		}
		if m[2] == "label" {
			byIndex[i].Label = vals[0]
		} else {
			byIndex[i].Params = vals[0]
		}
	}
	idx := make([]int, 0, len(byIndex))
	for i := range byIndex {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]FormConfig, len(idx))
	for k, i := range idx {
		out[k] = *byIndex[i]
	}
	return out
}

// ConfigFieldset is one added configuration on the form.
type ConfigFieldset struct {
	Index  string // "1" for B; "0" in the blank copy
	Letter string // "B"
	Label  FormField
	Params FormField
}

// ConfigLetter names configuration i: A for the form's own, B for 1, …
func ConfigLetter(i int) string { return string(rune('A' + i)) }

func newConfigFieldset(index, letter string, c FormConfig) ConfigFieldset {
	return ConfigFieldset{Index: index, Letter: letter,
		Label: FormField{Name: "configs[" + index + "].label", Label: "Label", Kind: "text", Value: c.Label, MaxLength: 200,
			Placeholder: "e.g. small-records", Help: "names this configuration's column in the comparison"},
		Params: FormField{Name: "configs[" + index + "].params", Label: "Options that differ", Kind: "textarea", Value: c.Params,
			Placeholder: "record-size=64\nproducer-props=linger.ms=5",
			Help:        "one name=value a line, named as the workload options above; Kafka properties (producer-props=k=v) replace the same key only; everything else is as in configuration A"},
	}
}

// formConfigSets are the added configurations to show: those submitted,
// one more after the add button, one fewer after a remove button; the
// blank copy for the script; and whether one more fits.
func formConfigSets(values url.Values, errs map[string]string) ([]ConfigFieldset, ConfigFieldset, bool) {
	cfgs := FormConfigs(values)
	if _, ok := values[FieldAddConfig]; ok && len(cfgs)+1 < MaxConfigs {
		cfgs = append(cfgs, FormConfig{})
	}
	if rm, err := strconv.Atoi(values.Get(FieldRemoveConfig)); err == nil && rm >= 1 && rm <= len(cfgs) {
		cfgs = slices.Delete(cfgs, rm-1, rm)
	}
	out := make([]ConfigFieldset, len(cfgs))
	for i, c := range cfgs {
		out[i] = newConfigFieldset(strconv.Itoa(i+1), ConfigLetter(i+1), c)
	}
	return out, newConfigFieldset(templateIndex, "", FormConfig{}), len(cfgs)+1 < MaxConfigs
}

// MaxConfigs is the most configurations the form compares, its own
// included, for the script.
func (v NewRunFormView) MaxConfigs() int { return MaxConfigs }
