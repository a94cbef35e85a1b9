package ui

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

func TestRunsViewPagination(t *testing.T) {
	f := RunsQuery{Workload: "producer", Label: "my branch", Status: "succeeded", Page: 2, PerPage: 20}
	v := NewRunsView(nil, 45, f, []string{"trunk"})
	if v.PageCount != 3 || v.PageText != "page 2 of 3" {
		t.Errorf("PageCount %d, PageText %q; want 3, %q", v.PageCount, v.PageText, "page 2 of 3")
	}
	if want := "/?label=my+branch&per_page=20&status=succeeded&workload=producer"; v.PrevURL != want {
		t.Errorf("PrevURL = %q, want %q", v.PrevURL, want)
	}
	if want := "/?label=my+branch&page=3&per_page=20&status=succeeded&workload=producer"; v.NextURL != want {
		t.Errorf("NextURL = %q, want %q", v.NextURL, want)
	}
	if v.TotalText != "45 runs match the filters" {
		t.Errorf("TotalText = %q, want %q", v.TotalText, "45 runs match the filters")
	}
	// The current label stays selectable even if no run carries it.
	found := false
	for _, o := range v.Labels {
		if o.Value == "my branch" && o.Selected {
			found = true
		}
	}
	if !found {
		t.Errorf("label filter %q not selected among %v", f.Label, v.Labels)
	}

	last := NewRunsView(nil, 45, RunsQuery{Page: 3, PerPage: 20}, nil)
	if last.NextURL != "" || last.PrevURL != "/?page=2&per_page=20" {
		t.Errorf("last page: PrevURL %q, NextURL %q", last.PrevURL, last.NextURL)
	}
	empty := NewRunsView(nil, 0, RunsQuery{}, nil)
	if empty.PageText != "page 1 of 1" || empty.PrevURL != "" || empty.NextURL != "" {
		t.Errorf("empty list: %q, prev %q, next %q", empty.PageText, empty.PrevURL, empty.NextURL)
	}
}

func TestParseRunsQuery(t *testing.T) {
	q, _ := url.ParseQuery("workload=consumer&label=+trunk+&status=failed&page=-3&per_page=100000")
	got := ParseRunsQuery(q)
	want := RunsQuery{Workload: "consumer", Label: "trunk", Status: "failed", Page: 1, PerPage: MaxPerPage}
	if got != want {
		t.Errorf("ParseRunsQuery = %+v, want %+v", got, want)
	}
	if got := ParseRunsQuery(url.Values{"page": {"3"}}); got.Offset() != 2*DefaultPerPage {
		t.Errorf("Offset = %d, want %d", got.Offset(), 2*DefaultPerPage)
	}
	// URL and ParseRunsQuery round-trip.
	f := RunsQuery{Workload: "producer", Label: "a&b=c", Group: "g1", Page: 4, PerPage: 10}
	u, _ := url.Parse(f.URL())
	if back := ParseRunsQuery(u.Query()); back != f {
		t.Errorf("round trip: %+v, want %+v", back, f)
	}
}

