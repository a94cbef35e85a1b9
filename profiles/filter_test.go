package profiles

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// labelledProfile is a hand-built profile of four stacks (leaf last),
// each with thread and state labels, as a JFR profile carries them.
func labelledProfile() *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	add := func(stack string, v int64, thread, state string) {
		names := strings.Split(stack, ";")
		s := &profile.Sample{Value: []int64{v}, Label: map[string][]string{"thread": {thread}, "state": {state}}}
		for i := len(names) - 1; i >= 0; i-- {
			s.Location = append(s.Location, loc(names[i]))
		}
		p.Sample = append(p.Sample, s)
	}
	add("main;send;write", 10, "sender-1", "RUNNABLE")
	add("main;send;lock", 5, "sender-2", "BLOCKED")
	add("main;recv;read", 20, "reader", "RUNNABLE")
	add("main;recv;decode;lock", 7, "reader", "WAITING")
	return p
}

// folded writes a profile's tree as sorted "stack value" lines of its
// leaf-ending paths.
func foldedOf(p *profile.Profile) string {
	var lines []string
	var walk func(n *Node, path string)
	walk = func(n *Node, path string) {
		if n.Self != 0 {
			lines = append(lines, fmt.Sprintf("%s %d", path, n.Self))
		}
		for _, c := range n.Children {
			walk(c, strings.TrimPrefix(path+";"+c.Name, ";"))
		}
	}
	walk(BuildTree(p, 0), "")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestFiltersAsPprof(t *testing.T) {
	re := regexp.MustCompile
	tag := func(s string) TagFilter {
		tf, err := ParseTagFilter(s, func(e string) (*regexp.Regexp, error) { return regexp.Compile(e) })
		if err != nil {
			t.Fatal(err)
		}
		return tf
	}
	cases := []struct {
		name string
		f    Filters
		want string
	}{
		{"none", Filters{}, "main;recv;decode;lock 7\nmain;recv;read 20\nmain;send;lock 5\nmain;send;write 10"},
		{"focus", Filters{Focus: re("^lock$")}, "main;recv;decode;lock 7\nmain;send;lock 5"},
		{"ignore", Filters{Ignore: re("^recv$")}, "main;send;lock 5\nmain;send;write 10"},
		{"hide", Filters{Hide: re("^(send|recv)$")}, "main;decode;lock 7\nmain;lock 5\nmain;read 20\nmain;write 10"},
		{"show_from", Filters{ShowFrom: re("^decode$")}, "decode;lock 7"},
		{"focus and ignore", Filters{Focus: re("lock"), Ignore: re("decode")}, "main;send;lock 5"},
		{"tagfocus", Filters{TagFocus: []TagFilter{tag("thread=^sender")}}, "main;send;lock 5\nmain;send;write 10"},
		{"tagfocus two keys", Filters{TagFocus: []TagFilter{tag("thread=reader"), tag("state=WAITING")}}, "main;recv;decode;lock 7"},
		{"tagfocus any key", Filters{TagFocus: []TagFilter{tag("BLOCKED")}}, "main;send;lock 5"},
		{"tagignore", Filters{TagIgnore: []TagFilter{tag("state=RUNNABLE")}}, "main;recv;decode;lock 7\nmain;send;lock 5"},
		{"only matching", Filters{OnlyMatching: re("write|read")}, "main;recv;read 20\nmain;send;write 10"},
		{"tag then only matching", Filters{TagFocus: []TagFilter{tag("thread=reader")}, OnlyMatching: re("lock")}, "main;recv;decode;lock 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := labelledProfile()
			if c.f.Empty() != (c.name == "none") {
				t.Errorf("Empty() = %v", c.f.Empty())
			}
			c.f.Apply(p)
			if got := foldedOf(p); got != c.want {
				t.Errorf("kept\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestFiltersKeyAndTags(t *testing.T) {
	a := Filters{Focus: regexp.MustCompile("x"), TagFocus: []TagFilter{{Key: "thread", Value: regexp.MustCompile("r")}}}
	b := Filters{Ignore: regexp.MustCompile("x"), TagFocus: []TagFilter{{Key: "thread", Value: regexp.MustCompile("r")}}}
	if a.Key() == b.Key() || a.Key() == (Filters{}).Key() || a.Key() != (Filters{Focus: regexp.MustCompile("x"), TagFocus: a.TagFocus}).Key() {
		t.Errorf("keys %q, %q", a.Key(), b.Key())
	}
	compile := func(e string) (*regexp.Regexp, error) {
		if e == "" {
			return nil, nil
		}
		return regexp.Compile(e)
	}
	if tf, err := ParseTagFilter("state=RUN=X", compile); err != nil || tf.Key != "state" || tf.Value.String() != "RUN=X" || tf.String() != "state=RUN=X" {
		t.Errorf("ParseTagFilter = %+v, %v", tf, err)
	}
	for _, bad := range []string{"thread=", "thread=a("} {
		if _, err := ParseTagFilter(bad, compile); err == nil {
			t.Errorf("ParseTagFilter(%q) accepted", bad)
		}
	}
	got := Labels(labelledProfile())
	if !slices.Equal(got["thread"], []string{"reader", "sender-1", "sender-2"}) || !slices.Equal(got["state"], []string{"BLOCKED", "RUNNABLE", "WAITING"}) || len(got) != 2 {
		t.Errorf("Labels = %v", got)
	}
}
