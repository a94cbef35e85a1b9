// Package notify posts each new regression of a regressions cache to a
// webhook (kbench serve --notify-url), as Apache Otava notifies: the
// regression as /api/regressions gives it, with a Slack-compatible text.
// It is apart from package regressions so that the pages, which use the
// regressions' types, link no HTTP client.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/bgloop"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/regressions"
)

// DefaultEvery is how often a Notifier looks for a write to the
// store. Every way a run is stored (the lifecycle finishing a run,
// imports, CSV back-fills) is a write, so watching the store's
// generation covers them all without each telling the notifier; and the
// regressions cache then detects again only the series whose runs
// changed.
const DefaultEvery = 2 * time.Second

// notifyTimeout bounds one POST.
const notifyTimeout = 10 * time.Second

// Generations is what a Notifier watches; *store.Store satisfies it.
type Generations interface {
	// Generation changes after every write to the store.
	Generation() uint64
}

// Config is what a Notifier posts, where, and how often it
// looks.
type Config struct {
	// URL receives a POST of each new regression (serve --notify-url);
	// PublicURL ("http://host:8080") makes its links absolute.
	URL       string
	PublicURL string
	// Every is how often the store's generation is read (default
	// DefaultEvery).
	Every  time.Duration
	Logger *slog.Logger
	// Functions, when set, names each regression's functions for its
	// notification (*funcs.Namer); the notifier waits for them at most
	// FunctionsWait (default DefaultFunctionsWait), then posts what is
	// known (status "computing" and no functions).
	Functions     Functions
	FunctionsWait time.Duration
}

// DefaultFunctionsWait bounds the wait for a regression's functions
// before its notification is posted without them: naming pauses while a
// local run executes, and a queue of runs must not hold the notification
// back for hours.
const DefaultFunctionsWait = 2 * time.Minute

// Functions names the functions that moved at a regression;
// *funcs.Namer has it. It answers "computing" when ctx ends first.
type Functions interface {
	WaitRegression(ctx context.Context, r regressions.Regression) (wire.Functions, error)
}

// Notifier posts each regression the regressions list gains (those of
// the default detection and threshold, Cache.Default) to a webhook, as
// Apache Otava notifies.
type Notifier struct {
	cfg   Config
	cache *regressions.Cache
	gens  Generations
	loop  bgloop.Loop
	// sent are the regressions notified (or known at start), by series,
	// metric and run: kept in memory, so a restart takes the regressions
	// present then as notified and never sends one twice, but a POST that
	// failed just before is not retried.
	sent   map[regressionKey]bool
	client *http.Client
}

type regressionKey struct {
	series, metric string
	runID          uint
}

func keyOf(r regressions.Regression) regressionKey {
	return regressionKey{series: r.Series, metric: r.Metric, runID: r.RunID}
}

// notification is the JSON posted: the regression as /api/regressions
// gives it, with absolute URLs when the server knows its own, and a
// Slack-compatible one-line text.
type notification struct {
	regressions.APIRegression
	Text string `json:"text"`
}

// New is a notifier of cache's regressions to cfg.URL, which
// watches gens for writes. Start starts it.
func New(cache *regressions.Cache, gens Generations, cfg Config) *Notifier {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FunctionsWait <= 0 {
		cfg.FunctionsWait = DefaultFunctionsWait
	}
	return &Notifier{cfg: cfg, cache: cache, gens: gens, sent: map[regressionKey]bool{}, client: &http.Client{Timeout: notifyTimeout}}
}

// Start takes the regressions present as known (before it returns, so
// that a run stored after it is notified) and then, until Close, posts
// each new one.
func (n *Notifier) Start(ctx context.Context) {
	gen := n.gens.Generation()
	if regs, err := n.cache.Default(ctx); err != nil {
		n.cfg.Logger.Error("notify: regressions at start", "err", err)
	} else {
		for _, r := range regs {
			n.sent[keyOf(r)] = true
		}
	}
	n.loop.Start(ctx, func(ctx context.Context) {
		bgloop.Every(ctx, n.cfg.Every, func() {
			if g := n.gens.Generation(); g != gen {
				gen = g
				n.notifyNew(ctx)
			}
		})
	})
}

// Close stops the notifier and waits for it.
func (n *Notifier) Close() { n.loop.Close() }

