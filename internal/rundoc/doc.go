// Package rundoc holds the documents a benchmark run is made of and
// exchanged as, between the process that runs it (runner), the one that
// stores it (store) and the ones that show and compare it (ui, compare,
// server):
//
//   - the run's spec (Spec) and the option table that drives the CLI's
//     flags, the API's JSON params and the web form (Flags, ParseArgs,
//     SpecFromParams, Usage), `kbench run`'s command line
//     (ParseRunCommand), with its field errors (FieldErrors) and the rule
//     that keeps secrets out of anything written (RedactProps);
//   - the result a run writes as result.json (Result, versioned by
//     ResultSchema), with its metrics, interval series, measurement and
//     environment;
//   - the progress events a run prints as JSON lines (Event, versioned by
//     EventVersion);
//   - a stored run as pages and comparisons read it (Run, with its
//     documents decoded by SetDocuments; Profile, Report, ImportSpec);
//   - the closed sets of values all of them use (Workload, Status, Source,
//     ProfileRole, ProfileKind, Better, EventType).
//
// It imports only the standard library, so that a package reading these
// documents links no Kafka client, no database and no web framework
// (TestDependencies checks it).
package rundoc
