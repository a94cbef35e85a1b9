package server

import (
	"strings"
	"testing"
)

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
