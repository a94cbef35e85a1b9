package static

import (
	"io/fs"
	"strings"
	"testing"
)

// TestOneFormatterNoClientCharts: the scripts format numbers only through
// format.js (which TestE2EFormatMatchesGo holds to the Go formatter), and
// draw no charts of their own: line charts come from the server
// (ui.LineChart), the live ones too.
func TestOneFormatterNoClientCharts(t *testing.T) {
	formatting := []string{"toFixed(", "toPrecision(", "toExponential(", "toLocaleString(", "Intl.NumberFormat"}
	charting := []string{"<svg", "polyline", "createElementNS"}
	scripts, err := fs.Glob(FS, "*.js")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, name := range scripts {
		data, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		if name != "format.js" {
			for _, f := range formatting {
				if strings.Contains(src, f) {
					t.Errorf("%s formats numbers itself (%s): use window.kbenchFormat from format.js", name, f)
				}
			}
		}
		for _, c := range charting {
			if strings.Contains(src, c) {
				t.Errorf("%s draws SVG (%s): charts are the server's (ui.LineChart)", name, c)
			}
		}
	}
}

// TestProfileFirstCSSCopiesTheFullSheets: profile-first.css, the profile
// page's inline style sheet for its first frame, copies its rules from
// app.css, flamegraph.css and flameviews.css (all but those after its
// "Only here." comment). A rule changed in the full sheets but not in
// its copy would draw the first frame one way and restyle it when the
// full sheets arrive, so each copy must still be found there, inside the
// same @media block.
func TestProfileFirstCSSCopiesTheFullSheets(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	full := map[string]bool{}
	for _, name := range []string{"app.css", "flamegraph.css", "flameviews.css"} {
		for _, r := range cssRules(read(name)) {
			full[r] = true
		}
	}
	first := read("profile-first.css")
	copies, _, ok := strings.Cut(first, "/* Only here. */")
	if !ok {
		t.Fatal(`profile-first.css has no "/* Only here. */" comment after its copies`)
	}
	rules := cssRules(copies)
	if len(rules) < 20 {
		t.Fatalf("profile-first.css copies %d rules: the splitter is wrong", len(rules))
	}
	for _, r := range rules {
		if !full[r] {
			t.Errorf("profile-first.css: %q is in none of app.css, flamegraph.css, flameviews.css", r)
		}
	}
}

// cssRules splits a style sheet into its rules, whitespace collapsed and
// comments dropped; a rule inside an @media block is "@media … { rule }".
func cssRules(css string) []string {
	var out []string
	for {
		i := strings.Index(css, "/*")
		if i < 0 {
			break
		}
		j := strings.Index(css[i+2:], "*/")
		if j < 0 {
			css = css[:i]
			break
		}
		css = css[:i] + " " + css[i+2+j+2:]
	}
	norm := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		s = strings.ReplaceAll(s, "{ ", "{")
		return strings.ReplaceAll(s, " }", "}")
	}
	var split func(s, prefix string)
	split = func(s, prefix string) {
		for {
			open := strings.Index(s, "{")
			if open < 0 {
				return
			}
			head := strings.TrimSpace(s[:open])
			depth, end := 0, -1
			for k := open; k < len(s) && end < 0; k++ {
				switch s[k] {
				case '{':
					depth++
				case '}':
					if depth--; depth == 0 {
						end = k
					}
				}
			}
			if end < 0 {
				return
			}
			if strings.HasPrefix(head, "@media") {
				split(s[open+1:end], norm(head)+" {")
			} else {
				r := norm(head + " {" + s[open+1:end] + "}")
				if prefix != "" {
					r = prefix + r + "}"
				}
				out = append(out, r)
			}
			s = s[end+1:]
		}
	}
	split(css, "")
	return out
}
