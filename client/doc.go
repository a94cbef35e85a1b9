// Package client is kbench's JSON API as Go: the types of its requests and
// answers (the wire types) and a client that sends the one and decodes the
// other (Client).
//
// The server encodes its answers with these types, or with types its
// packages alias to them, so that a field of the API is declared once;
// kbench check, exec and import, the acceptance tests and the benches
// decode with them. A parity test in package server asks every JSON route
// of the server's route table for a live answer and decodes it here with
// unknown fields disallowed, so the two cannot drift apart.
//
// The values that make up a run (Workload, Status, Better, …) are type
// aliases of the run contract's (internal/rundoc): a module outside kbench
// cannot import an internal package, but it can use its types through
// these names.
//
// The types are declared in client/wire, which imports no HTTP client so
// that kbench's pages and comparisons can encode them, and are aliased
// here. client imports only the standard library, client/wire and
// internal/rundoc, so that a program talking to a kbench server links no
// Kafka client, no database and no web framework (internal/layering
// checks it).
package client
