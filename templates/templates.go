// Package templates holds kbench's HTML templates, embedded into the binary.
// The ui package parses them: layout.html wraps every page; every other
// *.html file is a page that defines "content" (and may define "scripts").
package templates

import "embed"

// FS holds the templates.
//
//go:embed *.html
var FS embed.FS
