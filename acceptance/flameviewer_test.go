package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/profiles/jfr"
)

// e2eImportFile posts one profile file to /api/import and returns the
// profile id.
func (s *e2eServer) e2eImportFile(t *testing.T, label, name string, data []byte) uint {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", label)
	w, _ := mw.CreateFormFile("profile", name)
	w.Write(data)
	mw.Close()
	resp, err := s.http.Post(s.URL+"/api/import", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run client.Run
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(out, &run) != nil || len(run.Profiles) != 1 {
		t.Fatalf("import %s: %d %s", label, resp.StatusCode, out)
	}
	return run.Profiles[0].ID
}

// e2eJFRGather is the JFR converter's fixture (a JVM writing to a socket)
// as the gzipped pprof kbench stores: 48 thread samples, labelled thread
// (main 27, reader 21) and state.
func e2eJFRGather(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "profiles", "jfr", "testdata", "gather.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, _, err := jfr.Convert(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type e2eViewerState struct {
	Zoom        string     `json:"zoom"`
	Search      string     `json:"search"`
	Nodes       int        `json:"nodes"`
	Total       float64    `json:"total"`
	Highlighted int        `json:"highlighted"`
	Rows        [][]string `json:"rows"`
	Fetches     int        `json:"fetches"`
}

// TestE2EFlameViewerRows: the profile page draws its rows (the one
// format) from the page itself; a search highlights the frames the
// server's answer names; the thread select of a JFR profile's filter bar
// keeps only that thread's samples; left-heavy puts the heaviest frame
// first; "only matching stacks" keeps the stacks the search matches and
// follows a new search; every choice stays in the URL.
func TestE2EFlameViewerRows(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	java := srv.e2eImportFile(t, "java-gather", "gather.pb.gz", e2eJFRGather(t))
	folded := srv.e2eImport(t, "order", "main;a 1\nmain;b 5\nmain;c 3\n")
	state := func() e2eViewerState { t.Helper(); return e2eEval[e2eViewerState](t, b, "state", e2eFG+`.state()`) }
	// The page's forms and search box come with its second stage.
	rendered := `document.querySelector("#flamegraph[data-rendered=true]") !== null && ` + e2eProfileComplete

	// The rows render, from the page, with every thread.
	b.do(t, "open the JFR profile", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d", srv.URL, java)))
	b.waitFor(t, "the first paint", rendered)
	st := state()
	if st.Total != 48 || st.Nodes < 5 || len(st.Rows) < 3 || st.Rows[0][0] != "root" {
		t.Fatalf("first view: %+v", st)
	}
	// The graph's requests: the top table under it (view=top) asks for
	// its own answer once the page is drawn.
	if n := e2eEval[int](t, b, "requests", `performance.getEntriesByType("resource").filter(r => r.name.includes("/flamegraph?") && !r.name.includes("view=top")).length`); n != 0 {
		t.Errorf("the first paint made %d flame-graph requests, want 0", n)
	}
	if box := e2eEval[bool](t, b, "a drawn frame", e2eFG+`.frameBox(`+fmt.Sprintf("%q", st.Rows[1][0])+`) !== null`); !box {
		t.Errorf("%s is not drawn", st.Rows[1][0])
	}

	// The search: the server names the frames, the page marks them.
	b.do(t, "search", chromedp.SendKeys("#flamegraph-search", "writev0"))
	b.poll(t, "the server's answer", e2eFG+`.state().search === "writev0" && document.getElementById("flamegraph").dataset.searchState === "ready" && `+e2eFG+`.state().highlighted > 0`)
	if pct := e2eEval[string](t, b, "share", `document.getElementById("flamegraph-match").dataset.totalPct || ""`); pct == "" || pct == "0" {
		t.Errorf("the search's share %q", pct)
	}

	// The thread select: only the reader's 21 samples; labels listed.
	opts := e2eEval[[]string](t, b, "thread options", `Array.from(document.querySelectorAll("#label-thread option")).map(o => o.textContent)`)
	if strings.Join(opts, ",") != "any thread,main,reader" {
		t.Errorf("thread options %q", opts)
	}
	b.do(t, "pick the reader thread", chromedp.Click("#fg-filters summary"), chromedp.SetValue("#label-thread", `thread=^reader$`), chromedp.Click("#fg-filter-apply"))
	b.waitFor(t, "the filtered graph", `location.search.includes("tagfocus=") && `+rendered+` && `+e2eFG+`.state().total === 21`)
	u := e2eEval[string](t, b, "url", `location.href`)
	if !strings.Contains(u, "tagfocus=thread%3D%5Ereader%24") || !strings.Contains(u, "search=writev0") {
		t.Errorf("the filter or the search is not in the URL: %s", u)
	}
	if v := e2eEval[string](t, b, "selected", `document.getElementById("label-thread").value`); v != "thread=^reader$" {
		t.Errorf("the select shows %q after the reload", v)
	}

	// Left-heavy: b (5), c (3), a (1) instead of a, b, c.
	b.do(t, "open the folded profile", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d?sample=samples", srv.URL, folded)))
	b.waitFor(t, "the first paint", rendered)
	if st := state(); len(st.Rows) < 3 || strings.Join(st.Rows[2], ",") != "a,b,c" {
		t.Fatalf("by name: %+v", st.Rows)
	}
	b.do(t, "left-heavy", chromedp.Click("#fg-filters summary"), chromedp.Click("#fg-left-heavy"),
		chromedp.Click("#fg-filter-apply"))
	b.waitFor(t, "the left-heavy graph", `location.search.includes("order=left-heavy") && `+rendered)
	if st := state(); strings.Join(st.Rows[2], ",") != "b,c,a" {
		t.Errorf("left-heavy: %v", st.Rows)
	}

	// Only matching stacks: the search ^c$ keeps c's 3 samples; a new
	// search asks the server for a new graph.
	e2eEval[bool](t, b, "search c", `(`+e2eFG+`.search("^c$"), true)`)
	b.poll(t, "the search in the URL", `location.search.includes("search=%5Ec%24")`)
	b.do(t, "only matching", chromedp.Click("#fg-only-matching"), chromedp.Click("#fg-filter-apply"))
	b.waitFor(t, "the matching stacks", `location.search.includes("only_matching=1") && `+rendered+` && `+e2eFG+`.state().total === 3`)
	if st := state(); strings.Join(st.Rows[2], ",") != "c" {
		t.Errorf("only matching ^c$: %v", st.Rows)
	}
	e2eEval[bool](t, b, "search b|a", `(`+e2eFG+`.search("^(a|b)$"), true)`)
	b.poll(t, "the new matching stacks", e2eFG+`.state().total === 6`)
	if st := state(); strings.Join(st.Rows[2], ",") != "b,a" || st.Highlighted != 2 {
		t.Errorf("only matching ^(a|b)$, left-heavy: %+v", st)
	}
	u = e2eEval[string](t, b, "url", `location.href`)
	if !strings.Contains(u, "only_matching=1") || !strings.Contains(u, "order=left-heavy") || !strings.Contains(u, "search=%5E%28a%7Cb%29%24") {
		t.Errorf("the URL lost a choice: %s", u)
	}
	b.checkConsole(t)
}
