package acceptance

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// e2eResponses records the HTTP responses a tab receives.
type e2eResponses struct {
	mu   sync.Mutex
	seen []*network.Response
}

func (r *e2eResponses) listen(t *testing.T, b *e2eBrowser) {
	t.Helper()
	if err := chromedp.Listen(b.ctx, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok {
			r.mu.Lock()
			r.seen = append(r.seen, e.Response)
			r.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
}

// wait returns the first response whose URL ends with suffix (before any
// query), waiting for it.
func (r *e2eResponses) wait(t *testing.T, b *e2eBrowser, suffix string) *network.Response {
	t.Helper()
	deadline := time.Now().Add(e2eStepTimeout)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, resp := range r.seen {
			u, _, _ := strings.Cut(resp.URL, "?")
			if strings.HasSuffix(u, suffix) {
				r.mu.Unlock()
				return resp
			}
		}
		r.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no request for %s within %v\n%s", suffix, e2eStepTimeout, b.state())
	return nil
}

func (r *e2eResponses) failed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, resp := range r.seen {
		if resp.Status >= 400 {
			out = append(out, fmt.Sprintf("%d %s", resp.Status, resp.URL))
		}
	}
	return out
}

// TestE2EFavicon: kbench's pages and the embedded pprof UI's (which name
// no icon, so the browser asks for /favicon.ico) get an icon, not a 404.
func TestE2EFavicon(t *testing.T) {
	e2eSkip(t)
	srv := startE2EServer(t)
	b := startE2EBrowser(t)
	id := srv.e2eImport(t, "icon", "main.main;main.work 10\n")
	var seen e2eResponses
	seen.listen(t, b)

	b.do(t, "open the pprof UI", chromedp.Navigate(fmt.Sprintf("%s/profiles/%d/pprof/flamegraph", srv.URL, id)))
	icon := seen.wait(t, b, "/favicon.ico")
	if icon.Status != http.StatusOK || !strings.HasPrefix(icon.MimeType, "image/") {
		t.Errorf("the pprof page's /favicon.ico: %d %s, want 200 and an image", icon.Status, icon.MimeType)
	}
	b.do(t, "open the runs page", chromedp.Navigate(srv.URL+"/"))
	own := seen.wait(t, b, "/static/favicon.ico")
	if own.Status != http.StatusOK || !strings.HasPrefix(own.MimeType, "image/") {
		t.Errorf("kbench's icon %s: %d %s, want 200 and an image", own.URL, own.Status, own.MimeType)
	}
	if bad := seen.failed(); len(bad) > 0 {
		t.Errorf("failed requests: %s", strings.Join(bad, ", "))
	}
	b.checkConsole(t)
}
