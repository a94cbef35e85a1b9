// Package tier draws the line between kbench's test tiers. `go test
// -short ./...` is the fast tier: it starts no kbench, broker, JVM,
// Chromium or PostgreSQL process. `go test ./...` adds the integration
// tests, which do; each of them calls Integration first, which skips it
// under -short.
//
// The code that starts such processes (the doors: childproc.Start for
// every kbench run, broker and tool child, the jfr tool in profiles/jfr,
// the acceptance tests' kbench build and browser) calls Refuse or
// RefuseTest, which fail when this process is a test binary run with
// -short. So an integration test that forgot its skip fails loudly
// instead of quietly making the fast tier slow. PostgreSQL tests need no
// guard of their own: pgtest.URL skips under -short.
//
// It imports only the standard library, and not package testing: the
// doors are production code, and the kbench binary must not link the
// testing package.
package tier

import (
	"flag"
	"fmt"
)

// Refused is what a refused start says: the rule the test broke.
const Refused = "started a process under -short: integration tests must skip under -short"

// Short reports whether this process is a test binary run with -short.
// It reads the test.short flag, which only a test binary registers, so it
// is false in the kbench binary (and in a test binary re-executed as a
// child, which never parses the test flags).
func Short() bool {
	f := flag.Lookup("test.short")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	short, _ := g.Get().(bool)
	return short
}

// message is the failure Refuse and RefuseTest report for what.
func message(what string) string {
	return fmt.Sprintf("tier: %s %s (call tier.Integration(t, reason) at the top of the test)", what, Refused)
}

// Refuse panics under -short, naming what was about to start (such as
// "childproc.Start /usr/bin/java"). Doors without a test to fail call it:
// a panic ends the test binary, so the test cannot pass by accident.
func Refuse(what string) {
	if Short() {
		panic(message(what))
	}
}

// Fataler is the part of testing.TB RefuseTest uses.
type Fataler interface {
	Helper()
	Fatal(args ...any)
}

// RefuseTest fails t under -short, naming what was about to start. Test
// helpers that start processes (build the kbench binary, start Chromium)
// call it first.
func RefuseTest(t Fataler, what string) {
	t.Helper()
	if Short() {
		t.Fatal(message(what))
	}
}

// Skipper is the part of testing.TB Integration uses.
type Skipper interface {
	Helper()
	Skip(args ...any)
}

// Integration skips t under -short with reason, what the test starts
// ("starts kbench run"). An integration test calls it first thing.
func Integration(t Skipper, reason string) {
	t.Helper()
	if Short() {
		t.Skip("integration: " + reason)
	}
}

// Cleaner is the part of testing.TB SetShort uses.
type Cleaner interface {
	Fataler
	Cleanup(func())
}

// SetShort sets the test.short flag to short until t ends: the tests of
// the guards simulate either tier with it. A test using it must not run
// in parallel with tests that read the flag.
func SetShort(t Cleaner, short bool) {
	t.Helper()
	f := flag.Lookup("test.short")
	if f == nil {
		t.Fatal("tier.SetShort: no test.short flag: not a test binary")
		return
	}
	was := f.Value.String()
	if err := f.Value.Set(fmt.Sprint(short)); err != nil {
		t.Fatal(err)
		return
	}
	t.Cleanup(func() { f.Value.Set(was) })
}
