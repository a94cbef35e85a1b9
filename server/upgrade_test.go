package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/store"
)

// upgradeRecord, when set, makes TestUpgradeKeepsPages write what the code
// serves instead of comparing. It was set once, with the code that wrote
// testdata/upgrade/kbench-0002.db, to record that code's answers: later
// code must give the same, so the files are never rewritten by -update.
const upgradeRecord = "KBENCH_UPGRADE_RECORD"

// upgradeFixes are the differences from the recorded answers that are
// fixes made since, each with why: the record stays what the earlier code
// served, and the test applies these to it before comparing, so a change
// to what users see is always a named decision here, never a re-record.
var upgradeFixes = []struct {
	target   string // the page or answer the fix changes
	old, new string // the recorded text and what the fixed code serves
	why      string
}{
	{"/api/diff?base=1&target=2&format=compact", "total 10ms / base total 10ms", "total 10 ms / base total 10 ms",
		"issue 12: the diff's explanation writes durations with the one number formatter, as every page does (a space before the unit)"},
	{"/compare?by=label&runs=3,4,5,6",
		"        <span class=\"col-runs\"><a href=\"/runs/3\">run #3</a>, <a href=\"/runs/6\">run #6</a></span>\n",
		"        <span class=\"col-runs\"><a href=\"/runs/3\">run #3</a>, <a href=\"/runs/6\">run #6</a></span>\n        <span class=\"col-order\"> <a class=\"col-move col-right\" href=\"/compare?by=label&amp;runs=4%2C5%2C3%2C6\" title=\"move this column right\" aria-label=\"Move none right\">▶</a>\n        </span>\n",
		"issue 23: the comparison's columns can be moved and made the baseline from their headings"},
	{"/compare?by=label&runs=3,4,5,6",
		"        <span class=\"col-runs\"><a href=\"/runs/4\">run #4</a>, <a href=\"/runs/5\">run #5</a></span>\n",
		"        <span class=\"col-runs\"><a href=\"/runs/4\">run #4</a>, <a href=\"/runs/5\">run #5</a></span>\n        <span class=\"col-order\"><a class=\"col-move col-left\" href=\"/compare?by=label&amp;runs=4%2C5%2C3%2C6\" title=\"move this column left\" aria-label=\"Move lz4 left\">◀</a> <a class=\"col-make-baseline\" href=\"/compare?by=label&amp;runs=4%2C5%2C3%2C6\" title=\"compare the other columns against this one\">make baseline</a>\n        </span>\n",
		"issue 23: the comparison's columns can be moved and made the baseline from their headings"},
	{"/compare?by=group&runs=1,2,3,4,5,6",
		"        <span class=\"col-runs\"><a href=\"/runs/1\">run #1</a>, <a href=\"/runs/2\">run #2</a></span>\n",
		"        <span class=\"col-runs\"><a href=\"/runs/1\">run #1</a>, <a href=\"/runs/2\">run #2</a></span>\n        <span class=\"col-order\"> <a class=\"col-move col-right\" href=\"/compare?by=group&amp;runs=3%2C6%2C1%2C2%2C4%2C5\" title=\"move this column right\" aria-label=\"Move trunk right\">▶</a>\n        </span>\n",
		"issue 23: the comparison's columns can be moved and made the baseline from their headings"},
	{"/compare?by=group&runs=1,2,3,4,5,6",
		"        <span class=\"col-runs\"><a href=\"/runs/3\">run #3</a>, <a href=\"/runs/6\">run #6</a></span>\n",
		"        <span class=\"col-runs\"><a href=\"/runs/3\">run #3</a>, <a href=\"/runs/6\">run #6</a></span>\n        <span class=\"col-order\"><a class=\"col-move col-left\" href=\"/compare?by=group&amp;runs=3%2C6%2C1%2C2%2C4%2C5\" title=\"move this column left\" aria-label=\"Move none left\">◀</a> <a class=\"col-make-baseline\" href=\"/compare?by=group&amp;runs=3%2C6%2C1%2C2%2C4%2C5\" title=\"compare the other columns against this one\">make baseline</a> <a class=\"col-move col-right\" href=\"/compare?by=group&amp;runs=1%2C2%2C4%2C5%2C3%2C6\" title=\"move this column right\" aria-label=\"Move none right\">▶</a>\n        </span>\n",
		"issue 23: the comparison's columns can be moved and made the baseline from their headings"},
	{"/compare?by=group&runs=1,2,3,4,5,6",
		"        <span class=\"col-runs\"><a href=\"/runs/4\">run #4</a>, <a href=\"/runs/5\">run #5</a></span>\n",
		"        <span class=\"col-runs\"><a href=\"/runs/4\">run #4</a>, <a href=\"/runs/5\">run #5</a></span>\n        <span class=\"col-order\"><a class=\"col-move col-left\" href=\"/compare?by=group&amp;runs=1%2C2%2C4%2C5%2C3%2C6\" title=\"move this column left\" aria-label=\"Move lz4 left\">◀</a> <a class=\"col-make-baseline\" href=\"/compare?by=group&amp;runs=4%2C5%2C1%2C2%2C3%2C6\" title=\"compare the other columns against this one\">make baseline</a>\n        </span>\n",
		"issue 23: the comparison's columns can be moved and made the baseline from their headings"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.md",
		"\n\n| Metric | #1 trunk · baseline | #2 trunk |\n",
		"\n\n> **Embedded broker.** All runs ran on the embedded broker. The embedded broker is one in-memory broker (kfake) on the machine that runs kbench: no disk, no replicas, no network between brokers. acks, replication and durability settings cannot show their cost on it; measure those against a real cluster.\n\n| Metric | #1 trunk · baseline | #2 trunk |\n",
		"issue 23: a comparison of runs on the embedded broker says it is one in-memory broker"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.md",
		upgradeLegendOld,
		upgradeLegendNew,
		"issue 23: the change column is the ratio of the medians on every row; the Hodges-Lehmann estimate has a column of its own"},
	{"/api/compare?by=label&runs=3,4,5,6",
		upgradeLegendOld,
		upgradeLegendNew,
		"issue 23: the change column is the ratio of the medians on every row; the Hodges-Lehmann estimate has a column of its own"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.json",
		upgradeLegendOld,
		upgradeLegendNew,
		"issue 23: the change column is the ratio of the medians on every row; the Hodges-Lehmann estimate has a column of its own"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.csv",
		"delta_pct,p_value",
		"median_change_pct,p_value",
		"issue 23: the CSV says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.csv",
		"change_estimate_pct,change_ci_low,change_ci_high",
		"hl_change_pct,hl_ci_low,hl_ci_high",
		"issue 23: the CSV says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/api/compare?by=label&runs=3,4,5,6",
		"\"delta_pct\"",
		"\"median_change_pct\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/api/compare?by=label&runs=3,4,5,6",
		"\"change_estimate_pct\"",
		"\"hl_change_pct\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/api/compare?by=label&runs=3,4,5,6",
		"\"change_ci_low\"",
		"\"hl_ci_low\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/api/compare?by=label&runs=3,4,5,6",
		"\"change_ci_high\"",
		"\"hl_ci_high\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/api/compare?by=label&runs=3,4,5,6",
		"\"change_ci_level\"",
		"\"hl_ci_level\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.json",
		"\"delta_pct\"",
		"\"median_change_pct\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.json",
		"\"change_estimate_pct\"",
		"\"hl_change_pct\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.json",
		"\"change_ci_low\"",
		"\"hl_ci_low\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.json",
		"\"change_ci_high\"",
		"\"hl_ci_high\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
	{"/r/y645hihxqnu6znqrg6krsjhlei.json",
		"\"change_ci_level\"",
		"\"hl_ci_level\"",
		"issue 23: the JSON says which change is which: median_change_pct (ratio of medians), hl_* (Hodges-Lehmann)"},
}

// The comparison legend the record holds, and today's (issue 23: the
// change column is the ratio of the medians, the Hodges-Lehmann estimate
// has a column of its own).
const (
	upgradeLegendOld = "↑ higher is better, ↓ lower is better · value: the run's figure, or the median of a column's runs with its 95% confidence interval (±) · (change vs the baseline column) · tested rows (the workload's headline metrics; bold in Markdown): the change is the Hodges-Lehmann estimate with its 95% distribution-free interval [low, high] (Mann-Whitney U) · ✓ better, ✗ worse: significant (Mann-Whitney U, ≥ 4 runs per side, p adjusted by Benjamini-Hochberg over the table's tested changes (none here): false discovery rate q = 0.05, adjusted p ≤ 0.05) · ≠ significant change, metric without a direction · ~ no change beyond ±5%, with its adjusted p-value · borderline: adjusted p ≤ 0.1 · inconclusive: the interval holds 0 and changes beyond ±5%: run more repetitions · n<4 too few runs to test, no verdict · ✓? ✗? single runs: direction only, not tested · = same value · other rows are descriptive: the change of the medians, not tested · — not measured"
	upgradeLegendNew = "↑ higher is better, ↓ lower is better · value: the run's figure, or the median of a column's runs with its 95% confidence interval (±) · (change vs the baseline column): on every row the ratio of the values shown, the column's median over the baseline's, minus 1, in percent, followed by the verdict · Hodges-Lehmann Δ column, for tested rows (the workload's headline metrics; bold in Markdown): the Hodges-Lehmann estimate of the change (the median of the ratios of every candidate run to every baseline run) with its 95% distribution-free interval [low, high] (Mann-Whitney U) and the adjusted p-value · ✓ better, ✗ worse: significant (Mann-Whitney U, ≥ 4 runs per side, p adjusted by Benjamini-Hochberg over the table's tested changes (none here): false discovery rate q = 0.05, adjusted p ≤ 0.05) · ≠ significant change, metric without a direction · ~ no change beyond ±5% · borderline: adjusted p ≤ 0.1 · inconclusive: the Hodges-Lehmann interval holds 0 and changes beyond ±5%: run more repetitions · n<4 too few runs to test, no verdict · ✓? ✗? single runs: direction only, not tested · = same value · other rows are descriptive: not tested · — not measured"
)

// tableRE finds the tables of a page: what "shows the same" means for a
// page whose scripts, styles and layout may change while its figures must
// not.
var tableRE = regexp.MustCompile(`(?s)<table\b.*?</table>`)

// TestUpgradeKeepsPages opens a database written by an earlier kbench
// (testdata/upgrade/kbench-0002.db, made by make.sh beside it with real
// runs of every kind) with today's code, which upgrades it, and checks
// that every run, report and profile of it still shows the same: the
// tables of each page byte for byte, the same API answers, report exports,
// flame graphs and diffs (JSON compared as documents: key order aside) and
// the profile downloads byte for byte.
func TestUpgradeKeepsPages(t *testing.T) {
	var fx struct {
		Group        []uint `json:"group"`
		AB           []uint `json:"ab"`
		Consumer     uint   `json:"consumer"`
		Writepath    uint   `json:"writepath"`
		Failed       uint   `json:"failed"`
		Canceled     uint   `json:"canceled"`
		Imported     uint   `json:"imported"`
		ProfilesOnly uint   `json:"profiles_only"`
		Report       string `json:"report"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "upgrade", "runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := os.ReadFile(filepath.Join("testdata", "upgrade", "kbench-0002.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kbench.db"), db, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "kbench.db"))
	if err != nil {
		t.Fatalf("open the database of an earlier kbench: %v", err)
	}
	defer st.Close()
	s, err := New(Config{DataDir: dir}, testDeps(st, newFakeRuns()))
	if err != nil {
		t.Fatal(err)
	}

	all := append(append([]uint{}, fx.Group...), fx.AB...)
	all = append(all, fx.Consumer, fx.Writepath, fx.Failed, fx.Canceled, fx.Imported, fx.ProfilesOnly)
	joined := func(ids []uint) string {
		var parts []string
		for _, id := range ids {
			parts = append(parts, fmt.Sprint(id))
		}
		return strings.Join(parts, ",")
	}
	pages := []string{"/", "/?workload=producer&status=succeeded", "/compare?by=group&runs=" + joined(all[:6]),
		"/compare?by=label&runs=" + joined(fx.AB), "/r/" + fx.Report}
	answers := []string{"/api/runs?limit=50", "/api/compare?by=label&runs=" + joined(fx.AB),
		"/r/" + fx.Report + ".md", "/r/" + fx.Report + ".csv", "/r/" + fx.Report + ".json"}
	var profileIDs []uint
	for _, id := range all {
		pages = append(pages, fmt.Sprintf("/runs/%d", id))
		answers = append(answers, fmt.Sprintf("/api/runs/%d", id), fmt.Sprintf("/api/runs/%d/profiles", id))
		ps, err := st.ListProfiles(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			profileIDs = append(profileIDs, p.ID)
		}
	}
	if len(profileIDs) < 2 {
		t.Fatalf("the fixture has %d profiles, want several", len(profileIDs))
	}
	for _, id := range profileIDs {
		pages = append(pages, fmt.Sprintf("/profiles/%d", id))
		answers = append(answers, fmt.Sprintf("/api/profiles/%d/flamegraph", id), fmt.Sprintf("/api/profiles/%d/flamegraph?format=compact", id),
			fmt.Sprintf("/api/profiles/%d/writepaths", id), fmt.Sprintf("/api/profiles/%d/download", id))
	}
	base, target := profileIDs[0], profileIDs[1]
	pages = append(pages, fmt.Sprintf("/compare/profiles?base=%d&target=%d", base, target))
	answers = append(answers, fmt.Sprintf("/api/diff?base=%d&target=%d&format=compact", base, target),
		fmt.Sprintf("/api/diff?base=%d&target=%d&normalize=work", base, target))

	get := func(target string) string {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		// A fixed CSRF cookie, so pages carry the same token every time.
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: strings.Repeat("c", 32)})
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		return fmt.Sprintf("%d %s\n\n", rec.Code, rec.Header().Get("Content-Type")) + string(body)
	}
	var recorded []string
	check := func(kind, target, got string) {
		sum := sha256.Sum256([]byte(target))
		name := filepath.Join("testdata", "upgrade", "served", kind+"-"+hex.EncodeToString(sum[:6])+".txt")
		got = target + "\n" + got
		if os.Getenv(upgradeRecord) != "" {
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			recorded = append(recorded, name)
			return
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: no record of what the earlier code served (%v)", target, err)
			return
		}
		for _, f := range upgradeFixes {
			if f.target == target {
				if !bytes.Contains(want, []byte(f.old)) {
					t.Errorf("%s: the fix %q no longer applies to the record (%s)", target, f.why, name)
				}
				want = bytes.ReplaceAll(want, []byte(f.old), []byte(f.new))
			}
		}
		if !bytes.Equal([]byte(got), want) && !sameJSON(got, string(want)) && !sameJSON(withoutAdditions(t, target, got, string(want)), string(want)) {
			t.Errorf("%s shows something else than the earlier kbench did (%s):\n%s", target, name, firstDifference(got, string(want)))
		}
	}
	for _, p := range pages {
		body := get(p)
		status, _, _ := strings.Cut(body, "\n")
		check("page", p, status+"\n"+strings.Join(tableRE.FindAllString(body, -1), "\n")+"\n")
	}
	for _, a := range answers {
		body := get(a)
		if strings.HasSuffix(a, "/download") {
			sum := sha256.Sum256([]byte(body))
			body = "sha256 " + hex.EncodeToString(sum[:])
		}
		check("answer", a, body)
	}
	if len(recorded) > 0 {
		t.Logf("recorded %d answers of this code", len(recorded))
	}
	// Issue 25's additions, which the record predates: the row format of
	// every upgraded profile draws the recorded total, and a legacy
	// focus= zoom link redirects to zoom=.
	for _, id := range profileIDs {
		var tree, rows struct {
			Total float64 `json:"total"`
			Rows  *struct {
				Levels [][]float64 `json:"levels"`
			} `json:"rows"`
		}
		_, tb, _ := strings.Cut(get(fmt.Sprintf("/api/profiles/%d/flamegraph", id)), "\n\n")
		_, rb, _ := strings.Cut(get(fmt.Sprintf("/api/profiles/%d/flamegraph?format=rows", id)), "\n\n")
		if json.Unmarshal([]byte(tb), &tree) != nil || json.Unmarshal([]byte(rb), &rows) != nil || rows.Rows == nil || len(rows.Rows.Levels) == 0 ||
			rows.Total != tree.Total || rows.Rows.Levels[0][2] != tree.Total {
			t.Errorf("profile %d: format=rows %.200s, want the tree's total %v at the root", id, rb, tree.Total)
		}
	}
	if got := get(fmt.Sprintf("/profiles/%d?focus=root-is-no-frame", profileIDs[0])); !strings.HasPrefix(got, "200 ") {
		t.Errorf("a focus= that is no zoom path: %.100s, want the page (pprof's focus)", got)
	}
}

// upgradeAdditions are the fields the API's run objects gained since the
// record: an addition, not a change, so each is taken out of what the code
// serves before comparing, where the record's object lacks it, after
// checking the value an upgraded run must have.
var upgradeAdditions = []struct {
	key   string
	check func(run map[string]any) error
	why   string
}{
	{"next", func(list map[string]any) error {
		if list["next"] != nil {
			return fmt.Errorf("next %v, want null: every run fits on the one page", list["next"])
		}
		return nil
	}, "issue 17: the runs list's cursor links"},
	{"prev", func(list map[string]any) error {
		if list["prev"] != nil {
			return fmt.Errorf("prev %v, want null on the first page", list["prev"])
		}
		return nil
	}, "issue 17: the runs list's cursor links"},
	{"meta", func(run map[string]any) error {
		if m, ok := run["meta"].(map[string]any); !ok || len(m) != 0 {
			return fmt.Errorf("meta %v, want {} for a run from before metadata", run["meta"])
		}
		return nil
	}, "issue 13: a run's metadata (migration 0003_meta_series)"},
	{"time", func(run map[string]any) error {
		want := run["started_at"]
		if want == nil {
			want = run["created_at"]
		}
		if run["time"] != want {
			return fmt.Errorf("time %v, want the start, else the creation (%v)", run["time"], want)
		}
		return nil
	}, "issue 13: when a run happened (migration 0003_meta_series)"},
	{"series_key", func(run map[string]any) error {
		want := run["fingerprint"]
		if run["source"] == "imported" {
			want = fmt.Sprintf("imported:%s:%s", run["workload"], run["label"])
		}
		if run["series_key"] != want {
			return fmt.Errorf("series_key %v, want %v", run["series_key"], want)
		}
		return nil
	}, "issue 13: a run's series (migration 0003_meta_series)"},
	{"queue", func(run map[string]any) error {
		if run["queue"] != "local" {
			return fmt.Errorf("queue %v, want local for a run from before queues", run["queue"])
		}
		return nil
	}, "issue 14: the queue a run waits in (migration 0007_workers)"},
	{"worker", func(run map[string]any) error {
		if run["worker"] != "" {
			return fmt.Errorf("worker %v, want none for a run from before workers", run["worker"])
		}
		return nil
	}, "issue 14: the worker host that ran a run (migration 0007_workers)"},
	{"hl", func(cell map[string]any) error {
		if cell["hl_change_pct"] == nil && cell["p_adjusted"] == nil && cell["hl"] != "" {
			return fmt.Errorf("hl %q for a change that was not tested, want none", cell["hl"])
		}
		return nil
	}, "issue 23: the Hodges-Lehmann column's text of a comparison cell"},
	{"change_method", func(doc map[string]any) error {
		if s, _ := doc["change_method"].(string); !strings.HasPrefix(s, "ratio of medians") {
			return fmt.Errorf("change_method %q, want the ratio of medians", doc["change_method"])
		}
		return nil
	}, "issue 23: what a comparison cell's change is"},
	{"hl_method", func(doc map[string]any) error {
		if s, _ := doc["hl_method"].(string); !strings.HasPrefix(s, "Hodges-Lehmann") {
			return fmt.Errorf("hl_method %q, want Hodges-Lehmann", doc["hl_method"])
		}
		return nil
	}, "issue 23: what a comparison cell's hl figures are"},
	{"embedded_broker_runs", func(doc map[string]any) error {
		if runs, _ := doc["embedded_broker_runs"].([]any); len(runs) == 0 {
			return fmt.Errorf("embedded_broker_runs %v, want the runs (all launched on the embedded broker)", doc["embedded_broker_runs"])
		}
		return nil
	}, "issue 23: the runs of a comparison on the embedded broker"},
	{"embedded_broker_note", func(doc map[string]any) error {
		if s, _ := doc["embedded_broker_note"].(string); !strings.HasPrefix(s, "All runs ran on the embedded broker.") {
			return fmt.Errorf("embedded_broker_note %q, want all runs on the embedded broker", doc["embedded_broker_note"])
		}
		return nil
	}, "issue 23: a comparison of runs on the embedded broker says so"},
	{"runs_base", func(doc map[string]any) error { return oneOf(doc, "runs_base", "base", "run_id") }, "issue 25: the runs a diff's base merges"},
	{"runs_target", func(doc map[string]any) error { return oneOf(doc, "runs_target", "target", "run_id") }, "issue 25: the runs a diff's target merges"},
	{"profiles_base", func(doc map[string]any) error { return oneOf(doc, "profiles_base", "base", "id") }, "issue 25: the profiles a diff's base merges"},
	{"profiles_target", func(doc map[string]any) error { return oneOf(doc, "profiles_target", "target", "id") }, "issue 25: the profiles a diff's target merges"},
	{"skipped", func(doc map[string]any) error {
		if s, ok := doc["skipped"].([]any); !ok || len(s) != 0 {
			return fmt.Errorf("skipped %v, want [] for a diff of two profiles", doc["skipped"])
		}
		return nil
	}, "issue 25: the runs a run-set diff left out"},
	{"kind", func(doc map[string]any) error { return sameAs(doc, "kind") }, "issue 25: the kind of profile a diff compares"},
	{"role", func(doc map[string]any) error { return sameAs(doc, "role") }, "issue 25: the role whose profiles a diff compares"},
}

// oneOf checks that a diff's list field holds exactly its side's
// profile's field (a diff of two profiles is a run set of one a side).
func oneOf(doc map[string]any, list, side, field string) error {
	l, _ := doc[list].([]any)
	m, _ := doc[side].(map[string]any)
	if len(l) != 1 || m == nil || l[0] != m[field] {
		return fmt.Errorf("%s %v, want [the %s profile's %s]", list, doc[list], side, field)
	}
	return nil
}

// sameAs checks that a diff's field is the target profile's.
func sameAs(doc map[string]any, field string) error {
	m, _ := doc["target"].(map[string]any)
	if m == nil || doc[field] != m[field] {
		return fmt.Errorf("%s %v, want the target profile's", field, doc[field])
	}
	return nil
}

// withoutAdditions is the answer got without the upgradeAdditions the
// recorded answer want lacks, each checked first; got unchanged when
// either is not JSON.
func withoutAdditions(t *testing.T, target, got, want string) string {
	gh, gb, ok1 := strings.Cut(got, "\n\n")
	_, wb, ok2 := strings.Cut(want, "\n\n")
	var g, w any
	if !ok1 || !ok2 || json.Unmarshal([]byte(gb), &g) != nil || json.Unmarshal([]byte(wb), &w) != nil {
		return got
	}
	var strip func(g, w any)
	strip = func(g, w any) {
		switch g := g.(type) {
		case map[string]any:
			w, _ := w.(map[string]any)
			for _, a := range upgradeAdditions {
				if _, has := g[a.key]; has && w != nil {
					if _, recorded := w[a.key]; !recorded {
						if err := a.check(g); err != nil {
							t.Errorf("%s: %s: %v", target, a.why, err)
						}
						delete(g, a.key)
					}
				}
			}
			for k, v := range g {
				strip(v, w[k])
			}
		case []any:
			w, _ := w.([]any)
			for i, v := range g {
				if i < len(w) {
					strip(v, w[i])
				}
			}
		}
	}
	strip(g, w)
	b, err := json.Marshal(g)
	if err != nil {
		return got
	}
	return gh + "\n\n" + string(b)
}

// sameJSON reports whether two recorded answers are the same JSON document
// (the same status line, then equal values): the order of an object's keys
// is no difference a client can see.
func sameJSON(got, want string) bool {
	gh, gb, ok1 := strings.Cut(got, "\n\n")
	wh, wb, ok2 := strings.Cut(want, "\n\n")
	if !ok1 || !ok2 || gh != wh || !strings.Contains(gh, "json") {
		return false
	}
	var g, w any
	if json.Unmarshal([]byte(gb), &g) != nil || json.Unmarshal([]byte(wb), &w) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// firstDifference shows the first line where got and want part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			// Long lines (JSON answers are one line) part far from their
			// start: show the neighbourhood of the first differing byte.
			at := 0
			for at < len(gl) && at < len(wl) && gl[at] == wl[at] {
				at++
			}
			from := max(at-120, 0)
			return fmt.Sprintf("line %d, byte %d:\ngot  …%.300q\nwant …%.300q", i+1, at+1, gl[from:], wl[from:])
		}
	}
	return "(same lines, different bytes)"
}
