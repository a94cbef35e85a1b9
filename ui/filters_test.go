package ui

import (
	"net/url"
	"strings"
	"testing"
)

func TestNewFilterBar(t *testing.T) {
	q := url.Values{"base": {"7"}, "focus": {"a|b"}, "tagfocus": {LabelFocus("thread", "t.1"), "window=^1"}, "tagignore": {"state=X"},
		"only_matching": {"1"}, "order": {"left-heavy"}, "search": {"s"}}
	b := NewFilterBar(q, map[string][]string{"thread": {"t.1", "t2"}, "state x": {"X"}}, "zoom", "search")
	if b.Focus != "a|b" || !b.OnlyMatching || !b.LeftHeavy || !b.Active || strings.Join(b.TagIgnore, ",") != "state=X" {
		t.Errorf("bar %+v", b)
	}
	// One select per key, sorted, the tagfocus in effect selected; a
	// tagfocus no select shows is kept as it is.
	if len(b.Labels) != 2 || b.Labels[0].Key != "state x" || b.Labels[0].ID != "label-state-x" || b.Labels[1].Options[1].Value != `thread=^t\.1$` ||
		!b.Labels[1].Options[1].Selected || b.Labels[1].Options[2].Selected || b.Labels[1].Options[0].Value != "" {
		t.Errorf("labels %+v", b.Labels)
	}
	if strings.Join(b.TagFocus, ",") != "window=^1" {
		t.Errorf("tagfocus kept %q", b.TagFocus)
	}
	// The page's other parameters, and the zoom it lacks, ride along.
	var keep []string
	for _, h := range b.Keep {
		keep = append(keep, h.Name+"="+h.Value)
	}
	if strings.Join(keep, "&") != "base=7&search=s&zoom=" {
		t.Errorf("keep %q", keep)
	}
	if NewFilterBar(url.Values{"zoom": {"x"}}, nil).Active {
		t.Error("a zoom is no filter")
	}
}

func TestWithView(t *testing.T) {
	q := url.Values{"focus": {"f"}, "zoom": {"z"}, "search": {"s"}, "tagfocus": {"a=1", "b=2"}, "order": {"left-heavy"}, "hide": {""}}
	got := WithView("/api/profiles/7/flamegraph?format=rows&sample=cpu", q)
	if got != "/api/profiles/7/flamegraph?focus=f&format=rows&order=left-heavy&sample=cpu&tagfocus=a%3D1&tagfocus=b%3D2" {
		t.Errorf("WithView = %s", got)
	}
}
