package acceptance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestE2ECompareProfilesSection opens the comparison of 3 imported runs
// against 3 in which one function's share grew and another's shrank
// while a third stayed: the Profiles section's diff paints from the page
// with no request to /api/diff, the changed functions red and blue, the
// unchanged one grey (tested, not significant) with its legend entry and
// no banner; 2 runs against 2 show the banner.
func TestE2ECompareProfilesSection(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	// Totals stay 2,500 samples a run: the shares of hot and cold move,
	// steady's stays at 20 % within 1 %.
	stacks := func(hot, cold, steady int) string {
		return fmt.Sprintf("main;work;hot %d\nmain;work;cold %d\nmain;steady %d\n", hot, cold, steady)
	}
	base := []uint{srv.e2eImportStacks(t, "trunk", stacks(1000, 1000, 500)), srv.e2eImportStacks(t, "trunk", stacks(1010, 995, 495)),
		srv.e2eImportStacks(t, "trunk", stacks(990, 1004, 506))}
	target := []uint{srv.e2eImportStacks(t, "branch", stacks(1500, 500, 500)), srv.e2eImportStacks(t, "branch", stacks(1490, 507, 503)),
		srv.e2eImportStacks(t, "branch", stacks(1512, 493, 495))}
	ids := func(xs ...uint) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ",")
	}
	b.do(t, "open the comparison", chromedp.Navigate(fmt.Sprintf("%s/compare?by=label&runs=%s", srv.URL, ids(append(base, target...)...))))
	b.waitFor(t, "the inline diff", `document.querySelector("#profiles-diff[data-rendered=true]") !== null`)
	if n := e2eEval[int](t, b, "requests", `performance.getEntriesByType("resource").filter(r => r.name.includes("/api/diff")).length`); n != 0 {
		t.Errorf("the inline diff asked /api/diff %d times before painting, want none", n)
	}
	fills := e2eEval[map[string]string](t, b, "the fills", `(() => {
		const g = document.getElementById("profiles-diff").flameGraph;
		return {hot: g.fill("main;work;hot"), cold: g.fill("main;work;cold"), steady: g.fill("main;steady")};
	})()`)
	rgb := func(s string) (r, g, bl int) {
		fmt.Sscanf(s, "rgb(%d,%d,%d)", &r, &g, &bl)
		return
	}
	if r, _, bl := rgb(fills["hot"]); r <= bl {
		t.Errorf("hot grew significantly: fill %s, want red", fills["hot"])
	}
	if r, _, bl := rgb(fills["cold"]); bl <= r {
		t.Errorf("cold shrank significantly: fill %s, want blue", fills["cold"])
	}
	if fills["steady"] != "rgb(160,164,171)" {
		t.Errorf("steady is tested and not significant: fill %s, want the grey of noise", fills["steady"])
	}
	legend := e2eEval[string](t, b, "the legend", `document.getElementById("profiles-diff-legend").innerText`)
	if !strings.Contains(legend, "tested, not significant") {
		t.Errorf("the legend %q does not explain the grey", legend)
	}
	if banner := e2eEval[bool](t, b, "the banner", `!!document.querySelector("#profiles .fg-banner:not([hidden])")`); banner {
		t.Error("a decided diff shows the undecided banner")
	}
	table := e2eEval[string](t, b, "the table", `document.getElementById("profiles-changes").innerText`)
	if !strings.Contains(table, "hot") || !strings.Contains(table, "yes") {
		t.Errorf("the top changes %q do not mark hot significant", table)
	}

	b.do(t, "open 2 runs against 2", chromedp.Navigate(fmt.Sprintf("%s/compare?by=label&runs=%s", srv.URL, ids(base[0], base[1], target[0], target[1]))))
	b.waitFor(t, "the inline diff", `document.querySelector("#profiles-diff[data-rendered=true]") !== null`)
	banners := e2eEval[[]string](t, b, "the banners", `Array.from(document.querySelectorAll("#profiles .fg-banner:not([hidden])")).map(e => e.innerText)`)
	if len(banners) != 1 || !strings.Contains(banners[0], "3 runs per side") {
		t.Errorf("banners %q, want one saying 3 runs per side would decide", banners)
	}
	if f := e2eEval[string](t, b, "steady's fill", `document.getElementById("profiles-diff").flameGraph.fill("main;steady")`); f == "rgb(160,164,171)" {
		t.Error("an undecided diff draws the grey of noise")
	}
}
