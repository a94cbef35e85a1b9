package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceCategories are the DevTools performance panel's main categories:
// enough to see parsing, script, style, layout, paint, network and GC.
var traceCategories = []string{
	"devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing", "loading",
	"v8.execute", "toplevel", "blink", "v8", "netlog",
}

// traceSummary is where the page's main thread spent the time from
// navigation start to "painted".
type traceSummary struct {
	Input     string         `json:"input"`
	Side      string         `json:"side"`
	Mode      string         `json:"mode"`
	File      string         `json:"file"`
	PaintedMS float64        `json:"painted_ms"`
	BusyMS    float64        `json:"busy_ms"` // main thread in a task
	SelfMS    []nameDuration `json:"self_ms"` // self time by event name, largest first
	Tasks     []taskSpan     `json:"long_tasks"`
	Requests  []requestSpan  `json:"requests"`
}

type nameDuration struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

// taskSpan is one main-thread task of 16 ms or more: when it started (ms
// since navigation start), how long it ran and its two largest children.
type taskSpan struct {
	StartMS float64 `json:"start_ms"`
	MS      float64 `json:"ms"`
	Top     string  `json:"top"`
}

// requestSpan is one network request of the page: sent → finished.
type requestSpan struct {
	URL     string  `json:"url"`
	StartMS float64 `json:"start_ms"`
	EndMS   float64 `json:"end_ms"`
}

type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Args json.RawMessage `json:"args"`
}

