package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// TestGoldenRunMeta: the run page's head shows the run's metadata (commit,
// branch and version first, then the others by key), escaped, its series,
// and for an import the time it ran.
func TestGoldenRunMeta(t *testing.T) {
	u := newTestUI(t)
	r := finishedRun()
	r.Meta = map[string]string{"commit": "abc123", "branch": "feature/<b>", "version": "v0.4.49",
		"zone": "eu-1", "ci.job": `<script>alert("x")</script>`}
	r.SeriesKey = "abc@feature/<b>"
	v, err := NewRunView(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.CSRF = "tok"
	page := render(t, u, "run", v)
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>") {
		t.Error("metadata is not escaped")
	}
	var keys []string
	for _, m := range regexp.MustCompile(`<div class="meta-tag"><dt>([^<]*)</dt>`).FindAllStringSubmatch(page, -1) {
		keys = append(keys, m[1])
	}
	if got := strings.Join(keys, " "); got != "commit branch version ci.job zone" {
		t.Errorf("tags in the order %q", got)
	}
	golden.Check(t, "run_meta.html", page)

	imp := importedRun()
	imp.Time = time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)
	imp.Meta = map[string]string{"commit": "c0ffee"}
	iv, err := NewRunView(imp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<dt>Ran</dt><dd>" + FormatTime(imp.Time) + "</dd>"; !strings.Contains(render(t, u, "run", iv), want) {
		t.Errorf("imported run page lacks %q", want)
	}
}
