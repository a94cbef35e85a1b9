package cli

import "github.com/kbench/kbench/client"

// newAPIClient is the client of a kbench server's JSON API that kbench
// import, run --server, exec and check use: it sends the token, and an
// unreachable server is reported with what to do about it.
func newAPIClient(base, token string) *client.Client {
	c := client.New(base, token)
	c.UnreachableHint = `start one with "kbench serve", or give --server`
	return c
}