// notifyNew posts the regressions not notified yet, oldest first. A
// failure is logged; it never fails what stored the run.
func (n *Notifier) notifyNew(ctx context.Context) {
	regs, err := n.cache.Default(ctx)
	if err != nil {
		n.cfg.Logger.Error("notify: regressions", "err", err)
		return
	}
	for i := len(regs) - 1; i >= 0; i-- {
		r := regs[i]
		if n.sent[keyOf(r)] {
			continue
		}
		n.sent[keyOf(r)] = true
		if err := n.post(ctx, r); err != nil {
			n.cfg.Logger.Error("notify: post regression", "series", r.Series, "metric", r.Metric, "run", r.RunID, "err", err)
		}
	}
}

func (n *Notifier) post(ctx context.Context, r regressions.Regression) error {
	msg := notification{APIRegression: regressions.NewAPIRegression(r)}
	msg.CompareURL, msg.HistoryURL = n.absolute(msg.CompareURL), n.absolute(msg.HistoryURL)
	link := msg.CompareURL
	if link == "" {
		link = msg.HistoryURL
	}
	msg.Text = notificationText(r, link)
	if n.cfg.Functions != nil {
		wctx, cancel := context.WithTimeout(ctx, n.cfg.FunctionsWait)
		f, err := n.cfg.Functions.WaitRegression(wctx, r)
		cancel()
		if err != nil {
			n.cfg.Logger.Error("notify: name the regression's functions", "series", r.Series, "metric", r.Metric, "run", r.RunID, "err", err)
		} else {
			f.DiffURL = n.absolute(f.DiffURL)
			msg.Functions, msg.FunctionNaming = f.Functions, &f.FunctionNaming
			msg.Text += functionsText(f.Functions)
		}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode the notification: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post to %s: bad URL", RedactURL(n.cfg.URL))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		// The client's error (a *url.Error) quotes the whole URL, secret
		// path and query included: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("post to %s: %w", RedactURL(n.cfg.URL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", RedactURL(n.cfg.URL), resp.Status)
	}
	return nil
}

// notificationText is the one-line Slack text of regression r, linking
// to link. Every part that comes from users (the metric, the series'
// name, the commit tags, the link that carries the series) is escaped as
// Slack requires, so that a series named "<!channel>" or a commit tag
// "<https://evil.example|Fix here>" arrives as text, not as a mention or
// a disguised link.
func notificationText(r regressions.Regression, link string) string {
	series := r.Series
	if r.Name != "" {
		series = r.Name // what the series is; the key stays in the link
	}
	return "kbench: " + slackEscape(r.Metric) + " of " + slackEscape(series) + " " +
		strings.Replace(numfmt.SignedPercent(r.ChangePct), "-", "−", 1) +
		" at " + slackEscape(r.CommitRange()) + " (p " + numfmt.PValue(r.PValue) + "): " + slackEscape(link)
}

// functionsText is the end of a notification's text naming the top
// functions that moved (none: ""), escaped for Slack as the rest is:
// function names come from the profiles, and a C++ or Java name holds
// < and > (templates, generics, <init>).
func functionsText(fs []wire.MovedFunction) string {
	if len(fs) == 0 {
		return ""
	}
	var parts []string
	for _, f := range fs[:min(len(fs), 3)] {
		parts = append(parts, slackEscape(f.Name)+" "+strings.Replace(numfmt.SignedPercent(f.DeltaPct), "-", "−", 1))
	}
	return " · functions: " + strings.Join(parts, ", ")
}

// slackEscaper replaces the three characters Slack's message formatting
// gives meaning to with the entities Slack asks for.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackEscape is s as literal text in a Slack message.
func slackEscape(s string) string { return slackEscaper.Replace(s) }

// absolute is path on Config.PublicURL, or path when the server
// does not know its address.
func (n *Notifier) absolute(path string) string {
	if path == "" || n.cfg.PublicURL == "" {
		return path
	}
	return strings.TrimSuffix(n.cfg.PublicURL, "/") + path
}

// RedactURL is u without its path, query and user information: webhook
// URLs carry their secret in the path or query (Slack's in the path), so
// logs and errors name only the scheme and host.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the notify URL"
	}
	return p.Scheme + "://" + p.Host
}

// ValidURL checks --notify-url: an absolute http or https URL.
func ValidURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("--notify-url %q: want an http:// or https:// URL", RedactURL(u))
	}
	return nil
}
