package ui

import (
	"html"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

func TestRenderMarkdown(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"bold", "**Noisy** run", "<p><strong>Noisy</strong> run</p>\n"},
		{"list", "- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"},
		{"https link", "[docs](https://kafka.apache.org/documentation/)", `<p><a href="https://kafka.apache.org/documentation/">docs</a></p>` + "\n"},
		{"http link", "[x](http://example.com/a?b=c&d=e)", `<p><a href="http://example.com/a?b=c&amp;d=e">x</a></p>` + "\n"},
		{"mailto", "[me](mailto:me@example.com)", `<p><a href="mailto:me@example.com">me</a></p>` + "\n"},
		{"relative", "[run 3](/runs/3) [top](#report-title) [q](?hide_unchanged=1) [rel](other.md)",
			`<p><a href="/runs/3">run 3</a> <a href="#report-title">top</a> <a href="?hide_unchanged=1">q</a> <a href="other.md">rel</a></p>` + "\n"},
		{"bare URL", "see https://example.com/x", `<p>see <a href="https://example.com/x">https://example.com/x</a></p>` + "\n"},
		{"email autolink", "<me@example.com>", `<p><a href="mailto:me@example.com">me@example.com</a></p>` + "\n"},
		{"javascript link", "[click](javascript:alert(1))", "<p>click</p>\n"},
		{"javascript upper case", "[click](JaVaScRiPt:alert(1))", "<p>click</p>\n"},
		{"javascript entity", "[click](&#106;avascript:alert(1))", "<p>click</p>\n"},
		{"javascript tab entity", "[click](java&#x09;script:alert(1))", "<p>click</p>\n"},
		{"javascript newline entity", "[click](java&#10;script:alert(1))", "<p>click</p>\n"},
		{"javascript leading space entity", "[click](&#32;javascript:alert(1))", "<p>click</p>\n"},
		{"javascript reference", "[click][r]\n\n[r]: javascript:alert(1)", "<p>click</p>\n"},
		{"javascript autolink", "<javascript:alert(1)>", "<p>javascript:alert(1)</p>\n"},
		{"not an autolink", "<javascript:alert('<b>')>", "<p>&lt;javascript:alert('&lt;b&gt;')&gt;</p>\n"},
		{"data link", "[d](data:text/html,<script>alert(1)</script>)", "<p>d</p>\n"},
		{"data link angle", "[d](<data:text/html;base64,PHNjcmlwdD4=>)", "<p>d</p>\n"},
		{"vbscript", "[v](vbscript:msgbox)", "<p>v</p>\n"},
		{"file", "[f](file:///etc/passwd)", "<p>f</p>\n"},
		{"ftp", "[f](ftp://example.com/)", "<p>f</p>\n"},
		{"colon in a relative path", "[p](%6Aavascript:alert(1))", "<p>p</p>\n"},
		{"raw script block", "<script>alert(1)</script>", `<p class="raw-html">&lt;script&gt;alert(1)&lt;/script&gt;</p>` + "\n"},
		{"inline raw HTML", `a <img src=x onerror="alert(1)"> b`, `<p>a &lt;img src=x onerror=&#34;alert(1)&#34;&gt; b</p>` + "\n"},
		{"image becomes a link", "![graph](https://example.com/g.png)", `<p><a href="https://example.com/g.png">graph</a></p>` + "\n"},
		{"javascript image", "![x](javascript:alert(1))", "<p>x</p>\n"},
		{"badge", "[![build](https://ci.example/b.svg)](https://ci.example/)", `<p><a href="https://ci.example/">build</a></p>` + "\n"},
		{"unsafe link around an image", "[![i](https://e.example/i.png)](javascript:x)", `<p><a href="https://e.example/i.png">i</a></p>` + "\n"},
		{"code", "`<b>` and\n\n```\n<script>\n```", "<p><code>&lt;b&gt;</code> and</p>\n<pre><code>&lt;script&gt;\n</code></pre>\n"},
		{"title escaped", `[t](/x "a\" onmouseover=\"alert(1)")`, `<p><a href="/x" title="a&quot; onmouseover=&quot;alert(1)">t</a></p>` + "\n"},
		{"strikethrough and task list", "~~old~~\n\n- [x] done", "<p><del>old</del></p>\n<ul>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"> done</li>\n</ul>\n"},
		{"table aligned without style attributes", "| a | b |\n|:--|--:|\n| 1 | 2 |",
			"<table>\n<thead>\n<tr>\n<th align=\"left\">a</th>\n<th align=\"right\">b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"left\">1</td>\n<td align=\"right\">2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"blank", "  \n\t", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(RenderMarkdown(c.in))
			if got != c.want {
				t.Errorf("RenderMarkdown(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			checkRendered(t, c.in, got)
		})
	}
}

// TestRenderMarkdownConcurrent: pages render in parallel (go test -race).
func TestRenderMarkdownConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := RenderMarkdown("**a** [b](/c)"); got != "<p><strong>a</strong> <a href=\"/c\">b</a></p>\n" {
				t.Errorf("got %q", got)
			}
		}()
	}
	wg.Wait()
}

// Invariants of rendered Markdown, checked on any input: only these tags
// and attributes, and every link target safe.
var (
	mdTag       = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*(/?)>`)
	mdAttr      = regexp.MustCompile(`([a-z-]+)(?:="([^"]*)")?`)
	mdTags      = "p strong em del a ul ol li code pre blockquote h1 h2 h3 h4 h5 h6 hr br table thead tbody tr th td input"
	mdAttrsOf   = map[string]string{"a": "href title", "ol": "start", "th": "align", "td": "align", "input": "checked disabled type", "p": "class", "code": "class"}
	mdTagAllows = map[string]bool{}
)

