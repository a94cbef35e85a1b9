// Package acceptance holds the tests that drive kbench from outside, as a
// user does: the real binary built with go build (`kbench serve`, `run`,
// `worker`, `exec`, `import`, `check`, `broker`) and the pages in a real
// headless Chromium through chromedp. It is the third test tier:
//
//	go test -short ./...   fast: no kbench, broker, JVM, Chromium or PostgreSQL process
//	go test ./...          adds the integration tests
//	go test ./acceptance/  these tests alone
//
// Every test here skips under -short (e2eSkip or tier.Integration first
// thing), and the helpers that build the binary and start Chromium fail a
// test that did not (internal/testutil/tier). The browser tests skip
// without /usr/bin/chromium, the tests of several workers without
// KBENCH_TEST_POSTGRES, the JVM ones without a JDK; ./test.sh provides
// all three.
//
// Files: harness_test.go holds the shared helpers (building the binary,
// starting `kbench serve`, workers and the browser); every other file
// holds the tests of one feature, named for it (newrun_test.go,
// flamegraph_test.go, lostworker_test.go, latencysweeps_test.go, …).
//
// The package has no code but this comment.
package acceptance
