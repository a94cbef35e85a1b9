package runner

import (
	"context"
	"runtime/pprof"
)

// The pprof label kbench's goroutines carry in its CPU profiles, so a
// label filter (tagfocus=role=send) splits the client's work by what it
// was doing. Goroutines inherit their creator's labels, so the client's
// own goroutines (kafka-go's Writer and Transport, the accumulator's
// requests) carry the role of the loop that started them.
const (
	roleLabel   = "role"
	roleSend    = "send"    // the producer's send loops and what they start
	roleReceive = "receive" // the consumer's read loops and what they start
	roleEncode  = "encode"  // encoding a record batch (the raw and client producers)
)

// withRole runs f with the goroutine labelled role (and ctx carrying the
// label), then restores the labels it had.
func withRole(ctx context.Context, role string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels(roleLabel, role), f)
}
