// Notifications of new regressions: serve --notify-url posts each
// regression the regressions list gains, as Apache Otava notifies.

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/ui"
)

// notifyEvery is how often the notifier looks for a write to the store.
// Every way a run is stored (the lifecycle finishing a run, imports, CSV
// back-fills) is a write, so watching the store's generation covers them
// all without each telling the notifier; and the regressions cache then
// detects again only the series whose runs changed.
var notifyEvery = 2 * time.Second

// notifyTimeout bounds one POST.
const notifyTimeout = 10 * time.Second

// notifier is the state of the notifications (Config.NotifyURL).
type notifier struct {
	background
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

// notification is the JSON posted: the regression as /api/regressions
// gives it, with absolute URLs when the server knows its own, and a
// Slack-compatible one-line text.
type notification struct {
	apiRegression
	Text string `json:"text"`
}

// startNotifier takes the regressions present as known and then, until
// closeNotifier, posts each new one to Config.NotifyURL.
func (s *Server) startNotifier(ctx context.Context) {
	if s.cfg.NotifyURL == "" {
		return
	}
	n := &s.notify
	n.sent = map[regressionKey]bool{}
	n.client = &http.Client{Timeout: notifyTimeout}
	gen := s.store.Generation()
	if regs, err := s.notifiable(ctx); err != nil {
		s.log.Error("notify: regressions at start", "err", err)
	} else {
		for _, r := range regs {
			n.sent[keyOf(r)] = true
		}
	}
	n.start(ctx, func(ctx context.Context) {
		every(ctx, notifyEvery, func() {
			if g := s.store.Generation(); g != gen {
				gen = g
				s.notifyNew(ctx)
			}
		})
	})
}

func keyOf(r ui.Regression) regressionKey {
	return regressionKey{series: r.Series, metric: r.Metric, runID: r.RunID}
}

// notifiable are the regressions notifications are about: the badges'
// (default detection and threshold).
func (s *Server) notifiable(ctx context.Context) ([]ui.Regression, error) {
	return s.regressionsOf(ctx, ui.RegressionsQuery{Threshold: ui.DefaultRegressionThreshold})
}

// notifyNew posts the regressions not notified yet, oldest first. A
// failure is logged; it never fails what stored the run.
func (s *Server) notifyNew(ctx context.Context) {
	regs, err := s.notifiable(ctx)
	if err != nil {
		s.log.Error("notify: regressions", "err", err)
		return
	}
	for i := len(regs) - 1; i >= 0; i-- {
		r := regs[i]
		if s.notify.sent[keyOf(r)] {
			continue
		}
		s.notify.sent[keyOf(r)] = true
		if err := s.postRegression(ctx, r); err != nil {
			s.log.Error("notify: post regression", "series", r.Series, "metric", r.Metric, "run", r.RunID, "err", err)
		}
	}
}

func (s *Server) postRegression(ctx context.Context, r ui.Regression) error {
	n := notification{apiRegression: newAPIRegression(r)}
	n.CompareURL, n.HistoryURL = s.absolute(n.CompareURL), s.absolute(n.HistoryURL)
	link := n.CompareURL
	if link == "" {
		link = n.HistoryURL
	}
	n.Text = notificationText(r, link)
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.NotifyURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post to %s: bad URL", redactURL(s.cfg.NotifyURL))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.notify.client.Do(req)
	if err != nil {
		// The client's error (a *url.Error) quotes the whole URL, secret
		// path and query included: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("post to %s: %w", redactURL(s.cfg.NotifyURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", redactURL(s.cfg.NotifyURL), resp.Status)
	}
	return nil
}

// notificationText is the one-line Slack text of regression r, linking
// to link. Every part that comes from users (the metric, the series'
// name, the commit tags, the link that carries the series) is escaped as
// Slack requires, so that a series named "<!channel>" or a commit tag
// "<https://evil.example|Fix here>" arrives as text, not as a mention or
// a disguised link.
func notificationText(r ui.Regression, link string) string {
	series := r.Series
	if r.Name != "" {
		series = r.Name // what the series is; the key stays in the link
	}
	return "kbench: " + slackEscape(r.Metric) + " of " + slackEscape(series) + " " +
		strings.Replace(numfmt.SignedPercent(r.ChangePct), "-", "−", 1) +
		" at " + slackEscape(r.CommitRange()) + " (p " + numfmt.PValue(r.PValue) + "): " + slackEscape(link)
}

// slackEscaper replaces the three characters Slack's message formatting
// gives meaning to with the entities Slack asks for.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackEscape is s as literal text in a Slack message.
func slackEscape(s string) string { return slackEscaper.Replace(s) }

// absolute is path on Config.PublicURL, or path when the server does not
// know its address.
func (s *Server) absolute(path string) string {
	if path == "" || s.cfg.PublicURL == "" {
		return path
	}
	return strings.TrimSuffix(s.cfg.PublicURL, "/") + path
}

// redactURL is u without its query and user information: webhook URLs
// carry their secret in the path or query (Slack's in the path), so logs
// name only the host.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the notify URL"
	}
	return p.Scheme + "://" + p.Host
}

// validNotifyURL checks --notify-url: an absolute http or https URL.
func validNotifyURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("--notify-url %q: want an http:// or https:// URL", redactURL(u))
	}
	return nil
}
