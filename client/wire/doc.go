// Package wire declares the JSON API's requests and answers as Go types:
// the shapes the server encodes, the Go client (package client, which
// aliases every one of them) decodes, and a parity test in package server
// holds to every JSON route. It imports only encoding/json, time and the
// run contract (internal/rundoc), and no HTTP client, so the pages and
// the comparisons that encode these shapes link none.
package wire
