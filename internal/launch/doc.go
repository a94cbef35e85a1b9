// Package launch is how kbench queues runs for a request: single runs
// and their repetitions, A/B submissions, repetitions added to a
// comparison, the write-path preset, and latency sweeps with the loop
// that queues their second phase. It checks a request into specs, stores
// the runs and hands them to the run lifecycle; it answers no HTTP.
//
// What it refuses it reports as rundoc.FieldErrors (every bad field,
// named as the API names it), so the server answers them 400 and a form
// shows each beside its field. The other refusals are errors the server
// maps to a status in its one place (server's classify): ErrQueueFull
// (429), a *RerunError (409, or 400 on field "runs" for imported runs),
// store.ErrNotFound (404) and store.ErrConflict (409).
//
// It imports the contract (rundoc), the store, the comparison columns
// (compare), the named clusters and tools, the queue names (jobs), how
// long a worker stays live (lifecycle.WorkerLostAfter), the JDK lookup
// (jdk), the small libraries (median, numfmt) and, for the limits and
// defaults its forms show, ui. It never imports
// runner, so that a server linking it links no Kafka client: the Kafka
// client's check of a spec (runner.Validate) comes in as Options.Validate.
// It never imports gin or net/http either: the server decodes requests
// and encodes answers. The target policy (--allow-target) comes in as
// Options.Allowed, and the run lifecycle as the Runs interface.
package launch
