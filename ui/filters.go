package ui

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// ViewParams are the query parameters that filter and order a flame
// graph on the server (pprof's focus, ignore, hide, show_from, tagfocus,
// tagignore; only_matching; order): a page passes them on to its graphs'
// API (WithView). zoom=, search= and width= are the graph's own, added
// by flamegraph.js.
var ViewParams = []string{"focus", "ignore", "hide", "show_from", "tagfocus", "tagignore", "only_matching", "order"}

// WithView adds the view parameters of a page's query q to a graph's API
// address.
func WithView(dataURL string, q url.Values) string {
	u, err := url.Parse(dataURL)
	if err != nil {
		return dataURL
	}
	dq := u.Query()
	for _, k := range ViewParams {
		for _, v := range q[k] {
			if v != "" {
				dq.Add(k, v)
			}
		}
	}
	u.RawQuery = dq.Encode()
	return u.String()
}

// FilterBar is the compact form above a page's flame graphs: pprof's
// filters as regexps, a select per string label key, the "only matching
// stacks" and left-heavy toggles. It submits to the page itself (GET),
// keeping the page's other parameters (Keep) and the graphs' zoom and
// search, which flamegraph.js keeps in sync.
type FilterBar struct {
	Focus, Ignore, Hide, ShowFrom string
	// Labels has one select per label key: its values, each as the
	// tagfocus= it sets (key=^value$), the one in effect selected.
	Labels []LabelSelect
	// TagFocus and TagIgnore are the tag filters no select shows (typed
	// in the URL), kept as they are.
	TagFocus, TagIgnore []string
	OnlyMatching        bool
	LeftHeavy           bool
	// Keep are the page's other query parameters, as hidden inputs.
	Keep []Hidden
	// Active says whether any filter or order is in effect (the bar
	// opens then).
	Active bool
}

// LabelSelect is one label key's select of a FilterBar.
type LabelSelect struct {
	Key     string
	ID      string
	Options []Option
}

// Hidden is a hidden input of a form.
type Hidden struct {
	Name, Value string
}

// LabelFocus is the tagfocus= value that selects the samples whose label
// key has value exactly.
func LabelFocus(key, value string) string {
	return key + "=^" + regexp.QuoteMeta(value) + "$"
}

// NewFilterBar builds the filter bar for a page's query q and the string
// labels of its profiles (key → sorted values). sync names the page's
// graph parameters (zoom, search) the form carries even when the query
// lacks them: flamegraph.js fills them in as the user zooms and searches.
func NewFilterBar(q url.Values, labels map[string][]string, sync ...string) FilterBar {
	b := FilterBar{Focus: q.Get("focus"), Ignore: q.Get("ignore"), Hide: q.Get("hide"), ShowFrom: q.Get("show_from"),
		OnlyMatching: q.Get("only_matching") == "1", LeftHeavy: q.Get("order") == "left-heavy", TagIgnore: q["tagignore"]}
	used := map[string]bool{}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sel := LabelSelect{Key: k, ID: "label-" + strings.Map(idRune, k), Options: []Option{{Value: "", Label: "any " + k}}}
		for _, v := range labels[k] {
			tf := LabelFocus(k, v)
			on := slices.Contains(q["tagfocus"], tf)
			if on {
				used[tf] = true
			}
			sel.Options = append(sel.Options, Option{Value: tf, Label: v, Selected: on})
		}
		b.Labels = append(b.Labels, sel)
	}
	for _, tf := range q["tagfocus"] {
		if tf != "" && !used[tf] {
			b.TagFocus = append(b.TagFocus, tf)
		}
	}
	for k, vs := range q {
		if slices.Contains(ViewParams, k) {
			continue
		}
		for _, v := range vs {
			b.Keep = append(b.Keep, Hidden{Name: k, Value: v})
		}
	}
	for _, k := range sync {
		if _, ok := q[k]; !ok {
			b.Keep = append(b.Keep, Hidden{Name: k})
		}
	}
	slices.SortStableFunc(b.Keep, func(x, y Hidden) int { return strings.Compare(x.Name, y.Name) })
	b.Active = b.Focus != "" || b.Ignore != "" || b.Hide != "" || b.ShowFrom != "" || len(q["tagfocus"]) > 0 ||
		len(b.TagIgnore) > 0 || b.OnlyMatching || b.LeftHeavy
	return b
}

// idRune keeps the characters an element id may hold without escaping.
func idRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
		return r
	}
	return '-'
}
