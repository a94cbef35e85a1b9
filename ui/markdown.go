package ui

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Markdown written by users (a report's notes) is shown rendered, as
// GitHub-flavoured Markdown (tables, strikethrough, task lists, bare
// links), and nothing in it can run or load anything:
//
//   - raw HTML is never passed through: it is shown as the text that was
//     typed (goldmark's default would silently drop it);
//   - links keep their target only when it is http, https, mailto or a
//     relative URL; any other scheme (javascript:, data:, vbscript:, file:,
//     ftp:, …) leaves the link's text without a link. goldmark alone would
//     keep such a link with an empty href, a link to the page itself;
//   - images become links to the image: pages load nothing from other
//     sites (the Content-Security-Policy would block it anyway), and a
//     reader decides whether to open it.
var markdown = goldmark.New(
	// GFM, with table cells aligned by attribute: a style attribute would
	// break the page's Content-Security-Policy (style-src 'self').
	goldmark.WithExtensions(extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough, extension.Linkify, extension.TaskList),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100))),
)

// RenderMarkdown renders user-written Markdown as safe HTML (see the rules
// above). Empty or blank input renders as nothing.
func RenderMarkdown(src string) template.HTML {
	if strings.TrimSpace(src) == "" {
		return ""
	}
	var b bytes.Buffer
	if err := markdown.Convert([]byte(src), &b); err != nil {
		// goldmark only fails when the writer does; a bytes.Buffer does
		// not. Should it ever, the text is still shown, escaped.
		return template.HTML("<p>" + template.HTMLEscapeString(src) + "</p>")
	}
	// Safe by construction: goldmark escapes text, raw HTML is escaped by
	// rawHTMLAsText and link targets are checked by safeLinks.
	return template.HTML(b.String())
}

// safeURL reports whether a link target may be rendered as a link: an
// http, https or mailto URL, or a relative one. Control characters, which
// browsers strip before they read the scheme, and anything url.Parse
// refuses count as unsafe.
func safeURL(dest []byte) bool {
	for _, c := range dest {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	s := strings.TrimSpace(string(dest))
	if s != string(dest) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https", "mailto":
		return true
	}
	return false
}

// safeDestination checks a link's or an image's destination both as
// written and as the renderer will write it (character references
// resolved, then percent-encoded): "&#106;avascript:" is "javascript:".
func safeDestination(dest []byte) bool {
	return safeURL(dest) && safeURL(util.URLEscape(dest, true))
}

// safeLinks rewrites links, autolinks and images by the rules above.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	type change struct {
		node ast.Node
		with func() // replaces node
	}
	var changes []change
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !safeDestination(n.Destination) {
				changes = append(changes, change{n, func() { unwrap(n) }})
			}
		case *ast.AutoLink:
			u := n.URL(src)
			if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(u), []byte("mailto:")) {
				u = append([]byte("mailto:"), u...)
			}
			if !safeURL(u) || !safeURL(util.URLEscape(u, false)) {
				label := ast.NewString(append([]byte(nil), n.Label(src)...))
				label.SetRaw(true) // shown as typed, escaped
				changes = append(changes, change{n, func() { n.Parent().ReplaceChild(n.Parent(), n, label) }})
			}
		case *ast.Image:
			changes = append(changes, change{n, func() { imageToLink(n) }})
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, c := range changes {
		if c.node.Parent() != nil {
			c.with()
		}
	}
}

// unwrap replaces n by its children.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		n.RemoveChild(n, c)
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

// imageToLink replaces an image by a link to it, labelled with its
// description (its URL when it has none). An unsafe target, or an image
// that is already inside a link (a badge), leaves the description alone.
func imageToLink(img *ast.Image) {
	inLink := false
	for a := img.Parent(); a != nil; a = a.Parent() {
		if _, ok := a.(*ast.Link); ok {
			inLink = true
		}
	}
	if inLink || !safeDestination(img.Destination) {
		unwrap(img)
		return
	}
	link := ast.NewLink()
	link.Destination = img.Destination
	link.Title = img.Title
	for c := img.FirstChild(); c != nil; {
		next := c.NextSibling()
		img.RemoveChild(img, c)
		link.AppendChild(link, c)
		c = next
	}
	if !link.HasChildren() {
		s := ast.NewString(append([]byte(nil), img.Destination...))
		s.SetRaw(true)
		link.AppendChild(link, s)
	}
	img.Parent().ReplaceChild(img.Parent(), img, link)
}

// rawHTMLAsText renders raw HTML, inline or as a block, as the text that
// was typed: escaped, never interpreted.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTMLAsText)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlockAsText)
}

func renderRawHTMLAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	segs := node.(*ast.RawHTML).Segments
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		template.HTMLEscape(w, seg.Value(source))
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlockAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		return ast.WalkContinue, nil
	}
	var b bytes.Buffer
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(source))
	}
	if n.HasClosure() {
		b.Write(n.ClosureLine.Value(source))
	}
	_, _ = w.WriteString(`<p class="raw-html">`)
	template.HTMLEscape(w, bytes.TrimRight(b.Bytes(), "\n"))
	_, _ = w.WriteString("</p>\n")
	return ast.WalkContinue, nil
}