// trace loads u once more in a fresh tab with Chrome tracing on, writes the
// trace to path (open it in chrome://tracing, DevTools' Performance panel or
// Perfetto) and summarises the page's main thread.
func (b *browser) trace(ctx context.Context, cfg config, u, side, path string, fresh bool) (*traceSummary, error) {
	var opts []chromedp.ContextOption
	if fresh {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tab, cancel := chromedp.NewContext(b.ctx, opts...)
	defer cancel()
	script := fmt.Sprintf(injectCommon, map[string]string{sideKbench: injectKbench, sidePprof: injectPprof}[side])
	var (
		mu       sync.Mutex
		raw      [][]byte
		complete = make(chan struct{})
		once     sync.Once
	)
	err := chromedp.Do(tab,
		chromedp.EmulateViewport(cfg.width, cfg.height),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, performance.Enable, performance.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
			return err
		}))
	if err != nil {
		return nil, err
	}
	if err := chromedp.Listen(tab, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, v := range e.Value {
				raw = append(raw, slices.Clone([]byte(v)))
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			once.Do(func() { close(complete) })
		}
	}); err != nil {
		return nil, err
	}
	tctx, tcancel := context.WithTimeout(tab, cfg.pageTimeout)
	defer tcancel()
	if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReportEvents,
			TraceConfig:  &tracing.TraceConfig{IncludedCategories: traceCategories},
		})
		return err
	})); err != nil {
		return nil, fmt.Errorf("start tracing: %w", err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(u)); err != nil {
		return nil, err
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`!!(window.__flameBench && window.__flameBench.painted > 0)`,
		chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(cfg.pageTimeout))); err != nil {
		return nil, err
	}
	pr, err := chromedp.Run(tctx, chromedp.Evaluate[pageResult](collectResult))
	if err != nil {
		return nil, err
	}
	if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, tracing.End, cdp.Empty{})
		return err
	})); err != nil {
		return nil, fmt.Errorf("end tracing: %w", err)
	}
	select {
	case <-complete:
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("tracing did not complete within 60 s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	events := raw
	mu.Unlock()
	if err := writeTrace(path, events); err != nil {
		return nil, err
	}
	return summarizeTrace(events, u, pr.PaintedMS)
}

func writeTrace(path string, events [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	io.WriteString(f, `{"traceEvents":[`)
	for i, e := range events {
		if i > 0 {
			io.WriteString(f, ",\n")
		}
		f.Write(e)
	}
	_, err = io.WriteString(f, "]}\n")
	return err
}

// summarizeTrace finds the renderer main thread that navigated to u and
// splits its time, from navigation start to painted, into self time per
// event name (complete events only, nested by time).
func summarizeTrace(raw [][]byte, u string, paintedMS float64) (*traceSummary, error) {
	var evs []traceEvent
	for _, r := range raw {
		var e traceEvent
		if json.Unmarshal(r, &e) == nil {
			evs = append(evs, e)
		}
	}
	type thread struct{ pid, tid int }
	mains := map[thread]bool{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "thread_name" && strings.Contains(string(e.Args), `"CrRendererMain"`) {
			mains[thread{e.Pid, e.Tid}] = true
		}
	}
	// The page's main thread: the one whose navigationStart names u's
	// document, else the busiest renderer main thread.
	var main thread
	var nav float64
	busiest := map[thread]float64{}
	for _, e := range evs {
		th := thread{e.Pid, e.Tid}
		if !mains[th] {
			continue
		}
		if e.Name == "navigationStart" && strings.Contains(string(e.Args), jsonString(u)) {
			main, nav = th, e.Ts
		}
		if e.Ph == "X" {
			busiest[th] += e.Dur
		}
	}
	if nav == 0 {
		best := -1.0
		for th, d := range busiest {
			if d > best {
				main, best = th, d
			}
		}
		for _, e := range evs {
			if (thread{e.Pid, e.Tid}) == main && e.Name == "navigationStart" && (nav == 0 || e.Ts > nav) {
				nav = e.Ts
			}
		}
	}
	if nav == 0 {
		return nil, fmt.Errorf("no navigationStart in the trace")
	}
	end := nav + paintedMS*1000
	var xs []traceEvent
	for _, e := range evs {
		if (thread{e.Pid, e.Tid}) == main && e.Ph == "X" && e.Ts+e.Dur > nav && e.Ts < end {
			xs = append(xs, e)
		}
	}
	sort.SliceStable(xs, func(i, j int) bool {
		if xs[i].Ts != xs[j].Ts {
			return xs[i].Ts < xs[j].Ts
		}
		return xs[i].Dur > xs[j].Dur
	})
	s := &traceSummary{PaintedMS: paintedMS}
	self := map[string]float64{}
	type open struct {
		e        traceEvent
		children float64
		kids     map[string]float64
	}
	var stack []*open
	clip := func(e traceEvent) float64 { // duration inside [nav, end]
		a, b := max(e.Ts, nav), min(e.Ts+e.Dur, end)
		return max(b-a, 0)
	}
	closeTop := func() {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		self[o.e.Name] += max(clip(o.e)-o.children, 0)
		if len(stack) == 0 {
			d := clip(o.e)
			s.BusyMS += d / 1000
			if d >= 16000 {
				type kv struct {
					k string
					v float64
				}
				var ks []kv
				for k, v := range o.kids {
					ks = append(ks, kv{k, v})
				}
				sort.Slice(ks, func(i, j int) bool { return ks[i].v > ks[j].v })
				var top []string
				for i := 0; i < len(ks) && i < 3; i++ {
					top = append(top, fmt.Sprintf("%s %.0f ms", ks[i].k, ks[i].v/1000))
				}
				s.Tasks = append(s.Tasks, taskSpan{StartMS: (max(o.e.Ts, nav) - nav) / 1000, MS: d / 1000, Top: strings.Join(top, ", ")})
			}
		}
	}
	for _, e := range xs {
		for len(stack) > 0 && stack[len(stack)-1].e.Ts+stack[len(stack)-1].e.Dur <= e.Ts {
			closeTop()
		}
		if len(stack) > 0 {
			p := stack[len(stack)-1]
			p.children += clip(e)
		}
		if len(stack) >= 1 {
			// attribute to the task's direct and indirect children by name
			// (inclusive), for the long-task listing
			if len(stack) <= 2 {
				stack[0].kids[e.Name] += clip(e)
			}
		}
		stack = append(stack, &open{e: e, kids: map[string]float64{}})
	}
	for len(stack) > 0 {
		closeTop()
	}
	for k, v := range self {
		if v >= 1000 {
			s.SelfMS = append(s.SelfMS, nameDuration{k, v / 1000})
		}
	}
	sort.Slice(s.SelfMS, func(i, j int) bool { return s.SelfMS[i].MS > s.SelfMS[j].MS })
	if len(s.SelfMS) > 14 {
		s.SelfMS = s.SelfMS[:14]
	}
	// network requests of the page (any process): ResourceSendRequest →
	// ResourceFinish, by request id
	type req struct {
		url        string
		start, end float64
	}
	reqs := map[string]*req{}
	var order []string
	for _, e := range evs {
		if e.Name != "ResourceWillSendRequest" && e.Name != "ResourceSendRequest" && e.Name != "ResourceFinish" {
			continue
		}
		var a struct {
			Data struct {
				RequestID string `json:"requestId"`
				URL       string `json:"url"`
			} `json:"data"`
		}
		if json.Unmarshal(e.Args, &a) != nil || a.Data.RequestID == "" {
			continue
		}
		r := reqs[a.Data.RequestID]
		if r == nil {
			r = &req{}
			reqs[a.Data.RequestID] = r
			order = append(order, a.Data.RequestID)
		}
		switch e.Name {
		case "ResourceFinish":
			r.end = e.Ts
		case "ResourceSendRequest":
			if a.Data.URL != "" {
				r.url = a.Data.URL // the last one: the URL after redirects
			}
			fallthrough
		default:
			// The browser process logs ResourceWillSendRequest when it
			// sends a navigation request; the renderer logs the document's
			// ResourceSendRequest only once it commits.
			if r.start == 0 || e.Ts < r.start {
				r.start = e.Ts
			}
		}
	}
	for _, id := range order {
		r := reqs[id]
		if r.url == "" || strings.HasPrefix(r.url, "data:") || r.start < nav || r.start > end {
			continue
		}
		rs := requestSpan{URL: r.url, StartMS: (r.start - nav) / 1000}
		if r.end > 0 {
			rs.EndMS = (r.end - nav) / 1000
		}
		s.Requests = append(s.Requests, rs)
	}
	return s, nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
