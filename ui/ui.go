package ui

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
)

// Page is embedded in every page's view. The server fills it.
type Page struct {
	Title string
	// CSRF is the token every POST form sends back as the hidden _csrf field.
	CSRF string
	// Flash is a one-time message shown at the top of the page.
	Flash string
}

// layoutFile wraps every page; a page file defines "content" and may
// define "scripts". Files starting with "_" are partials shared by all
// pages; every other *.html file is a page named after it.
const layoutFile = "layout.html"

// StaticPrefix is the URL path the server serves the static files under.
const StaticPrefix = "/static/"

// UI renders pages. It is safe for concurrent use.
type UI struct {
	pages  map[string]*template.Template
	assets map[string]string // file name → URL with a content hash
	// inline holds the style sheets pages carry inline (InlineStyles),
	// by file name; styleSources their CSP hash sources.
	inline       map[string]template.CSS
	styleSources []string
	// sessionSlot is what the layout's header holds where a visitor's
	// session control goes (SetSessionSlot); empty: nothing.
	sessionSlot template.HTML
}

// SetSessionSlot makes every page's header hold marker where the
// visitor's "Log in" link or "Log out" button belongs. Pages are cached
// for every visitor, so the server puts the visitor's own control in
// place of the marker as it sends a page. Call it before any Render.
func (u *UI) SetSessionSlot(marker string) { u.sessionSlot = template.HTML(marker) }

// InlineStyles are the static style sheets a page may carry inline
// ({{inlineStyle "name"}} in a <style> element): the profile page's
// first frame waits for no style sheet file. The Content-Security-Policy
// allows them by their SHA-256 (StyleSources), so no other inline style
// is allowed.
var InlineStyles = []string{"profile-first.css"}

// New parses every template of templatesFS and indexes staticFS, failing
// on the first error so a broken template stops start-up, not a request.
func New(templatesFS, staticFS fs.FS) (*UI, error) {
	u := &UI{pages: map[string]*template.Template{}, assets: map[string]string{}, inline: map[string]template.CSS{}}
	for _, name := range InlineStyles {
		// A missing one fails the page that carries it, at render time,
		// as a missing asset does.
		data, err := fs.ReadFile(staticFS, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ui: inline style sheet: %w", err)
		}
		sum := sha256.Sum256(data)
		u.inline[name] = template.CSS(data)
		u.styleSources = append(u.styleSources, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	err := fs.WalkDir(staticFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(staticFS, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		u.assets[p] = StaticPrefix + p + "?v=" + hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: static files: %w", err)
	}

	names, err := fs.Glob(templatesFS, "*.html")
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	var partials, pages []string
	hasLayout := false
	for _, n := range names {
		switch {
		case n == layoutFile:
			hasLayout = true
		case strings.HasPrefix(n, "_"):
			partials = append(partials, n)
		default:
			pages = append(pages, n)
		}
	}
	if !hasLayout {
		return nil, fmt.Errorf("ui: templates: no %s", layoutFile)
	}
	sort.Strings(pages)
	for _, file := range pages {
		name := strings.TrimSuffix(file, path.Ext(file))
		t := template.New(layoutFile).Funcs(u.funcs(name))
		files := append([]string{layoutFile, file}, partials...)
		if _, err := t.ParseFS(templatesFS, files...); err != nil {
			return nil, fmt.Errorf("ui: templates: %w", err)
		}
		if t.Lookup("content") == nil {
			return nil, fmt.Errorf("ui: templates: %s defines no \"content\"", file)
		}
		// html/template escapes a template on its first execution: do it
		// now, so a contextual escaping error stops start-up too. The
		// execution itself fails on nil data and is of no interest.
		var escErr *template.Error
		if err := t.Execute(io.Discard, nil); errors.As(err, &escErr) {
			return nil, fmt.Errorf("ui: templates: %w", err)
		}
		u.pages[name] = t
	}
	for _, p := range []string{"runs", "run", "new_run", "error"} {
		if u.pages[p] == nil {
			return nil, fmt.Errorf("ui: templates: page %q is missing", p)
		}
	}
	return u, nil
}

// StyleSources are the Content-Security-Policy hash sources ('sha256-…')
// of the InlineStyles: what style-src must allow besides 'self' for the
// pages that carry them.
func (u *UI) StyleSources() []string { return slices.Clone(u.styleSources) }

// Pages lists the names Render accepts.
func (u *UI) Pages() []string {
	out := make([]string, 0, len(u.pages))
	for p := range u.pages {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Render executes page with data into w. Render into a buffer and write it
// only on success, so a failing template never sends half a page.
func (u *UI) Render(w io.Writer, page string, data any) error {
	t, ok := u.pages[page]
	if !ok {
		return fmt.Errorf("ui: no page %q", page)
	}
	if err := t.Execute(w, data); err != nil {
		return fmt.Errorf("ui: render %s: %w", page, err)
	}
	return nil
}

// RenderBytes renders page into a new buffer.
func (u *UI) RenderBytes(page string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := u.Render(&b, page, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// navItem is one entry of the site navigation.
type navItem struct {
	URL, Label string
	// Pages are the pages it is current on (aria-current="page").
	Pages []string
}

// nav is the site navigation, in order: the one table the layout draws
// its links from.
var nav = []navItem{
	{URL: "/", Label: "Runs", Pages: []string{"runs", "run"}},
	{URL: "/runs/new", Label: "New run", Pages: []string{"new_run"}},
	{URL: "/import", Label: "Import", Pages: []string{"import"}},
	{URL: SeriesPath, Label: "Series", Pages: []string{"series", "history"}},
	{URL: RegressionsPath, Label: "Regressions", Pages: []string{"regressions"}},
	{URL: WritepathPath, Label: "Write-path lab", Pages: []string{"writepath"}},
	{URL: SweepsPath, Label: "Latency sweeps", Pages: []string{"sweeps"}},
	{URL: SLOsPath, Label: "Latency targets", Pages: []string{"slos"}},
}

// NavLink is a navigation link as a page shows it.
type NavLink struct {
	URL, Label string
	Current    bool
}

// navLinks is the navigation of page.
func navLinks(page string) []NavLink {
	out := make([]NavLink, len(nav))
	for i, item := range nav {
		out[i] = NavLink{URL: item.URL, Label: item.Label, Current: slices.Contains(item.Pages, page)}
	}
	return out
}

func (u *UI) funcs(page string) template.FuncMap {
	return template.FuncMap{
		// asset is the URL of a static file, with a content hash so
		// browsers never run a stale script after an upgrade.
		"asset": func(name string) (string, error) {
			url, ok := u.assets[name]
			if !ok {
				return "", fmt.Errorf("no static file %q", name)
			}
			return url, nil
		},
		// inlineStyle is the text of one of the InlineStyles, for a
		// <style> element with nothing else in it (its hash must match).
		"inlineStyle": func(name string) (template.CSS, error) {
			css, ok := u.inline[name]
			if !ok {
				return "", fmt.Errorf("no inline style sheet %q", name)
			}
			return css, nil
		},
		// page is the name of the page being rendered.
		"page": func() string { return page },
		// nav is the site navigation (the table nav), the page's link
		// marked current.
		"nav": func() []NavLink { return navLinks(page) },
		// sessionSlot is SetSessionSlot's marker, or nothing.
		"sessionSlot": func() template.HTML { return u.sessionSlot },
	}
}
