// Package toolexec runs an outside command (Kafka's perf-test scripts,
// `java …`, anything) the way kbench measures its own runs, and turns
// what it printed into a run document. `kbench exec` uses it to store the
// run through a server; a queued tool run's child uses it to write
// result.json into its --out directory.
//
// [Run] starts the command (argv, environment, directory) in its own
// process group, as a child that dies with kbench (internal/childproc),
// and while it runs:
//
//   - samples the CPU time of its whole process tree every 100 ms from
//     /proc: the command and every process whose parent chain leads to
//     it, children that come and go included. A process's utime+stime
//     counts its threads, live and exited; its cutime+cstime count the
//     children it reaped, so a child that lived between two samples is
//     not lost, and a member that was re-parented away from the tree (a
//     daemonised grandchild) is followed by pid and start time until it
//     ends. The total at the end is the kernel's own rusage of the
//     command (wait4) plus what such escaped members used, so the
//     average does not depend on sampling.
//   - copies its stdout into a buffer (the last [DefaultMaxOutput] bytes,
//     cut at a line start) and its stderr into a tail ([DefaultStderrTail]
//     bytes), passing both through to Command.Stdout and Command.Stderr as
//     they come, with known secrets replaced (see [Secrets]).
//
// A context that ends stops the command: SIGINT to its process group,
// then SIGKILL after [StopGrace]. When the command itself exits, whatever
// it left running in its group is killed: a tool run is over when its
// command is.
//
// The CPU figures are those KAFKA-19296 reports beside the consumer's
// metrics, in % of one core (200 is two cores busy): the average over the
// whole run (CPU time ÷ wall time), and the 99th percentile (nearest
// rank) and maximum of the 100 ms samples. /proc counts CPU time in clock
// ticks (10 ms), so one sample may be off by up to a tick per busy
// process: ±10 points per busy process at 100 ms; the average is exact.
//
// [ToResult] turns an [Execution] into a *rundoc.Result: the stdout is
// read by internal/kafkafmt.ParseOutput, which says whether it is
// kafka-producer-perf-test, kafka-consumer-perf-test or kafka-e2e-latency
// (EndToEndLatency) output and gives
// Kafka's figures under kbench's metric names; the tree's CPU is added as
// process-cpu-avg, process-cpu-p99, process-cpu-max (%, lower is better)
// and process-cpu-seconds (s), the names kbench's own runs use for the
// client process, so a comparison puts the Java tool's CPU beside
// kafka-go's. The document says it is imported tool output measured by
// kbench exec (Environment.Source and Measurement.Source "imported",
// Environment.Tool the tool's name), holds the command line with secrets
// replaced (Measurement.Command), the exit status (Measurement.ExitCode),
// and is complete only when the command exited 0 and its output parsed.
// A failed command's document has Error (how it ended, the stderr tail)
// and keeps whatever output it printed, parsed when it parses.
//
// Secrets: SASL passwords and other secret values may appear in the
// arguments (--producer-props sasl.jaas.config=…, -Dx.password=…) or the
// environment. [Secrets] collects them (values of keys, flags and
// environment variables whose names rundoc.SecretName calls secret, JAAS
// password options, URL passwords, the secrets of the properties files a
// Kafka tool is given) and every text this package returns or passes
// through has them, and any URL password, replaced with rundoc.Redacted.
package toolexec
