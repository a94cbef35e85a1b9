package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeNotifiesRegressions: `kbench serve --notify-url` builds the
// regressions cache and the notifier itself (the server only reads the
// cache): a CSV back-fill whose throughput drops by 8.7% half-way is
// posted to the webhook once, as JSON naming the series, the metric and
// a Slack text, and the server stops cleanly on SIGINT.
func TestServeNotifiesRegressions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	bodies := make(chan map[string]any, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("webhook got %q: %v", b, err)
		}
		bodies <- m
	}))
	defer hook.Close()

	cmd := exec.Command(e2eKbench(t), "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--notify-url", hook.URL+"/hook")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errb e2eBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var base string
	for deadline := time.Now().Add(60 * time.Second); base == ""; { // a guard against hanging, not a timing assertion
		if m := e2eServingLine.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("kbench serve exited (%v): %s", err, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("kbench serve did not start: %s", errb.String())
		}
	}

	var csv strings.Builder
	csv.WriteString("time,commit,record-send-rate\n")
	t0 := time.Date(2022, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := range 40 {
		v := 115000.0
		if i >= 20 {
			v = 105000
		}
		fmt.Fprintf(&csv, "%s,c%d,%.1f\n", t0.Add(time.Duration(i)*24*time.Hour).Format(time.RFC3339), i, v*(1+0.01*float64(i%3-1)))
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("series", "notify-me")
	mw.WriteField("workload", "producer")
	w, _ := mw.CreateFormFile("file", "history.csv")
	w.Write([]byte(csv.String()))
	mw.Close()
	resp, err := http.Post(base+"/api/import/csv", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/import/csv = %d", resp.StatusCode)
	}

	select {
	case m := <-bodies:
		text, _ := m["text"].(string)
		if m["series"] != "notify-me" || m["metric"] != "record-send-rate" || !strings.HasPrefix(text, "kbench: record-send-rate of ") ||
			!strings.Contains(text, " at c19..c20 ") {
			t.Errorf("notification %v", m)
		}
	case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
		t.Fatalf("no notification; serve's log:\n%s", errb.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("kbench serve after SIGINT: %v\n%s", err, errb.String())
	}
	select {
	case m := <-bodies:
		t.Errorf("a second notification %v", m)
	default:
	}
}
