package tier

import (
	"fmt"
	"strings"
	"testing"
)

// setShort is SetShort, checked against the testing package's view.
func setShort(t *testing.T, short bool) {
	t.Helper()
	SetShort(t, short)
	if Short() != short || testing.Short() != short {
		t.Fatalf("after SetShort(%v): Short() = %v, testing.Short() = %v", short, Short(), testing.Short())
	}
}

// recorder is a Fataler and Skipper that records instead of stopping.
type recorder struct {
	fatal, skip string
}

func (r *recorder) Helper()           {}
func (r *recorder) Fatal(args ...any) { r.fatal = fmt.Sprint(args...) }
func (r *recorder) Skip(args ...any)  { r.skip = fmt.Sprint(args...) }

// panicOf runs f and returns what it panicked with, "" if it returned.
func panicOf(f func()) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg = fmt.Sprint(p)
		}
	}()
	f()
	return ""
}

func TestShortFollowsTheFlag(t *testing.T) {
	if Short() != testing.Short() {
		t.Errorf("Short() = %v, testing.Short() = %v", Short(), testing.Short())
	}
}

func TestGuardsUnderShort(t *testing.T) {
	setShort(t, true)
	msg := panicOf(func() { Refuse("childproc.Start /usr/bin/java") })
	if !strings.Contains(msg, "childproc.Start /usr/bin/java") || !strings.Contains(msg, Refused) {
		t.Errorf("Refuse under -short panicked with %q, want what and %q", msg, Refused)
	}
	var r recorder
	RefuseTest(&r, "go build kbench")
	if !strings.Contains(r.fatal, "go build kbench "+Refused) {
		t.Errorf("RefuseTest under -short: Fatal(%q), want it to say %q", r.fatal, "go build kbench "+Refused)
	}
	r = recorder{}
	Integration(&r, "starts kbench run")
	if r.skip != "integration: starts kbench run" {
		t.Errorf("Integration under -short: Skip(%q)", r.skip)
	}
}

func TestGuardsWithoutShort(t *testing.T) {
	setShort(t, false)
	if msg := panicOf(func() { Refuse("childproc.Start /usr/bin/java") }); msg != "" {
		t.Errorf("Refuse without -short panicked: %s", msg)
	}
	var r recorder
	RefuseTest(&r, "go build kbench")
	Integration(&r, "starts kbench run")
	if r.fatal != "" || r.skip != "" {
		t.Errorf("without -short: Fatal(%q), Skip(%q); want neither", r.fatal, r.skip)
	}
}
