package server

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Responses are compressed, zstd or gzip by the client's Accept-Encoding
// (zstd when both are equally welcome), through klauspost/compress's
// gzhttp: pages, CSS, JavaScript, JSON, SVG, CSV, Markdown and the pprof
// UI's pages. Never compressed: live event streams (text/event-stream, so
// every event still reaches the browser when it is flushed), bodies that
// are compressed already (profile downloads are gzipped protobuf,
// application/octet-stream), and answers under 1 KiB. Every answer that
// could be compressed says Vary: Accept-Encoding.
//
// The flame-graph answers of large profiles are cached with their
// compressed forms (encodedBody), so they are compressed once, not on
// every request.

// compressMinSize: smaller answers gain nothing from compression.
const compressMinSize = gzhttp.DefaultMinSize

// compressible reports whether a response of this Content-Type is worth
// compressing: text and JSON, not event streams, not binary formats.
func compressible(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case mt == "text/event-stream":
		return false
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/x-javascript", "application/xml", "image/svg+xml":
		return true
	}
	return false
}

// compressor wraps a handler in gzhttp with kbench's rules.
var compressor = func() func(http.Handler) http.HandlerFunc {
	w, err := gzhttp.NewWrapper(gzhttp.MinSize(compressMinSize), gzhttp.ContentTypeFilter(compressible))
	if err != nil {
		panic(fmt.Sprintf("server: compression: %v", err)) // the options are constants
	}
	return w
}()

// compress is the middleware that compresses answers. Event-stream
// requests (EventSource always asks with Accept: text/event-stream) are
// left alone from the start; any other stream is recognised by its
// Content-Type and passed through unbuffered.
func (s *Server) compress(c *gin.Context) {
	if strings.Contains(c.GetHeader("Accept"), "text/event-stream") {
		c.Next()
		return
	}
	orig := c.Writer
	compressor(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		cw := &compressWriter{ResponseWriter: orig, out: w, status: orig.Status(), size: -1}
		c.Writer = cw
		defer func() {
			// A handler that only set a status (204, a redirect without a
			// body) has written nothing: send the status now, before the
			// compressor closes.
			cw.WriteHeaderNow()
			c.Writer = orig
		}()
		c.Next()
	})).ServeHTTP(orig, c.Request)
}

// compressWriter is the gin.ResponseWriter handlers see while compress
// runs: writes go through the compressor (out); the status is kept until
// the first write, as gin's own writer does, so the last WriteHeader
// before the body wins.
type compressWriter struct {
	gin.ResponseWriter // the connection's writer: Hijack, CloseNotify, Pusher
	out                http.ResponseWriter
	status             int
	size               int // -1 until the header is sent
}

func (w *compressWriter) Header() http.Header { return w.out.Header() }

// Unwrap lets http.ResponseController reach the compressor.
func (w *compressWriter) Unwrap() http.ResponseWriter { return w.out }

func (w *compressWriter) WriteHeader(code int) {
	if code > 0 && !w.Written() {
		w.status = code
	}
}

func (w *compressWriter) WriteHeaderNow() {
	if !w.Written() {
		w.size = 0
		w.out.WriteHeader(w.status)
	}
}

func (w *compressWriter) Write(b []byte) (int, error) {
	w.WriteHeaderNow()
	n, err := w.out.Write(b)
	w.size += n
	return n, err
}

func (w *compressWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *compressWriter) Status() int   { return w.status }
func (w *compressWriter) Size() int     { return w.size }
func (w *compressWriter) Written() bool { return w.size >= 0 }

func (w *compressWriter) Flush() {
	w.WriteHeaderNow()
	if f, ok := w.out.(http.Flusher); ok {
		f.Flush()
	}
}

// negotiate picks the encoding of an answer from an Accept-Encoding
// header: "zstd", "gzip" or "" (identity), the one with the higher
// quality, zstd on a tie; "*" stands for codings not named.
func negotiate(acceptEncoding string) string {
	q := map[string]float64{}
	star := -1.0
	for _, part := range strings.Split(acceptEncoding, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		v := 1.0
		for _, p := range strings.Split(params, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // a malformed weight accepts nothing
				}
				v = f
			}
		}
		if name == "*" {
			star = v
		} else if old, seen := q[name]; !seen || v > old {
			q[name] = v
		}
	}
	weight := func(name string) float64 {
		if v, ok := q[name]; ok {
			return v
		}
		return max(star, 0)
	}
	z, g := weight("zstd"), weight("gzip")
	switch {
	case z > 0 && z >= g:
		return "zstd"
	case g > 0:
		return "gzip"
	}
	return ""
}

// encodedBody is an answer kept for reuse (a flame graph of a stored
// profile never changes) with its compressed forms, each made once, by the
// first request that accepts it. Compressing the 7.9 MB flame graph of a
// large profile costs ~0.1 s of CPU; serving the kept form costs nothing.
type encodedBody struct {
	contentType string
	raw         []byte

	mu    sync.Mutex
	forms map[string][]byte // by encoding
}

func newEncodedBody(contentType string, raw []byte) *encodedBody {
	return &encodedBody{contentType: contentType, raw: raw}
}

// form returns the body compressed with enc ("gzip" or "zstd").
func (b *encodedBody) form(enc string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if z, ok := b.forms[enc]; ok {
		return z, nil
	}
	var buf bytes.Buffer
	switch enc {
	case "gzip":
		w, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b.raw); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case "zstd":
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b.raw); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("server: no encoding %q", enc)
	}
	if b.forms == nil {
		b.forms = map[string][]byte{}
	}
	z := buf.Bytes()
	b.forms[enc] = z
	return z, nil
}

// serveEncoded answers with b, compressed as the client accepts it. The
// compress middleware leaves an answer that already has a
// Content-Encoding alone.
func (s *Server) serveEncoded(c *gin.Context, b *encodedBody) {
	h := c.Writer.Header()
	if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Accept-Encoding") {
		h.Add("Vary", "Accept-Encoding")
	}
	body := b.raw
	if enc := negotiate(c.GetHeader("Accept-Encoding")); enc != "" && len(b.raw) >= compressMinSize {
		z, err := b.form(enc)
		if err != nil {
			s.log.Error("compress an answer", "path", c.Request.URL.Path, "encoding", enc, "err", err)
		} else {
			body = z
			h.Set("Content-Encoding", enc)
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Data(http.StatusOK, b.contentType, body)
}
