// Package static holds kbench's CSS and JavaScript, embedded into the
// binary and served under /static/. Nothing is loaded from elsewhere: the
// pages work offline and under a strict Content-Security-Policy
// (script-src 'self', no inline scripts or handlers).
package static

import "embed"

// FS holds the static files.
//
//go:embed *.css *.js
var FS embed.FS
