package acceptance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2EFormatMatchesGo runs every case of
// internal/numfmt/testdata/js_cases.json, which the Go formatter's tests
// write (TestJSCases), through static/format.js as kbench serves it, in
// Chromium under the pages' Content-Security-Policy: the pages' scripts
// format numbers, sizes, shares and durations exactly as the Go code does.
// It also fails when format.js offers a function the Go side has no cases
// for, or the other way round.
func TestE2EFormatMatchesGo(t *testing.T) {
	e2eSkip(t)
	raw, err := os.ReadFile(filepath.Join("..", "internal", "numfmt", "testdata", "js_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string][]json.RawMessage
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("js_cases.json: %v", err)
	}
	total := 0
	var fns []string
	for fn, cs := range cases {
		total += len(cs)
		fns = append(fns, fn)
	}
	slices.Sort(fns)

	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	b.do(t, "open the runs page", chromedp.Navigate(srv.URL+"/"))
	// The page's CSP (script-src 'self') applies to the script added here.
	e2eEval[bool](t, b, "add format.js to the page", `(() => {
		const s = document.createElement('script');
		s.src = '/static/format.js';
		document.head.appendChild(s);
		return true;
	})()`)
	b.poll(t, "format.js to load", `typeof window.kbenchFormat === 'object'`)

	type mismatch struct {
		Fn   string `json:"fn"`
		Args []any  `json:"args"`
		Want string `json:"want"`
		Got  string `json:"got"`
	}
	type result struct {
		Checked    int        `json:"checked"`
		Functions  []string   `json:"functions"`
		Mismatches []mismatch `json:"mismatches"`
	}
	res := e2eEval[result](t, b, "run the cases through format.js", `((cases) => {
		const F = window.kbenchFormat;
		const out = {checked: 0, functions: Object.keys(F).sort(), mismatches: []};
		for (const fn of Object.keys(cases)) {
			for (const c of cases[fn]) {
				const args = c.slice(0, -1), want = c[c.length - 1];
				// Numbers JSON cannot hold come as "NaN", "Infinity", "-Infinity".
				if (typeof args[0] === 'string') { args[0] = Number(args[0]); }
				let got;
				try { got = typeof F[fn] === 'function' ? F[fn].apply(null, args) : '(no such function)'; } catch (e) { got = 'threw ' + e; }
				out.checked++;
				if (got !== want) { out.mismatches.push({fn: fn, args: c.slice(0, -1), want: want, got: String(got)}); }
			}
		}
		return out;
	})(`+string(raw)+`)`)

	if res.Checked != total {
		t.Errorf("format.js checked %d cases, js_cases.json holds %d", res.Checked, total)
	}
	if !slices.Equal(res.Functions, fns) {
		t.Errorf("format.js offers %q, js_cases.json has cases for %q: every function needs Go cases (internal/numfmt TestJSCases)", res.Functions, fns)
	}
	for i, m := range res.Mismatches {
		if i == 40 {
			t.Errorf("… and %d more", len(res.Mismatches)-i)
			break
		}
		t.Errorf("%s%v = %q in format.js, %q in Go", m.Fn, m.Args, m.Got, m.Want)
	}
	t.Logf("%d cases of %d functions checked, %d differ", res.Checked, len(fns), len(res.Mismatches))
	b.checkConsole(t)
}
