package ui

import (
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/testutil/golden"
)

func fixtureMeta() (base, target ProfileMeta) {
	base = ProfileMeta{ID: 7, RunID: 42, RunLabel: "trunk", Role: "client", Kind: "cpu", Bytes: 48213, Samples: 1234}
	target = ProfileMeta{ID: 9, RunID: 43, RunLabel: "writev", Role: "client", Kind: "cpu", Bytes: 51200, Samples: 2345}
	return base, target
}

func fixtureWritePaths(scale float64) *WritePaths {
	return &WritePaths{
		Total: 4e9 * scale,
		Unit:  "nanoseconds",
		Rows: []WritePathRow{
			{Direction: "read", Path: "single", Value: 2e8 * scale, Samples: 20, Percent: 5, Frames: []string{"internal/poll.(*FD).Read"}},
			{Direction: "write", Path: "single", Value: 1.2e9 * scale, Samples: 120, Percent: 30, Frames: []string{"internal/poll.(*FD).Write", "syscall.write"}},
		},
	}
}

func fixtureProfileView() ProfileView {
	base, _ := fixtureMeta()
	v := NewProfileView(base, []string{"samples/count", "cpu/nanoseconds"}, "cpu",
		"runtime.main;main.a%3Bb", `Writev|syscall\.`, fixtureWritePaths(1))
	v.Filters = NewFilterBar(url.Values{"sample": {"cpu"}, "zoom": {"runtime.main;main.a%3Bb"}, "ignore": {"runtime\\."},
		"tagfocus": {LabelFocus("thread", "kafka-producer-network-thread | p-1"), "window=^(10-12)$"}, "order": {"left-heavy"}},
		map[string][]string{"thread": {"main", "kafka-producer-network-thread | p-1"}, "state": {"RUNNABLE", "WAITING"}}, "zoom", "search")
	v.CSRF = "tok"
	return v
}

func fixtureCompareView() CompareProfilesView {
	base, target := fixtureMeta()
	wpTarget := fixtureWritePaths(1.1)
	wpTarget.Rows = append(wpTarget.Rows, WritePathRow{Direction: "write", Path: "gather", Value: 9e8, Samples: 90,
		Frames: []string{"internal/poll.(*FD).Writev", "internal/poll.writev"}})
	wpTarget.Rows[1].Value = 3e8 // write single mostly gone
	changes := []Change{
		{Name: "runtime.mallocgc", BaseFlat: 5e8, TargetFlat: 4e8, BaseCum: 9e8, TargetCum: 8e8},
		{Name: "internal/poll.writev", BaseFlat: 0, TargetFlat: 7e8, BaseCum: 0, TargetCum: 9e8},
		{Name: "syscall.write", BaseFlat: 1.1e9, TargetFlat: 0, BaseCum: 1.2e9, TargetCum: 0},
		{Name: "github.com/segmentio/kafka-go/protocol.(*encoder).Write", BaseFlat: 2e8, TargetFlat: 2e8, BaseCum: 6e8, TargetCum: 6.6e8},
	}
	v := NewCompareProfilesView(base, target, "cpu", "work",
		Normalization{Mode: "total", Scale: 0.8312, Explain: "base scaled by 0.83 so both totals are 4.4 s"},
		false, "the base run recorded no record count", changes, fixtureWritePaths(1), wpTarget)
	v.CSRF = "tok"
	return v
}

func TestGoldenProfilePage(t *testing.T) {
	u := newTestUI(t)
	golden.Check(t, "profile.html", render(t, u, "profile", fixtureProfileView()))
}

func TestGoldenCompareProfilesPage(t *testing.T) {
	u := newTestUI(t)
	golden.Check(t, "compare_profiles.html", render(t, u, "compare_profiles", fixtureCompareView()))
}

