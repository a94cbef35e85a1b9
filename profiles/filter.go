package profiles

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Filters are pprof's sample filters, as `go tool pprof` means them:
//
//   - Focus keeps only the samples with a frame whose function name (or
//     file name) matches; Ignore drops the samples with such a frame.
//   - Hide removes the matching frames from every stack (the samples
//     stay, charged to the remaining frames).
//   - ShowFrom drops, in every stack, the frames above (callers of) the
//     outermost matching frame; stacks with no match are dropped.
//   - TagFocus keeps only the samples whose labels match; TagIgnore drops
//     them. Only string labels are filtered (JFR's thread and state, Go's
//     pprof labels); pprof's numeric ranges (bytes=1kb:) are not
//     supported.
//   - OnlyMatching keeps only the samples with a frame that a search
//     matches: the flame graph's "only matching stacks".
//
// A nil expression or an empty list filters nothing.
type Filters struct {
	Focus, Ignore, Hide, ShowFrom *regexp.Regexp
	TagFocus, TagIgnore           []TagFilter
	OnlyMatching                  *regexp.Regexp
}

// TagFilter matches a sample whose label Key has a string value that
// Value matches; with Key "" any string label's value will do.
type TagFilter struct {
	Key   string
	Value *regexp.Regexp
}

// ParseTagFilter reads pprof's `key=regexp` (or a bare regexp, matching
// any label's value). compile compiles the regexp: the caller bounds it.
func ParseTagFilter(s string, compile func(string) (*regexp.Regexp, error)) (TagFilter, error) {
	key, expr, ok := strings.Cut(s, "=")
	if !ok {
		key, expr = "", s
	}
	re, err := compile(expr)
	if err != nil {
		return TagFilter{}, err
	}
	if re == nil {
		return TagFilter{}, fmt.Errorf("profiles: tag filter %q: empty expression", s)
	}
	return TagFilter{Key: key, Value: re}, nil
}

func (t TagFilter) String() string {
	if t.Key == "" {
		return t.Value.String()
	}
	return t.Key + "=" + t.Value.String()
}

// Empty says whether f filters nothing.
func (f Filters) Empty() bool {
	return f.Focus == nil && f.Ignore == nil && f.Hide == nil && f.ShowFrom == nil &&
		len(f.TagFocus) == 0 && len(f.TagIgnore) == 0 && f.OnlyMatching == nil
}

// Key identifies f, for caching what was built with it.
func (f Filters) Key() string {
	var b strings.Builder
	re := func(name string, r *regexp.Regexp) {
		if r != nil {
			fmt.Fprintf(&b, "%s=%q;", name, r.String())
		}
	}
	re("focus", f.Focus)
	re("ignore", f.Ignore)
	re("hide", f.Hide)
	re("show_from", f.ShowFrom)
	for _, t := range f.TagFocus {
		fmt.Fprintf(&b, "tagfocus=%q;", t.String())
	}
	for _, t := range f.TagIgnore {
		fmt.Fprintf(&b, "tagignore=%q;", t.String())
	}
	re("only_matching", f.OnlyMatching)
	return b.String()
}

// Apply filters p in place with pprof's own filters (profile's
// FilterSamplesByName, ShowFrom and FilterSamplesByTag): p must be a
// private copy. Name filters come first, then tag filters, then
// OnlyMatching, so that "only matching stacks" applies to what the other
// filters kept.
func (f Filters) Apply(p *profile.Profile) {
	if f.Focus != nil || f.Ignore != nil || f.Hide != nil {
		p.FilterSamplesByName(f.Focus, f.Ignore, f.Hide, nil)
	}
	if f.ShowFrom != nil {
		p.ShowFrom(f.ShowFrom)
	}
	if len(f.TagFocus) > 0 || len(f.TagIgnore) > 0 {
		var focus, ignore profile.TagMatch
		if len(f.TagFocus) > 0 {
			// Each filter must match, as pprof's comma-less repeated
			// -tagfocus flags do.
			focus = func(s *profile.Sample) bool {
				for _, t := range f.TagFocus {
					if !t.matches(s) {
						return false
					}
				}
				return true
			}
		}
		if len(f.TagIgnore) > 0 {
			ignore = func(s *profile.Sample) bool {
				return slices.ContainsFunc(f.TagIgnore, func(t TagFilter) bool { return t.matches(s) })
			}
		}
		p.FilterSamplesByTag(focus, ignore)
	}
	if f.OnlyMatching != nil {
		p.FilterSamplesByName(f.OnlyMatching, nil, nil, nil)
	}
}

func (t TagFilter) matches(s *profile.Sample) bool {
	if t.Key != "" {
		return slices.ContainsFunc(s.Label[t.Key], t.Value.MatchString)
	}
	for _, vs := range s.Label {
		if slices.ContainsFunc(vs, t.Value.MatchString) {
			return true
		}
	}
	return false
}

// MaxLabelValues bounds the values Labels lists per key: a label with
// more (a request id) is no filter a select can offer.
const MaxLabelValues = 200

// Labels lists the string label keys of p's samples and, for each, its
// distinct values, sorted; a key with more than MaxLabelValues values
// lists the first MaxLabelValues in sorted order.
func Labels(p *profile.Profile) map[string][]string {
	seen := map[string]map[string]bool{}
	for _, s := range p.Sample {
		for k, vs := range s.Label {
			m := seen[k]
			if m == nil {
				m = map[string]bool{}
				seen[k] = m
			}
			for _, v := range vs {
				m[v] = true
			}
		}
	}
	out := make(map[string][]string, len(seen))
	for k, m := range seen {
		vs := make([]string, 0, len(m))
		for v := range m {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		if len(vs) > MaxLabelValues {
			vs = vs[:MaxLabelValues]
		}
		out[k] = vs
	}
	return out
}
