package server

import (
	"bytes"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Rendered pages are cached until the store's next write: the runs list
// and a run page are read far more often than runs change (a team keeps
// them open while runs go by), and rendering one costs milliseconds of
// queries and templates. Measured with 50 clients: p99 went from ≈500 ms
// to ≈16 ms (bench/serve).
//
// The one per-visitor part of a page, its CSRF token, is rendered as a
// placeholder and swapped in per request.

// maxCachedPages bounds the cache (pages are tens of KiB).
const maxCachedPages = 256

type cachedPage struct {
	gen  uint64
	body []byte
}

// cachedRender serves page key from the cache when the store has not
// changed since it was rendered; otherwise build renders it (with the
// placeholder token as its CSRF) and it is kept.
func (s *Server) cachedRender(c *gin.Context, key string, build func(csrf string) (name string, view any, err error)) {
	gen := s.store.Generation()
	token := []byte(s.csrfToken(c))
	if p, ok := s.pages.Get(key); ok && p.gen == gen {
		c.Data(http.StatusOK, "text/html; charset=utf-8", bytes.ReplaceAll(p.body, s.csrfPlaceholder, token))
		return
	}
	name, view, err := build(string(s.csrfPlaceholder))
	if err != nil {
		s.fail(c, err)
		return
	}
	var buf bytes.Buffer
	if err := s.ui.Render(&buf, name, view); err != nil {
		s.log.Error("render", "page", name, "err", err)
		c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("internal error: page could not be rendered\n"))
		return
	}
	// Reads during a write may see either side of it: only keep the page
	// if no write finished while it was built. A page that shows the
	// time (a live run's elapsed time) is never kept.
	if v, ok := view.(interface{ Volatile() bool }); (!ok || !v.Volatile()) && s.store.Generation() == gen {
		s.pages.Add(key, cachedPage{gen: gen, body: buf.Bytes()})
	}
	c.Data(http.StatusOK, "text/html; charset=utf-8", bytes.ReplaceAll(buf.Bytes(), s.csrfPlaceholder, token))
}