func TestRunRow(t *testing.T) {
	r := finishedRun()
	row := newRunRow(r)
	for _, c := range []struct{ name, got, want string }{
		{"URL", row.URL, "/runs/42"},
		{"Created", row.Created, "2025-03-14 09:26:53"},
		{"Duration", row.Duration, "1m 05s"},
		{"Records", row.Records, "72,900 records/s"},
		{"MB", row.MB, "17.80 MB/s"},
		{"P99", row.P99, "1,440 ms"},
		{"Group", row.Group, "g7f3a9c2 rep 2"},
		{"GroupURL", row.GroupURL, "/?group=g7f3a9c2e1d0"},
		{"StatusClass", row.StatusClass, "badge badge-succeeded"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	q := newRunRow(queuedRun())
	if q.Status != "queued" || q.Records != "—" || q.Duration != "—" || q.Group != "" {
		t.Errorf("queued row: status %q, records %q, duration %q, group %q", q.Status, q.Records, q.Duration, q.Group)
	}
	w := newRunRow(&rundoc.Run{GroupID: "abc", Warmup: true, Status: "weird"})
	if w.Group != "abc warm-up" || w.StatusClass != "badge badge-unknown" {
		t.Errorf("warm-up row: group %q, class %q", w.Group, w.StatusClass)
	}
}

func TestNewRunView(t *testing.T) {
	if _, err := NewRunView(nil, 0); err == nil {
		t.Error("NewRunView(nil) succeeded")
	}
	v, err := NewRunView(finishedRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Live || !v.Final || v.Incomplete {
		t.Errorf("finished run: Live %v, Final %v, Incomplete %v", v.Live, v.Final, v.Incomplete)
	}
	if len(v.Charts) != 4 {
		t.Errorf("%d charts, want 4 (records/s, MB/s, latency, CPU)", len(v.Charts))
	}
	if len(v.Profiles) != 2 || v.Profiles[1].FileName != "run42-broker-cpu.pb.gz" ||
		v.Profiles[1].DownloadURL != "/api/profiles/8/download" || v.Profiles[1].Size != "1.0 MiB" ||
		v.Profiles[0].SHA256Short != "9f86d081884c" {
		t.Errorf("profiles = %+v", v.Profiles)
	}
	if v.Metrics[0].Arrow != "↑" || v.Metrics[1].Arrow != "↓" || v.Metrics[2].Value != "56.0 KiB" {
		t.Errorf("metrics = %+v", v.Metrics)
	}
	if v.LiveCharts != "" || v.LiveChartsURL != "" {
		t.Errorf("a finished run's page has live charts: %q at %q", v.LiveCharts, v.LiveChartsURL)
	}

	bad := finishedRun()
	bad.SetDocuments("{not json", "[1]")
	bad.Spec = "plain text"
	bad.Series = nil
	bad.Complete = false
	bv, err := NewRunView(bad, 0)
	if err != nil {
		t.Fatal(err)
	}
	if bv.EnvironmentRaw != "{not json" || bv.MeasurementRaw != "[1]" || bv.Spec != "plain text" || !bv.Incomplete {
		t.Errorf("bad JSON: env raw %q, measurement raw %q, spec %q, incomplete %v", bv.EnvironmentRaw, bv.MeasurementRaw, bv.Spec, bv.Incomplete)
	}
	if len(bv.Charts) != 1 || !strings.Contains(string(bv.Charts[0]), "no interval data") {
		t.Errorf("no series: charts %q", bv.Charts)
	}

	running := finishedRun()
	running.Status = rundoc.StatusRunning
	rv, _ := NewRunView(running, 5)
	if !rv.Live || rv.Final || rv.Queued || rv.QueueText != "" {
		t.Errorf("running: Live %v, Final %v, Queued %v, QueueText %q", rv.Live, rv.Final, rv.Queued, rv.QueueText)
	}
}

func TestNewRunFormFresh(t *testing.T) {
	v := NewRunForm(nil, nil)
	fields := formFields(v)
	if v.Workload != "producer" || len(v.Errors) != 0 {
		t.Errorf("fresh form: workload %q, %d errors", v.Workload, len(v.Errors))
	}
	for name, want := range map[string]string{"repetitions": "1", "warmup_runs": "0", "target": "embedded", "security-protocol": "PLAINTEXT", "sasl-mechanism": "PLAIN", "mode": ""} {
		if got := fields[name].Value; got != want {
			t.Errorf("fresh %s = %q, want %q", name, got, want)
		}
	}
	for _, excluded := range []string{"payload-file", "payload-delimiter", "producer.config", "consumer.config"} {
		if _, ok := fields[excluded]; ok {
			t.Errorf("form offers %s", excluded)
		}
	}
	if f := fields["bootstrap-server"]; f.Flag {
		t.Error("bootstrap-server rendered as a runner flag")
	}
	defaults := map[string]string{}
	for _, f := range rundoc.Flags() {
		defaults[f.Name] = f.Default
	}
	// Empty: the form's default is a timed run (TestFormDefaultsToTimedRun).
	if f := fields["num-records"]; f.Kind != "number" || f.Placeholder != "" || f.Value != "" || f.Step != "1" {
		t.Errorf("num-records = %+v", f)
	}
	if f := fields["throughput"]; f.Kind != "number" || f.Step != "any" || f.AppliesTo != "" || f.Workloads != "producer e2e" {
		t.Errorf("throughput = %+v", f)
	}
	if f := fields["print-metrics"]; f.Kind != "checkbox" || f.Value != "true" || f.Checked {
		t.Errorf("print-metrics = %+v", f)
	}
	if f := fields["producer-props"]; f.Kind != "textarea" {
		t.Errorf("producer-props kind %q, want textarea", f.Kind)
	}
	if got := checked(fields["profile"]); got != defaults["profile"] {
		t.Errorf("fresh profile boxes = %q, want %q", got, defaults["profile"])
	}
	if f := fields["mode"]; f.Kind != "select" || len(f.Options) != 8 {
		t.Errorf("mode = %+v", f)
	}
	if f := fields["topic"]; f.Placeholder != "kbench-<workload>" {
		t.Errorf("topic placeholder %q", f.Placeholder)
	}
}

func TestNewRunFormKeepsValues(t *testing.T) {
	withFixtureFlags(t)
	values := url.Values{
		"workload": {"consumer"}, "label": {" spaced "}, "repetitions": {""}, "target": {"nonsense"},
		"num-records": {"12x"}, "profile": {"none"}, "from-latest": {"on"}, "mode": {"assign"},
		"consumer-props": {"a=1\nb=2"},
	}
	v := NewRunForm(values, map[string]string{"num-records": "not a number", "from-latest": "", "zzz": "other"})
	fields := formFields(v)
	for name, want := range map[string]string{"label": " spaced ", "repetitions": "", "target": "embedded", "num-records": "12x", "mode": "assign", "consumer-props": "a=1\nb=2"} {
		if got := fields[name].Value; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := checked(fields["profile"]); got != "" {
		t.Errorf("profile boxes = %q, want none ticked", got)
	}
	if !fields["from-latest"].Checked {
		t.Error("from-latest not kept checked")
	}
	f := fields["num-records"]
	if f.Kind != "text" {
		t.Errorf("num-records holding %q renders as %s, want text (a number input would blank it)", f.Value, f.Kind)
	}
	if f.Error != "not a number" || f.ErrorID != "f-num-records-error" || !strings.HasPrefix(f.DescribedBy, "f-num-records-error ") {
		t.Errorf("num-records error wiring: %+v", f)
	}
	var summary []string
	for _, e := range v.Errors {
		summary = append(summary, e.Field+e.Anchor)
	}
	if got, want := strings.Join(summary, " "), "num-records#f-num-records from-latest#f-from-latest zzz"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if fields["from-latest"].Error != "is not valid" {
		t.Errorf("empty message became %q", fields["from-latest"].Error)
	}
}

func TestFormParams(t *testing.T) {
	withFixtureFlags(t)
	values := url.Values{
		"workload":       {"producer"},
		"_csrf":          {"x"},
		"label":          {"trunk"},
		"topic":          {" t1 "},
		"num-records":    {"1000"},
		"record-size":    {""},
		"throughput":     {"-1"},
		"print-metrics":  {"true"},
		"profile":        {"none", "cpu", "mutex"},
		"producer-props": {"acks=all\r\n\n# comment\nlinger.ms=5\n"},
		"consumer-props": {"ignored=1"},
		"mode":           {"client"},
		"payload-file":   {"/etc/passwd"},
	}
	w, params := FormParams(values)
	if w != "producer" {
		t.Errorf("workload %q", w)
	}
	got := map[string]string{}
	for k, v := range params {
		got[k] = string(v)
	}
	want := map[string]string{
		"topic":          `"t1"`,
		"num-records":    `"1000"`,
		"throughput":     `"-1"`,
		"print-metrics":  `true`,
		"profile":        `"cpu,mutex"`,
		"producer-props": `["acks=all","linger.ms=5"]`,
		"mode":           `"client"`,
	}
	if len(got) != len(want) {
		t.Errorf("params = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("params[%s] = %s, want %s", k, got[k], v)
		}
	}
	_, params = FormParams(url.Values{"workload": {"consumer"}, "profile": {"none"}})
	if p := string(params["profile"]); p != `"none"` {
		t.Errorf("unticked profile = %s, want \"none\"", p)
	}
	var probe map[string]json.RawMessage = params
	if len(probe) != 2 || string(probe["duration"]) != `"10"` {
		t.Errorf("consumer params = %v, want the profile and the form's default duration", probe)
	}
}

func formFields(v NewRunFormView) map[string]FormField {
	m := map[string]FormField{}
	for _, s := range v.Sections {
		for _, f := range s.Fields {
			m[f.Name] = f
		}
	}
	return m
}

func checked(f FormField) string {
	var out []string
	for _, o := range f.Options {
		if o.Selected {
			out = append(out, o.Value)
		}
	}
	return strings.Join(out, ",")
}

func TestRunsViewNewestFirst(t *testing.T) {
	old := rundoc.Run{ID: 1, CreatedAt: t0}
	tie := rundoc.Run{ID: 2, CreatedAt: t0}
	newer := rundoc.Run{ID: 3, CreatedAt: t0.Add(time.Second)}
	v := NewRunsView([]rundoc.Run{old, newer, tie}, 3, RunsQuery{}, nil)
	var ids []uint
	for _, r := range v.Rows {
		ids = append(ids, r.ID)
	}
	if len(ids) != 3 || ids[0] != 3 || ids[1] != 2 || ids[2] != 1 {
		t.Errorf("row order %v, want [3 2 1]", ids)
	}
}

// TestRunsQueryIDs: the ids filter the list's refresh asks with keeps the
// valid, distinct run ids in order and survives the URL round trip.
func TestRunsQueryIDs(t *testing.T) {
	for _, tc := range []struct {
		query string
		ids   string
		list  []uint
	}{
		{"ids=3,5,7", "3,5,7", []uint{3, 5, 7}},
		{"ids=7&ids=3,+5", "7,3,5", []uint{7, 3, 5}},
		{"ids=3,3,x,0,-1,,99999999999,4", "3,4", []uint{3, 4}},
		{"ids=", "", nil},
		{"", "", nil},
	} {
		q, _ := url.ParseQuery(tc.query)
		f := ParseRunsQuery(q)
		if f.IDs != tc.ids || !slices.Equal(f.IDList(), tc.list) {
			t.Errorf("%q: IDs %q (%v), want %q (%v)", tc.query, f.IDs, f.IDList(), tc.ids, tc.list)
		}
		u, _ := url.Parse(f.URL())
		if back := ParseRunsQuery(u.Query()); back != f {
			t.Errorf("%q: round trip %+v, want %+v", tc.query, back, f)
		}
	}
	var many []string
	for i := 1; i <= MaxPerPage+10; i++ {
		many = append(many, strconv.Itoa(i))
	}
	if n := len(ParseRunsQuery(url.Values{"ids": {strings.Join(many, ",")}}).IDList()); n != MaxPerPage {
		t.Errorf("%d ids kept of %d, want at most %d", n, len(many), MaxPerPage)
	}
	v := NewRunsView(nil, 0, RunsQuery{IDs: "3,5"}, nil)
	if !v.Filtered || v.IDs != "3,5" {
		t.Errorf("list narrowed to ids: Filtered %v, IDs %q", v.Filtered, v.IDs)
	}
}

// TestRunViewImportedProfilesOnly: a run imported from profiles alone has
// no output, metrics, intervals, measurement or environment: its page
// leaves those sections out and says why, instead of five empty ones. A
// launched run still shows them (their emptiness says something there).
func TestRunViewImportedProfilesOnly(t *testing.T) {
	imported := &rundoc.Run{ID: 5, Label: "java", Workload: "imported", Status: rundoc.StatusSucceeded, Source: rundoc.SourceImported, Complete: true,
		Spec: `{"workload":"imported","files":["a.folded"]}`, CreatedAt: t0, StartedAt: &t0, FinishedAt: &t0,
		Profiles: []rundoc.Profile{{ID: 9, RunID: 5, Role: "client", Kind: "cpu", Bytes: 300, Samples: 2, Uploaded: true}}}
	v, err := NewRunView(imported, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, newTestUI(t), "run", v)
	for _, id := range []string{"output-heading", "metrics-heading", "charts-heading", "measurement-heading", "environment-heading"} {
		if strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("the page of imported profiles shows the empty section %s", id)
		}
	}
	if !strings.Contains(page, `id="profiles-heading"`) || !strings.Contains(page, "profiles only") {
		t.Errorf("the page lacks the profiles or the note saying why nothing else is shown")
	}
	launched := *imported
	launched.Source, launched.Workload = rundoc.SourceLaunched, "producer"
	v, _ = NewRunView(&launched, 0)
	page = render(t, newTestUI(t), "run", v)
	for _, id := range []string{"output-heading", "metrics-heading", "charts-heading", "measurement-heading", "environment-heading"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("a launched run's page lost its section %s", id)
		}
	}
}

// TestFormDefaultsToTimedRun: a producer or consumer run from the form
// lasts 10 s unless the form gives a count or a duration (the CLI's
// default stays Kafka's count); the write path keeps its --requests.
func TestFormDefaultsToTimedRun(t *testing.T) {
	tests := []struct {
		values url.Values
		want   map[string]string
	}{
		{url.Values{"workload": {"producer"}}, map[string]string{"duration": `"10"`}},
		{url.Values{"workload": {"consumer"}}, map[string]string{"duration": `"10"`}},
		{url.Values{"workload": {"producer"}, "num-records": {"1000"}}, map[string]string{"num-records": `"1000"`}},
		{url.Values{"workload": {"consumer"}, "messages": {"1000"}}, map[string]string{"messages": `"1000"`}},
		{url.Values{"workload": {"producer"}, "duration": {"2.5"}}, map[string]string{"duration": `"2.5"`}},
		{url.Values{"workload": {"producer"}, "num-records": {" "}, "duration": {""}}, map[string]string{"duration": `"10"`}},
		{url.Values{"workload": {"writepath"}}, map[string]string{}},
	}
	for _, tt := range tests {
		w, params := FormParams(tt.values)
		got := map[string]string{}
		for k, v := range params {
			got[k] = string(v)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("FormParams(%v) = %v, want %v", tt.values, got, tt.want)
		}
		spec, err := rundoc.SpecFromParams(rundoc.Workload(w), params)
		if err != nil {
			t.Errorf("%v: the form's params do not make a spec: %v", tt.values, err)
			continue
		}
		if _, timed := tt.want["duration"]; timed && (spec.Duration <= 0 || spec.NumRecords != 0) {
			t.Errorf("%v: spec duration %v, count %d; want a timed run", tt.values, spec.Duration, spec.NumRecords)
		}
	}
	fields := formFields(NewRunForm(nil, nil))
	if f := fields["duration"]; f.Placeholder != "10" || !strings.Contains(f.Help, "10 s") {
		t.Errorf("duration field: placeholder %q, help %q; want the form's 10 s default shown", f.Placeholder, f.Help)
	}
	for _, name := range []string{"num-records", "messages"} {
		if f := fields[name]; f.Placeholder != "" || !strings.Contains(f.Help, "10 s") {
			t.Errorf("%s field: placeholder %q, help %q; want no count shown as the default, and the 10 s run said", name, f.Placeholder, f.Help)
		}
	}
}
