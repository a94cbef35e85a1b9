package server

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

// receiver is a webhook that hands each POST's body to bodies, answering
// status.
func receiver(t *testing.T, status int) (*httptest.Server, chan map[string]any) {
	bodies := make(chan map[string]any, 16)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil {
			t.Errorf("webhook got %s %s %q", r.Method, r.Header.Get("Content-Type"), b)
		}
		bodies <- m
		w.WriteHeader(status)
	}))
	t.Cleanup(rs.Close)
	return rs, bodies
}

func next(t *testing.T, bodies chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m := <-bodies:
		return m
	case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
		t.Fatal("no notification")
		return nil
	}
}

// TestNotifyRegressions: with --notify-url, each new regression is posted
// once as JSON (the API's fields, absolute links, a Slack text); a later
// write posts only the regression it brought.
func TestNotifyRegressions(t *testing.T) {
	defer func(d time.Duration) { notifyEvery = d }(notifyEvery)
	notifyEvery = 10 * time.Millisecond
	rs, bodies := receiver(t, http.StatusOK)
	ts := newTestServer(t, func(c *Config) { c.NotifyURL = rs.URL + "/hook"; c.PublicURL = "http://kbench.example:8080" })
	ids := stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	m := next(t, bodies)
	if m["series"] != "fp-a@trunk" || m["metric"] != "record-send-rate" || m["run_id"] != float64(ids[20]) || m["index"] != float64(20) ||
		math.Abs(m["change_pct"].(float64)+8.7) > 1 || m["p_value"] == nil || m["before"] == nil || m["after"] == nil ||
		!strings.HasPrefix(m["compare_url"].(string), "http://kbench.example:8080/compare?") {
		t.Errorf("notification %v", m)
	}
	text, _ := m["text"].(string)
	if !strings.HasPrefix(text, "kbench: record-send-rate of fp-a (producer) on trunk −8.") || !strings.Contains(text, "% at s19..s20 (p ") ||
		!strings.HasSuffix(text, "): "+strings.ReplaceAll(m["compare_url"].(string), "&", "&amp;")) || strings.Contains(text, "\n") {
		t.Errorf("text %q", text)
	}
	stepSeries(t, ts, "fp-b", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-latency-p99", "ms", rundoc.LowerIsBetter, 10, 12)
	if m := next(t, bodies); m["series"] != "fp-b@trunk" || m["metric"] != "record-latency-p99" {
		t.Errorf("second notification %v (want fp-b's, fp-a's only once)", m)
	}
	select {
	case m := <-bodies:
		t.Errorf("a third notification %v", m)
	default:
	}
}

// TestNotifyFailureLogged: a webhook that fails is logged (by host, not
// its secret path) and the run is stored all the same.
func TestNotifyFailureLogged(t *testing.T) {
	defer func(d time.Duration) { notifyEvery = d }(notifyEvery)
	notifyEvery = 10 * time.Millisecond
	rs, bodies := receiver(t, http.StatusInternalServerError)
	ts := newTestServer(t, func(c *Config) { c.NotifyURL = rs.URL + "/secret-path" })
	ids := stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	next(t, bodies)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(ts.logs.String(), "notify: post regression") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "notify: post regression") || !strings.Contains(logs, "500 Internal Server Error") || strings.Contains(logs, "secret-path") {
		t.Errorf("logs:\n%s", logs)
	}
	if _, err := ts.st.GetRun(t.Context(), ids[39]); err != nil {
		t.Error(err)
	}
}

// TestNotifyUnreachableLogged: a post that cannot reach the webhook at
// all is logged naming only its scheme and host, never the secret path,
// query or user information the client's error quotes.
func TestNotifyUnreachableLogged(t *testing.T) {
	defer func(d time.Duration) { notifyEvery = d }(notifyEvery)
	notifyEvery = 10 * time.Millisecond
	closed := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(closed.URL, "http://")
	closed.Close() // nothing listens there any more: the post fails to connect
	ts := newTestServer(t, func(c *Config) {
		c.NotifyURL = "http://hookuser:hookpass@" + host + "/services/T0/B0/secret-path?token=secret-query"
	})
	stepSeries(t, ts, "fp-a", time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), 40, "record-send-rate", "records/s", rundoc.HigherIsBetter, 115000, 105000)
	deadline := time.Now().Add(time.Minute) // a guard against hanging, not a timing assertion
	for !strings.Contains(ts.logs.String(), "notify: post regression") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "notify: post regression") || !strings.Contains(logs, "http://"+host) {
		t.Fatalf("no failure naming http://%s logged:\n%s", host, logs)
	}
	for _, secret := range []string{"services", "secret-path", "token", "secret-query", "hookuser", "hookpass"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs hold %q:\n%s", secret, logs)
		}
	}
}

// TestNotificationTextEscaped: what users named (series, metric, commit
// tags) reaches Slack as text: <, > and & are escaped as Slack requires,
// so no mention (<!channel>) and no disguised link (<URL|text>) is made.
func TestNotificationTextEscaped(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    ui.Regression
		link string
		want string
	}{
		{"plain", ui.Regression{Series: "fp@trunk", Metric: "record-send-rate", ChangePct: -8.7, PValue: 2e-6, CommitBefore: "c19", CommitAfter: "c20"},
			"http://kbench.example/compare?at=21&by=change",
			"kbench: record-send-rate of fp@trunk −8.7% at c19..c20 (p 2.0e-6): http://kbench.example/compare?at=21&amp;by=change"},
		{"mention", ui.Regression{Series: "<!channel>", Metric: "record-send-rate", ChangePct: -8.7, PValue: 2e-6, CommitBefore: "a", CommitAfter: "b"},
			"/history?series=%3C%21channel%3E",
			"kbench: record-send-rate of &lt;!channel&gt; −8.7% at a..b (p 2.0e-6): /history?series=%3C%21channel%3E"},
		{"named", ui.Regression{Series: "047a5cd56ea7ff5f@trunk", Name: "perf <b> (producer) on trunk", Metric: "record-send-rate", ChangePct: -8.7, PValue: 2e-6, CommitBefore: "c19", CommitAfter: "c20"},
			"/history?series=047a5cd56ea7ff5f%40trunk",
			"kbench: record-send-rate of perf &lt;b&gt; (producer) on trunk −8.7% at c19..c20 (p 2.0e-6): /history?series=047a5cd56ea7ff5f%40trunk"},
		{"link", ui.Regression{Series: "s", Metric: "m", ChangePct: 12, PValue: 1e-4, CommitBefore: "<https://evil.example|Fix here>", CommitAfter: "R&D <@U123>"},
			"/compare",
			"kbench: m of s +12.0% at &lt;https://evil.example|Fix here&gt;..R&amp;D &lt;@U123&gt; (p 1.0e-4): /compare"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := notificationText(tt.r, tt.link)
			if got != tt.want {
				t.Errorf("notificationText = %q\nwant              %q", got, tt.want)
			}
			if strings.ContainsAny(got, "<>") {
				t.Errorf("%q holds < or >", got)
			}
		})
	}
}

// TestNotifyURLValidated: --notify-url must be an http(s) URL.
func TestNotifyURLValidated(t *testing.T) {
	for _, u := range []string{"ftp://x/y", "hooks.slack.com/x", "http://"} {
		if err := (Config{NotifyURL: u}).Validate(); err == nil || !strings.Contains(err.Error(), "--notify-url") {
			t.Errorf("NotifyURL %q: %v", u, err)
		}
	}
	if err := (Config{NotifyURL: "https://hooks.example/T0/B0/x"}).Validate(); err != nil {
		t.Error(err)
	}
}