func init() {
	for _, t := range strings.Fields(mdTags) {
		mdTagAllows[t] = true
	}
}

func checkRendered(t *testing.T, in, out string) {
	t.Helper()
	rest := mdTag.ReplaceAllStringFunc(out, func(tag string) string {
		m := mdTag.FindStringSubmatch(tag)
		name := strings.ToLower(m[2])
		if !mdTagAllows[name] {
			t.Errorf("RenderMarkdown(%q) made a <%s> tag: %q", in, name, tag)
		}
		for _, a := range mdAttr.FindAllStringSubmatch(m[3], -1) {
			if !strings.Contains(" "+mdAttrsOf[name]+" ", " "+a[1]+" ") {
				t.Errorf("RenderMarkdown(%q) made a %s attribute on <%s>: %q", in, a[1], name, tag)
			}
			if a[1] == "href" && !safeURL([]byte(html.UnescapeString(a[2]))) {
				t.Errorf("RenderMarkdown(%q) links to %q", in, a[2])
			}
			// raw HTML shown as text; a fenced block's info string
			// (```go) names its language
			if a[1] == "class" && !(name == "p" && a[2] == "raw-html" || name == "code" && strings.HasPrefix(a[2], "language-")) {
				t.Errorf("RenderMarkdown(%q) made class %q on <%s>", in, a[2], name)
			}
		}
		return ""
	})
	if strings.ContainsAny(rest, "<>") {
		t.Errorf("RenderMarkdown(%q) left an unescaped < or > outside a known tag: %q", in, out)
	}
}

// FuzzRenderMarkdown: whatever the notes hold, the HTML keeps to the
// invariants above.
func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{
		"**Noisy**", "[a](javascript:alert(1))", "<script>alert(1)</script>", "[a](&#106;avascript:x)", "<javascript:x>",
		"![i](https://e.example/i.png)", "[![b](x.svg)](https://ci/)", "| a |\n|:-:|\n| <b> |", "- [ ] t\n- [x] u",
		"[r]\n\n[r]: data:text/html,x", "<a href=\"javascript:x\">y</a>", "`<code>`", "www.example.com", "x@y.example",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkRendered(t, in, string(RenderMarkdown(in)))
	})
}

func TestSafeURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		safe bool
	}{
		{"https://example.com", true}, {"HTTP://example.com", true}, {"mailto:a@b.c", true},
		{"/runs/1", true}, {"#x", true}, {"?a=1", true}, {"x/y.md", true}, {"//example.com/x", true}, {"", true},
		{"javascript:alert(1)", false}, {"JAVASCRIPT:x", false}, {" javascript:x", false}, {"java\tscript:x", false},
		{"\x01javascript:x", false}, {"javascript\n:x", false}, {"data:text/html,x", false}, {"vbscript:x", false},
		{"file:///etc/passwd", false}, {"tel:123", false}, {"ftp://x", false}, {"blob:https://x/1", false},
	} {
		if got := safeURL([]byte(c.url)); got != c.safe {
			t.Errorf("safeURL(%q) = %v, want %v", c.url, got, c.safe)
		}
	}
}

// hrefs lists every href and src attribute of a page.
var hrefs = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*"([^"]*)"`)

// TestGoldenReportNotes renders a report whose notes hold Markdown, raw
// HTML and a javascript: link: the notes are rendered, nothing runs.
func TestGoldenReportNotes(t *testing.T) {
	runs := compareRuns()
	tab, err := compare.Build(compare.Columns(runs, compare.ByRun), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := "**Noisy** neighbour on the broker host: rerun before merging.\n\n" +
		"- trunk: `batch.size=16384`\n- branch: [KIP-390](https://cwiki.apache.org/confluence/display/KAFKA/KIP-390)\n\n" +
		"<script>alert('notes')</script>\n\n" +
		"Details [here](javascript:alert(document.cookie)) and <b onclick=\"alert(2)\">there</b>.\n"
	rep := &rundoc.Report{Slug: "notes23456723456723456723ab", Title: "Notes", Notes: notes, RunIDs: []uint{1, 2, 3}, By: "run",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	v := NewReportView(rep, tab, runs, "## Notes")
	v.Profiles = NewProfilesSection(PlanProfileDiffs(tab, runs), runs, nil)
	page := render(t, newTestUI(t), "report", v)
	for _, want := range []string{
		"<strong>Noisy</strong>",
		"<li>branch: <a href=\"https://cwiki.apache.org/confluence/display/KAFKA/KIP-390\">KIP-390</a></li>",
		"<code>batch.size=16384</code>",
		"&lt;script&gt;alert(&#39;notes&#39;)&lt;/script&gt;",
		"Details here and &lt;b onclick=&#34;alert(2)&#34;&gt;there&lt;/b&gt;.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report page lacks %q", want)
		}
	}
	if strings.Contains(page, "**Noisy**") {
		t.Error("the notes' Markdown is shown raw")
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b onclick") {
		t.Error("raw HTML from the notes reached the page")
	}
	for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
		if u := strings.ToLower(m[1]); strings.HasPrefix(u, "javascript:") || m[1] == "" {
			t.Errorf("the page links to %q", m[1])
		}
	}
	golden.Check(t, "report_notes.html", page)
}
