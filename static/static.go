// Package static holds kbench's CSS and JavaScript, embedded into the
// binary and served under /static/. Nothing is loaded from elsewhere: the
// pages work offline and under a strict Content-Security-Policy
// (script-src 'self', no inline scripts or handlers).
package static

import "embed"

// FS holds the static files: also favicon.ico, kbench's icon (16 and
// 32 px PNGs in an ICO file: three bars of an icicle flame graph), which
// the pages link and /favicon.ico serves.
//
//go:embed *.css *.js favicon.ico
var FS embed.FS
