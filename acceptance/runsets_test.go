package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// e2eImportStacks imports folded stacks as a new run and returns the
// run's id.
func (s *e2eServer) e2eImportStacks(t *testing.T, label, folded string) uint {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", label)
	w, _ := mw.CreateFormFile("profile", label+".collapsed")
	io.WriteString(w, folded)
	mw.Close()
	resp, err := s.http.Post(s.URL+"/api/import", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run struct{ ID uint }
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &run) != nil || run.ID == 0 {
		t.Fatalf("import %s: %d %s", label, resp.StatusCode, data)
	}
	return run.ID
}

// TestE2ERunSetsDiff opens the comparison of two run sets whose JVMs named
// one lambda differently: the page lists each side's runs, the
// differential graph draws the lambda once, and its tooltip names the
// variants merged.
func TestE2ERunSetsDiff(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	stacks := func(addr string, n int) string {
		return fmt.Sprintf("Thread.run;WritePath$$Lambda$7+0x%s.495053715.run;WritePath.write %d\nThread.run;WritePath.encode 100\n", addr, n)
	}
	base := []uint{srv.e2eImportStacks(t, "b1", stacks("00007fb8c4a1b2c8", 300)), srv.e2eImportStacks(t, "b2", stacks("00007f1100000000", 500))}
	target := []uint{srv.e2eImportStacks(t, "t1", stacks("00007f38aaaa0000", 900))}
	ids := func(xs []uint) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ",")
	}
	b.do(t, "open the run-set comparison", chromedp.Navigate(fmt.Sprintf("%s/compare/profiles?base_runs=%s&target_runs=%s&kind=cpu&role=client&normalize=none&sample=samples",
		srv.URL, ids(base), ids(target))))
	b.waitFor(t, "the differential graph", `document.querySelector("#diff-flamegraph[data-rendered=true]") !== null`)
	runs := e2eEval[string](t, b, "the base runs", `document.getElementById("runs-base").innerText`)
	for _, id := range base {
		if !strings.Contains(runs, fmt.Sprintf("run #%d", id)) {
			t.Errorf("the base runs %q lack run #%d", runs, id)
		}
	}
	const lambda = "Thread.run;WritePath$$Lambda$7.run"
	box := e2eEval[map[string]float64](t, b, "the lambda's box", fmt.Sprintf(`(() => {
		// The page's tables and legends put the graph below the fold:
		// bring it into view, where the mouse can reach it.
		document.getElementById("diff-flamegraph-canvas").scrollIntoView({block: "center"});
		const r = document.getElementById("diff-flamegraph").flameGraph.frameBox(%q);
		const c = document.getElementById("diff-flamegraph-canvas").getBoundingClientRect();
		return r ? {x: c.left + r.x + r.width / 2, y: c.top + r.y + r.height / 2, w: r.width, top: c.top} : {};
	})()`, lambda))
	if box["w"] <= 0 {
		t.Fatalf("%s is not drawn: %v", lambda, box)
	}
	b.do(t, "hover the lambda",
		chromedp.MouseEvent(chromedp.MouseMoved, box["x"], box["top"]-30),
		chromedp.MouseEvent(chromedp.MouseMoved, box["x"], box["y"]))
	b.waitFor(t, "the tooltip", `!document.querySelector("#diff-flamegraph .fg-tooltip").hidden`)
	tip := e2eEval[string](t, b, "the tooltip", `document.querySelector("#diff-flamegraph .fg-tooltip").textContent`)
	if !strings.Contains(tip, "Merged from 3 names") || !strings.Contains(tip, "0x00007f38aaaa0000") || !strings.Contains(tip, "0x00007fb8c4a1b2c8") {
		t.Errorf("tooltip %q, want the three JVM names merged", tip)
	}
	// Base: the mean of 300 and 500; the candidate's 900.
	if !strings.Contains(tip, "400") || !strings.Contains(tip, "900") {
		t.Errorf("tooltip %q, want base 400 (the mean) and candidate 900", tip)
	}
	b.checkConsole(t)
}