func TestNewProfileView(t *testing.T) {
	v := fixtureProfileView()
	for _, c := range []struct{ name, got, want string }{
		{"Title", v.Title, "Profile #7 · client cpu"},
		{"RunURL", v.RunURL, "/runs/42"},
		{"RunText", v.RunText, "run #42 · trunk"},
		{"Unit", v.Unit, "nanoseconds"},
		{"DataURL", v.FlameGraph.DataURL, "/api/profiles/7/flamegraph?format=rows&sample=cpu"},
		{"PprofURL", v.PprofURL, "/profiles/7/pprof/?si=cpu"},
		{"DownloadURL", v.DownloadURL, "/api/profiles/7/download"},
		{"FileName", v.FileName, "run42-client-cpu.pb.gz"},
		{"Zoom", v.FlameGraph.Zoom, "runtime.main;main.a%3Bb"},
		{"Size", v.Size, "47.1 KiB"},
		{"WritePaths.Total", v.WritePaths.Total, "4 s"},
		// Rows are ordered write before read; shares come from Value/Total.
		{"WritePaths[0]", v.WritePaths.Rows[0].Direction + " " + v.WritePaths.Rows[0].Percent, "write 30.0%"},
		{"WritePaths[1]", v.WritePaths.Rows[1].Value, "200 ms"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(v.SampleTypes) != 2 || v.SampleTypes[1] != (Option{Value: "cpu", Label: "cpu (nanoseconds)", Selected: true}) {
		t.Errorf("SampleTypes = %+v", v.SampleTypes)
	}

	// No sample asked for: pprof's default, the last type; its unit from
	// the type list.
	d := NewProfileView(ProfileMeta{ID: 3, RunID: 1, Role: "broker", Kind: "heap"},
		[]string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}, "", "", "", nil)
	if d.Sample != "inuse_space" || d.Unit != "bytes" || !d.SampleTypes[3].Selected || d.WritePaths != nil {
		t.Errorf("default sample %q unit %q types %+v wp %v", d.Sample, d.Unit, d.SampleTypes, d.WritePaths)
	}
	// A sample type named without a unit: the unit of Go's sample types.
	n := NewProfileView(ProfileMeta{ID: 3}, []string{"samples", "cpu"}, "samples", "", "", nil)
	if n.Unit != "count" || n.FlameGraph.DataURL != "/api/profiles/3/flamegraph?format=rows&sample=samples" {
		t.Errorf("unit %q, data URL %q", n.Unit, n.FlameGraph.DataURL)
	}
	// A sample type the list lacks stays selectable; query values are escaped.
	odd := NewProfileView(ProfileMeta{ID: 3}, []string{"cpu"}, "a b&c", "", "", nil)
	if last := odd.SampleTypes[len(odd.SampleTypes)-1]; !last.Selected || last.Value != "a b&c" {
		t.Errorf("unknown sample: %+v", odd.SampleTypes)
	}
	if want := "/api/profiles/3/flamegraph?format=rows&sample=a+b%26c"; odd.FlameGraph.DataURL != want {
		t.Errorf("escaped data URL %q, want %q", odd.FlameGraph.DataURL, want)
	}
}

func TestNewCompareProfilesView(t *testing.T) {
	v := fixtureCompareView()
	if v.Normalize != "total" || v.Requested != "per unit of work" || v.NormScale != "0.831" || v.NormLabel != "same total" {
		t.Errorf("normalisation: mode %q requested %q scale %q label %q", v.Normalize, v.Requested, v.NormScale, v.NormLabel)
	}
	if want := "/api/diff?base=7&format=rows&normalize=total&sample=cpu&target=9"; v.Diff.DataURL != want {
		t.Errorf("diff URL %q, want %q", v.Diff.DataURL, want)
	}
	if v.Diff.Mode != "diff" || v.Base.FlameGraph.DataURL != "/api/profiles/7/flamegraph?format=rows&sample=cpu" ||
		v.Target.FlameGraph.ZoomParam != "target_zoom" || v.Base.FlameGraph.SearchParam != "search" {
		t.Errorf("graphs: %+v / %+v / %+v", v.Diff, v.Base.FlameGraph, v.Target.FlameGraph)
	}
	if v.PprofURL != "/diff/7/9/pprof/?si=cpu" || v.SwapURL != "/compare/profiles?base=9&normalize=work&sample=cpu&target=7" {
		t.Errorf("pprof %q swap %q", v.PprofURL, v.SwapURL)
	}
	var work NormOption
	for _, o := range v.NormOptions {
		if o.Value == "work" {
			work = o
		}
		if o.Checked != (o.Value == "total") {
			t.Errorf("option %s checked %v", o.Value, o.Checked)
		}
	}
	if !work.Disabled || work.Reason != "the base run recorded no record count." {
		t.Errorf("work option %+v", work)
	}

	// Sorted by |Δ flat|, then |Δ cum|.
	var names []string
	for _, c := range v.Changes {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, " "), "syscall.write internal/poll.writev runtime.mallocgc github.com/segmentio/kafka-go/protocol.(*encoder).Write"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	gone, added, less, same := v.Changes[0], v.Changes[1], v.Changes[2], v.Changes[3]
	for _, c := range []struct{ name, got, want string }{
		{"gone Δ", gone.DeltaFlat, "-1.10 s"},
		{"gone Δ%", gone.DeltaFlatPct, "-100.0%"},
		{"gone class", gone.FlatClass, "delta-shrank"},
		{"new Δ", added.DeltaFlat, "+700 ms"},
		{"new Δ%", added.DeltaFlatPct, "new"},
		{"new class", added.FlatClass, "delta-grew"},
		{"less Δ%", less.DeltaFlatPct, "-20.0%"},
		{"same Δ", same.DeltaFlat, "0 ns"},
		{"same class", same.FlatClass, ""},
		{"same cum Δ%", same.DeltaCumPct, "+10.0%"},
		{"regexp", added.SearchRegexp, `^internal/poll\.writev$`},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	su, err := url.Parse(added.SearchURL)
	if err != nil || su.Path != CompareProfilesPath || su.Query().Get("search") != added.SearchRegexp || su.Fragment != "diff-flamegraph" {
		t.Errorf("search URL %q", added.SearchURL)
	}
	if _, err := regexp.Compile(added.SearchRegexp); err != nil {
		t.Error(err)
	}

	// Write paths: joined by direction and path, write before read,
	// gather before single.
	var rows []string
	for _, r := range v.WritePaths {
		rows = append(rows, r.Direction+"/"+r.Path+" "+r.Base+" → "+r.Target+" "+r.Delta+" "+r.DeltaPct)
	}
	want := []string{
		"write/gather — → 900 ms +900 ms +20.5 pp",
		"write/single 1.20 s → 300 ms -900 ms -23.2 pp",
		"read/single 200 ms → 220.0 ms +20.00 ms 0 pp",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("write paths:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if !v.HasWritePaths || v.BaseWPTotal != "4 s" || v.TargetWPTotal != "4.40 s" {
		t.Errorf("totals %q %q", v.BaseWPTotal, v.TargetWPTotal)
	}
}

func TestCompareViewDefaults(t *testing.T) {
	base, target := fixtureMeta()
	// Work available and in effect; no unit anywhere but the sample name.
	v := NewCompareProfilesView(base, target, "alloc_space", "", Normalization{Mode: "work", Scale: 2}, true, "", nil, nil, nil)
	if v.Unit != "bytes" || v.Normalize != "work" || v.Requested != "" || v.HasWritePaths || len(v.Changes) != 0 {
		t.Errorf("unit %q mode %q requested %q wp %v changes %d", v.Unit, v.Normalize, v.Requested, v.HasWritePaths, len(v.Changes))
	}
	for _, o := range v.NormOptions {
		if o.Disabled || o.Checked != (o.Value == "work") {
			t.Errorf("option %+v", o)
		}
	}
	// The server gave no mode: the request's, if valid, is shown.
	v = NewCompareProfilesView(base, target, "cpu/nanoseconds", "none", Normalization{}, false, "", nil, nil, nil)
	if v.Unit != "nanoseconds" || v.Sample != "cpu" || v.Normalize != "none" || v.NormScale != "" {
		t.Errorf("unit %q sample %q mode %q scale %q", v.Unit, v.Sample, v.Normalize, v.NormScale)
	}
	if !v.NormOptions[0].Disabled || v.NormOptions[0].Reason == "" {
		t.Errorf("work option without a reason: %+v", v.NormOptions[0])
	}
	// Nothing known: no normalize parameter, the server decides.
	v = NewCompareProfilesView(base, target, "", "bogus", Normalization{}, true, "", nil, nil, nil)
	if v.Diff.DataURL != "/api/diff?base=7&format=rows&target=9" || v.Normalize != "" {
		t.Errorf("data URL %q mode %q", v.Diff.DataURL, v.Normalize)
	}
	// At most MaxChangeRows rows, and how many there were.
	many := make([]Change, MaxChangeRows+7)
	for i := range many {
		many[i] = Change{Name: "f" + string(rune('a'+i%26)), TargetFlat: float64(i)}
	}
	v = NewCompareProfilesView(base, target, "cpu", "", Normalization{}, true, "", many, nil, nil)
	if len(v.Changes) != MaxChangeRows || v.ChangesTotal != MaxChangeRows+7 || v.Changes[0].TargetFlat != FormatProfileValue(float64(MaxChangeRows+6), "nanoseconds") {
		t.Errorf("%d rows of %d, first %+v", len(v.Changes), v.ChangesTotal, v.Changes[0])
	}
	if got := render(t, newTestUI(t), "compare_profiles", v); !strings.Contains(got, "the first 50 of 57") {
		t.Error("the changes table does not say it is capped")
	}
}

func TestFormatProfileValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{0, "nanoseconds", "0 ns"},
		{850, "nanoseconds", "850 ns"},
		{12345, "nanoseconds", "12.35 µs"},
		{12345678, "nanoseconds", "12.35 ms"},
		{240290000000, "nanoseconds", "240.3 s"},
		{-5e6, "nanoseconds", "-5 ms"},
		{1.5, "milliseconds", "1.50 ms"},
		{2, "seconds", "2 s"},
		{512, "bytes", "512 B"},
		{1536, "bytes", "1.5 KiB"},
		{3 << 20, "bytes", "3.0 MiB"},
		{1234567, "count", "1,234,567"},
		{1234.6, "count", "1,235"},
		{42, "", "42"},
		{7, "widgets", "7 widgets"},
		{math.NaN(), "nanoseconds", "NaN"},
	} {
		if got := FormatProfileValue(c.v, c.unit); got != c.want {
			t.Errorf("FormatProfileValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	for _, c := range []struct {
		base, target float64
		want         string
	}{
		{100, 112.34, "+12.3%"},
		{100, 100, "0%"},
		{100, 99.99, ">-0.1%"},
		{0, 5, "new"},
		{0, 0, "—"},
		{10, 200000, "+1,999,900.0%"},
	} {
		if got := formatDeltaPct(c.base, c.target); got != c.want {
			t.Errorf("formatDeltaPct(%v, %v) = %q, want %q", c.base, c.target, got, c.want)
		}
	}
}

func TestRunFlameGraph(t *testing.T) {
	rows := func(specs ...string) []ProfileRow {
		var out []ProfileRow
		for i, s := range specs {
			role, kind, _ := strings.Cut(s, " ")
			out = append(out, ProfileRow{ID: uint(i + 1), Role: role, Kind: kind})
		}
		return out
	}
	for _, c := range []struct {
		rows []ProfileRow
		want uint
	}{
		{rows("broker cpu", "client heap", "client cpu", "client cpu"), 3},
		{rows("broker heap", "broker cpu"), 2},
		{rows("client heap", "client allocs"), 0},
		// A JVM's run: no CPU profile, its wall profile (the client's first).
		{rows("broker wall", "client heap", "client wall"), 3},
		{rows("client wall", "broker cpu"), 2},
		{nil, 0},
	} {
		fg := runFlameGraph(c.rows)
		var got uint
		if fg != nil {
			got = fg.ProfileID
			if fg.URL != ProfileURL(got) || fg.DataURL != FlameGraphDataURL(got, "") || fg.ID == "" {
				t.Errorf("flame graph %+v", fg)
			}
			if wall := c.rows[got-1].Kind == "wall"; (fg.Note == WallNote) != wall {
				t.Errorf("rows %+v: note %q for a %s profile", c.rows, fg.Note, c.rows[got-1].Kind)
			}
		}
		if got != c.want {
			t.Errorf("rows %+v: picked %d, want %d", c.rows, got, c.want)
		}
	}
	v, err := NewRunView(finishedRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.FlameGraph == nil || v.FlameGraph.ProfileID != 7 || v.Profiles[1].URL != "/profiles/8" {
		t.Errorf("run view flame graph %+v, profiles %+v", v.FlameGraph, v.Profiles)
	}
	got := render(t, newTestUI(t), "run", v)
	for _, want := range []string{`class="flamegraph" data-src="/api/profiles/7/flamegraph?format=rows"`, `<a href="/profiles/8">profile #8: broker cpu</a>`, `/static/flamegraph.js?v=`, `/static/flamegraph.css?v=`} {
		if !strings.Contains(got, want) {
			t.Errorf("run page lacks %s", want)
		}
	}
	// No CPU profile: links, no inline graph, no flame-graph assets.
	r := finishedRun()
	r.Profiles = r.Profiles[:1]
	r.Profiles[0].Kind = "heap"
	v, _ = NewRunView(r, 0)
	got = render(t, newTestUI(t), "run", v)
	if v.FlameGraph != nil || strings.Contains(got, "flamegraph.js") || !strings.Contains(got, `<a href="/profiles/7">profile #7: client heap</a>`) {
		t.Errorf("run without a CPU profile: graph %+v", v.FlameGraph)
	}
}

// evilName is a Go function name as pprof may print it, plus markup.
const evilName = `pkg.Map[go.shape.string,*T]<script>alert(1)</script>&"'`

func TestProfilePagesEscape(t *testing.T) {
	u := newTestUI(t)
	base, target := fixtureMeta()
	base.RunLabel = `<script>alert(1)</script>`
	base.Role = `<b>role</b>`
	wp := &WritePaths{Total: 10, Unit: "count", Rows: []WritePathRow{{Direction: "write", Path: "<i>path</i>", Value: 5, Frames: []string{evilName}}}}
	pv := NewProfileView(base, []string{"cpu/nanoseconds", `<script>alert(1)</script>`}, "cpu", evilName, evilName, wp)
	cv := NewCompareProfilesView(base, target, "cpu", "total", Normalization{Mode: "total", Explain: `<script>alert(1)</script> & co`},
		false, `<script>alert(1)</script>`, []Change{{Name: evilName, TargetFlat: 1}}, wp, wp)
	for name, got := range map[string]string{"profile": render(t, u, "profile", pv), "compare_profiles": render(t, u, "compare_profiles", cv)} {
		if strings.Contains(got, "<script>alert") || strings.Contains(got, "<b>role") || strings.Contains(got, "<i>path") {
			t.Errorf("%s: unescaped markup", name)
		}
		if !strings.Contains(got, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: escaped text missing", name)
		}
		if !strings.Contains(got, `pkg.Map[go.shape.string,*T]&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#34;&#39;`) {
			t.Errorf("%s: function name not shown escaped", name)
		}
	}
	// Inside attributes too: the data attributes flamegraph.js reads.
	got := render(t, u, "profile", pv)
	if !strings.Contains(got, `data-search="pkg.Map[go.shape.string,*T]&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#34;&#39;"`) {
		t.Error("data-search not escaped as an attribute")
	}
	got = render(t, u, "compare_profiles", cv)
	if !strings.Contains(got, `data-fg-search="^pkg\.Map\[go\.shape\.string,\*T\]&lt;script&gt;alert\(1\)&lt;/script&gt;&amp;&#34;&#39;$"`) {
		t.Error("search link regexp not escaped as an attribute")
	}
}

func TestProfilePagesCSPAndNoExternalURLs(t *testing.T) {
	u := newTestUI(t)
	pages := map[string]string{
		"profile":          render(t, u, "profile", fixtureProfileView()),
		"compare_profiles": render(t, u, "compare_profiles", fixtureCompareView()),
		"profile zero":     render(t, u, "profile", ProfileView{}),
		"compare zero":     render(t, u, "compare_profiles", CompareProfilesView{}),
	}
	inlineScript := regexp.MustCompile(`<script(\s[^>]*)?>`)
	handler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	// The profile page's one inline style sheet: profile-first.css, whose
	// hash the server's CSP allows (server's TestProfilePageCSPAllowsItsStyle).
	firstStyle := "<style>/* profile first frame */</style>"
	for name, got := range pages {
		tags := inlineScript.FindAllString(got, -1)
		// flameviews.js runs before flamegraph.js where the graphs wait
		// (deferred: it sets their views before they mount); on the
		// profile page, whose graph draws at once, flamegraph.js loads it
		// and format.js after the first paint (data-later-scripts), with
		// the full style sheets (data-later-styles, and noscript links
		// without scripts).
		order := []string{"format.js", "flameviews.js", "flamegraph.js"}
		sheets := []string{"flamegraph.css"}
		if strings.HasPrefix(name, "profile") {
			order = []string{"flamegraph.js"}
			sheets = []string{"app.css", "flamegraph.css", "flameviews.css"}
			if !regexp.MustCompile(` data-later-scripts="/static/format\.js\?v=[0-9a-f]+ /static/flameviews\.js\?v=[0-9a-f]+"`).MatchString(got) {
				t.Errorf("%s: format.js and flameviews.js are not loaded after the first paint", name)
			}
			if strings.Count(got, "<style") != 1 || !strings.Contains(got, firstStyle) {
				t.Errorf("%s: inline style sheets other than profile-first.css", name)
			}
			got = strings.Replace(got, firstStyle, "", 1)
		}
		if len(tags) != len(order) {
			t.Errorf("%s: scripts %q, want %v only, in this order", name, tags, order)
		}
		for i := range min(len(tags), len(order)) {
			if !strings.Contains(tags[i], ` src="/static/`+order[i]+`?v=`) {
				t.Errorf("%s: scripts %q, want %v only, in this order", name, tags, order)
			}
		}
		for _, sheet := range sheets {
			if !strings.Contains(got, `<link rel="stylesheet" href="/static/`+sheet+`?v=`) {
				t.Errorf("%s: no %s", name, sheet)
			}
		}
		if m := handler.FindString(got); m != "" {
			t.Errorf("%s: inline event handler %q", name, m)
		}
		if strings.Contains(got, "javascript:") || strings.Contains(got, " style=") || strings.Contains(got, "<style") {
			t.Errorf("%s: javascript: URL or inline style", name)
		}
		if m := externalURL.FindString(got); m != "" {
			t.Errorf("%s: references %s", name, m)
		}
		if strings.Contains(got, "http://") || strings.Contains(got, "https://") {
			t.Errorf("%s: absolute URL", name)
		}
		if strings.Count(got, `<form`) != strings.Count(got, `method="get"`) {
			t.Errorf("%s: a form that is not a GET form (POST forms need _csrf)", name)
		}
	}
}

func TestProfilePagesContract(t *testing.T) {
	u := newTestUI(t)
	got := render(t, u, "profile", fixtureProfileView())
	for _, want := range []string{
		`<div id="flamegraph" class="flamegraph" data-src="/api/profiles/7/flamegraph?format=rows&amp;sample=cpu" data-mode="tree" data-zoom="runtime.main;main.a%3Bb"`,
		`id="flamegraph-search" class="fg-search" name="search"`,
		`id="flamegraph-reset" class="button fg-reset" hidden`,
		`id="flamegraph-match" class="fg-match"`,
		`id="flamegraph-canvas" class="fg-canvas"`,
		`id="flamegraph-tooltip" class="fg-tooltip" hidden`,
		`<select id="sample-type" name="sample" data-autosubmit>`,
		`<form class="inline-form" id="compare-profile-form" method="get" action="/compare/profiles">`,
		`<input type="hidden" name="base" value="7">`,
		`href="/profiles/7/pprof/?si=cpu"`,
		`href="/api/profiles/7/download" download="run42-client-cpu.pb.gz"`,
		`<table class="wp-table" id="write-paths">`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("profile page lacks %s", want)
		}
	}
	got = render(t, u, "compare_profiles", fixtureCompareView())
	for _, want := range []string{
		`<div id="base-flamegraph" class="flamegraph" data-src="/api/profiles/7/flamegraph?format=rows&amp;sample=cpu" data-mode="tree"`,
		`<div id="target-flamegraph" class="flamegraph" data-src="/api/profiles/9/flamegraph?format=rows&amp;sample=cpu" data-mode="tree"`,
		`<div id="diff-flamegraph" class="flamegraph" data-src="/api/diff?base=7&amp;format=rows&amp;normalize=total&amp;sample=cpu&amp;target=9" data-mode="diff"`,
		`<input type="radio" id="norm-work" name="normalize" value="work" disabled aria-describedby="norm-work-reason">`,
		`<input type="radio" id="norm-total" name="normalize" value="total" checked>`,
		`Unavailable: the base run recorded no record count.`,
		`base scaled by 0.83 so both totals are 4.4 s`,
		`href="/diff/7/9/pprof/?si=cpu"`,
		`<table class="changes-table" id="changes">`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("compare page lacks %s", want)
		}
	}
}

func TestSentences(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"the base run (run 3) has no record count"}, "the base run (run 3) has no record count."},
		{[]string{"the base run could not be read", "the target run (run 4) has no record count"}, "the base run could not be read. The target run (run 4) has no record count."},
		{[]string{"already a sentence.", "ünïcode first"}, "already a sentence. Ünïcode first."},
		{nil, ""},
	} {
		if got := Sentences(tc.in); got != tc.want {
			t.Errorf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestIDsSayWhatTheyName: profile ids and run ids are both numbers, so
// wherever a page shows one outside a column headed "Run" it says which:
// "profile #7", "run #42". And a profile's sample count, which counts its
// distinct stacks (pprof sample entries), is labelled as such.
func TestIDsSayWhatTheyName(t *testing.T) {
	u := newTestUI(t)
	rv, err := NewRunView(finishedRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Text between tags (and aria labels), and the ids in it with the word
	// before them.
	text := regexp.MustCompile(`>([^<]+)<|aria-label="([^"]+)"`)
	id := regexp.MustCompile(`(\pL*)\s*#[0-9]+`)
	for name, page := range map[string]string{
		"run":              render(t, u, "run", rv),
		"profile":          render(t, u, "profile", fixtureProfileView()),
		"compare_profiles": render(t, u, "compare_profiles", fixtureCompareView()),
	} {
		for _, m := range text.FindAllStringSubmatch(strings.ReplaceAll(page, "&#", "&"), -1) {
			for _, ref := range id.FindAllStringSubmatch(m[1]+m[2], -1) {
				if w := strings.ToLower(ref[1]); w != "run" && w != "profile" {
					t.Errorf("%s page: an id that does not say what it names: %q in %q", name, ref[0], m[0])
				}
			}
		}
		if strings.Contains(page, ">Samples<") {
			t.Errorf("%s page: a column or fact labelled Samples counts distinct stacks", name)
		}
	}
	if page := render(t, u, "run", rv); !strings.Contains(page, ">profile #7: client cpu</a>") {
		t.Errorf("run page: the flame graph links do not name their profiles")
	}
	v := fixtureCompareView()
	if v.Base.Title != "profile #7: client cpu" || !strings.Contains(v.Diff.Label, "profile #9 against profile #7") {
		t.Errorf("titles %q, %q", v.Base.Title, v.Diff.Label)
	}
	if page := render(t, u, "profile", fixtureProfileView()); !strings.Contains(page, "<dt>Distinct stacks</dt>") {
		t.Errorf("profile page: no distinct stacks fact")
	}
	runs := compareRuns()
	tab, err := compare.Build(compare.Columns(runs, compare.ByRun), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cv := NewCompareView(tab, runs, CompareQuery{Runs: []uint{1, 2, 3}, By: compare.ByRun}, "")
	if got := cv.Table.Columns[1].Runs[0].Text; got != "run #2 branch" {
		t.Errorf("comparison column run link %q, want run #2 branch", got)
	}
	if page := render(t, u, "compare", cv); !strings.Contains(page, `<a href="/runs/2">run #2</a>`) {
		t.Errorf("comparison columns do not say their ids are runs")
	}
}
