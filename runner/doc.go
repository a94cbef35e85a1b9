// Package runner is kbench's engine: it runs one benchmark and writes its
// result. It is the child process side of every run: `kbench run
// WORKLOAD` (and `kbench run --spec spec.json`, which serve and the
// worker spawn for a queued run) calls Run, and `kbench broker` calls
// ServeBroker or ServeSink for the broker child a run starts.
//
// What it does:
//   - the workloads on kafka-go: the producer (producer.go: kafka-go's
//     Writer; produce_client.go: kbench's own accumulator and sender for
//     --mode client and raw), the consumer (consumer.go), end-to-end
//     latency (e2e.go, e2e_kafka.go, e2e_rate.go) and the write-path lab
//     (writepath.go, the workload around the sub-package writepath);
//   - the Kafka properties mapped onto the client (props.go, config.go),
//     checked by Validate and ValidateWithFiles, and the record shapes
//     (records.go);
//   - the metrics: latency histograms (latency.go), intervals and series
//     (series.go), the metric catalog (catalog.go, metrichelp.go), the
//     measured window with its process figures and its pprof captures of
//     kbench and of the broker child (window.go), the CPU profile in
//     windows of the series (cpuwindows.go), the pprof labels of its
//     goroutines (roles.go), the harness checks
//     (harness.go), the notes on Kafka's output (outputnotes.go) and the
//     environment and target of the result (result.go, apiguess.go);
//   - the reporter (progress.go), which writes Kafka's text or, for serve,
//     a stream of rundoc.Events; RunTool (toolrun.go) runs a Kafka tool
//     instead of kbench's client through the same reporter;
//   - the broker child (broker.go: the embedded broker of
//     internal/embeddedbroker in a process of its own; sink.go: the
//     write-path sink) with its control protocol for profiling the window.
//
// Sub-packages: wire (kbench's own Kafka request and record-batch
// encoders, used by the raw producer and the write-path lab), send (the
// Pacer and the Sender interface every producer shares) and writepath
// (the lab's strategies, its Java program and the sink's server).
//
// runner may import the run contract (internal/rundoc), the small
// libraries under internal/ (kafkasec, kafkafmt, sysstat, hdr, the tool
// catalog and tool execution for RunTool), profiles/jfr and the Kafka
// clients. It must not import net/http or any HTTP framework, a database
// driver or the layers above it (server, ui, the store, lifecycle,
// compare): it is the process that measures, and what it links is
// what it measures with.
package runner
