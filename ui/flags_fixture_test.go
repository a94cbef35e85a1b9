package ui

import (
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// fixtureFlags is a fixed copy of rundoc.Flags, so golden files change
// only when the ui does, not when the runner rewords a help text.
func fixtureFlags() []rundoc.Flag {
	both := []rundoc.Workload{rundoc.Producer, rundoc.Consumer}
	prod := []rundoc.Workload{rundoc.Producer}
	cons := []rundoc.Workload{rundoc.Consumer}
	return []rundoc.Flag{
		{Name: "topic", Kind: "string", Workloads: both, Help: "topic to produce to / consume from", Default: "kbench-producer"},
		{Name: "bootstrap-server", Aliases: []string{"broker-list"}, Kind: "string", Workloads: both, Help: "host:port of a Kafka cluster"},
		{Name: "num-records", Aliases: []string{"messages"}, Kind: "int", Workloads: prod, Help: "records to send", Default: "500000"},
		{Name: "messages", Aliases: []string{"num-records"}, Kind: "int", Workloads: cons, Help: "records to consume", Default: "500000"},
		{Name: "record-size", Kind: "int", Workloads: both, Help: "bytes per record", Default: "512"},
		{Name: "payload-file", Kind: "string", Workloads: prod, Help: "file of payloads"},
		{Name: "throughput", Kind: "float", Workloads: prod, Help: "maximum records/s; -1 for no limit", Default: "-1"},
		{Name: "producer-props", Kind: "props", Workloads: prod, Help: "Kafka producer properties"},
		{Name: "consumer-props", Kind: "props", Workloads: cons, Help: "Kafka consumer properties"},
		{Name: "producer.config", Kind: "string", Workloads: prod, Help: "Kafka producer properties file"},
		{Name: "consumer.config", Kind: "string", Workloads: cons, Help: "Kafka consumer properties file"},
		{Name: "print-metrics", Kind: "bool", Workloads: both, Help: "print client metrics at the end"},
		{Name: "profile", Kind: "list", Workloads: both, Help: "profiles to capture", Default: "cpu,heap"},
		{Name: "from-latest", Kind: "bool", Workloads: cons, Help: "start at the end of the topic"},
		{Name: "show-detailed-stats", Kind: "bool", Workloads: cons, Help: "print a row per reporting interval"},
		{Name: "mode", Kind: "string", Workloads: both, Help: "how kafka-go sends or reads", Default: "raw",
			Defaults: map[rundoc.Workload]string{rundoc.Producer: "raw", rundoc.Consumer: "group"}, Choices: []rundoc.Choice{
				{Value: "raw", Workloads: prod, Help: "batches kbench encodes"}, {Value: "writer", Workloads: prod},
				{Value: "group", Workloads: cons, Help: "consumer-group Reader"}, {Value: "assign", Workloads: cons},
			}},
	}
}

// withFixtureFlags makes the form use fixtureFlags for the test's duration.
func withFixtureFlags(t *testing.T) {
	t.Helper()
	prev := runnerFlags
	runnerFlags = fixtureFlags
	t.Cleanup(func() { runnerFlags = prev })
}
