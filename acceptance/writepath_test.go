package acceptance

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kbench/kbench/internal/jdk"
)

// TestE2EWritepathLab: the "Write-path lab" page from the navigation, its
// preset submitted with small parameters (the sink, 300 requests, one
// repetition), the result page waited on until the runs finish, then the
// comparison with gather as baseline, the ratios to gather, the write-path
// panels and the link to the differential flame graph. With a JDK on PATH
// the preset adds the Java strategies: their rows, their panels (the JVM's
// wall profiles) and the Java differential flame graph drawn on the page;
// without one the lab page says they are left out.
func TestE2EWritepathLab(t *testing.T) {
	e2eSkip(t)
	t.Parallel() // waits on its processes most of the time: see test.sh
	srv := startE2EServer(t)
	b := startE2EBrowser(t)

	b.do(t, "open the runs list", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/writepath"]`)))
	b.do(t, "follow the nav entry", chromedp.Click(chromedp.CSS(`a[href="/writepath"]`)))
	b.waitFor(t, "the lab page", `location.pathname === '/writepath' && !!document.getElementById('writepath-form')`)
	text := e2eEval[string](t, b, "read the explanation", `document.querySelector('main').innerText`)
	for _, want := range []string{"writev", "system call", "64 ms to 2 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("the lab page does not explain %q", want)
		}
	}
	_, noJDK := jdk.Find("")
	if hasNote := e2eEval[bool](t, b, "look for the no-JDK note", `!!document.getElementById('wp-no-java')`); hasNote != (noJDK != nil) {
		t.Errorf("no-JDK note shown %v, but jdk.Find says %v", hasNote, noJDK)
	}
	if !e2eEval[bool](t, b, "read the sink box", `document.getElementById('f-sink').checked`) {
		t.Error("the sink is not ticked by default")
	}
	b.do(t, "fill the preset",
		chromedp.SetValue(chromedp.ID("f-requests"), "300"),
		chromedp.SetValue(chromedp.ID("f-repetitions"), "1"))
	b.screenshot(t, "writepath-form")
	b.do(t, "click Write-path comparison", chromedp.Click(chromedp.ID("writepath-submit")))
	b.waitFor(t, "the result page", `/^\/writepath\/[0-9a-f]{12}$/.test(location.pathname)`)

	// The page reloads itself until every run is final, then shows the table.
	// Eight strategies, three of them JVMs that start and compile first:
	// longer than one step's wait on a busy machine.
	comparison := `document.readyState === 'complete' && !!document.getElementById('comparison') && !!document.getElementById('wp-ratios')`
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline) && b.ctx.Err() == nil; time.Sleep(time.Second) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](comparison))
		cancel()
		if err == nil && ok {
			break
		}
	}
	b.waitFor(t, "the comparison", comparison)
	heads := e2eEval[[]string](t, b, "read the column heads", `Array.from(document.querySelectorAll('#comparison thead th .col-name')).map(e => e.textContent)`)
	if len(heads) < 2 || heads[0] != "gather" || heads[1] != "per-buffer" {
		t.Fatalf("columns %q, want gather (baseline) then per-buffer …", heads)
	}
	if !e2eEval[bool](t, b, "find the baseline tag", `!!document.querySelector('#comparison thead th.baseline .tag')`) {
		t.Error("gather is not marked as the baseline")
	}
	ratio := e2eEval[string](t, b, "read per-buffer's syscall ratio",
		`document.querySelectorAll('#wp-ratios tr[data-strategy="per-buffer"] .wp-ratio')[1].textContent`)
	if !regexp.MustCompile(`^×[0-9.]+$`).MatchString(ratio) || ratio == "×1.00" {
		t.Errorf("per-buffer/gather write syscalls ratio %q", ratio)
	}
	syscalls := e2eEval[[]string](t, b, "read the syscalls row",
		`Array.from(document.querySelectorAll('#comparison tr[data-metric="write-syscalls-per-request"] td')).map(td => td.innerText)`)
	if len(syscalls) < 2 || !strings.Contains(syscalls[1], "%") {
		t.Errorf("write-syscalls-per-request row %q: want a change against gather", syscalls)
	}
	// Each strategy's panel lists the write paths, gather and single; a
	// 300-request run holds few samples, so the values may all be zero.
	paths := e2eEval[map[string][]string](t, b, "read the write-path panels", `Object.fromEntries(Array.from(document.querySelectorAll('.wp-panel')).map(p =>
		[p.getAttribute('data-strategy'), Array.from(p.querySelectorAll('tr[data-direction="write"]')).map(tr => tr.getAttribute('data-path'))]))`)
	for _, strategy := range []string{"gather", "per-buffer"} {
		if got := strings.Join(paths[strategy], ","); got != "gather,single" {
			t.Errorf("%s's write-path panel lists write paths %q, want gather,single (all panels: %v)", strategy, got, paths)
		}
	}
	href := e2eEval[string](t, b, "read the diff link", `document.getElementById('wp-diff-link').getAttribute('href')`)
	if !strings.HasPrefix(href, "/compare/profiles?") || !strings.Contains(href, "normalize=work") {
		t.Errorf("diff link %q", href)
	}
	b.waitFor(t, "the differential flame graph drawn on the page", `document.getElementById('wp-diff').getAttribute('data-state') === 'ready'`)
	if src := e2eEval[string](t, b, "read the graph's source", `document.getElementById('wp-diff').getAttribute('data-src')`); !strings.HasPrefix(src, "/api/diff?") || !strings.Contains(src, "normalize=work") {
		t.Errorf("inline diff reads %q", src)
	}
	if noJDK == nil {
		for _, strategy := range []string{"java-gather", "java-per-buffer", "java-copy"} {
			if !e2eEval[bool](t, b, "find the "+strategy+" row", `!!document.querySelector('#wp-ratios tr[data-strategy="`+strategy+`"]')`) {
				t.Errorf("no %s row in the ratios", strategy)
			}
		}
		// The JVM's panel may add an "unknown" row: execution samples
		// caught in IOUtil.write before it calls writev0 or write0.
		if got := strings.Join(paths["java-gather"], ","); got != "gather,single" && got != "gather,single,unknown" {
			t.Errorf("java-gather's write-path panel lists %q (all panels: %v)", got, paths)
		}
		jhref := e2eEval[string](t, b, "read the Java diff link", `document.getElementById('wp-java-diff-link').getAttribute('href')`)
		if !strings.HasPrefix(jhref, "/compare/profiles?") || jhref == href {
			t.Errorf("Java diff link %q (Go's %q)", jhref, href)
		}
		b.waitFor(t, "the Java differential flame graph drawn on the page", `document.getElementById('wp-java-diff').getAttribute('data-state') === 'ready'`)
	}
	b.screenshot(t, "writepath-result")
	b.do(t, "open the differential flame graph", chromedp.Click(chromedp.ID("wp-diff-link")))
	b.waitFor(t, "the profile comparison", `location.pathname === '/compare/profiles' && document.readyState === 'complete'`)
	b.checkConsole(t)
}
