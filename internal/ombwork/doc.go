// Package ombwork reads an OpenMessaging Benchmark (OMB) Kafka workload
// file and driver file and translates them into the spec of a kbench e2e
// run in rate mode (`kbench run omb WORKLOAD.yaml DRIVER.yaml`, and the
// API's and form's omb-workload and omb-driver).
//
// The files are outside input: they are read strictly (an unknown field,
// a value of the wrong type, an anchor or an alias is an error naming the
// field) and within size caps. Whatever of a workload kbench cannot
// honour is an error naming the field (omb-workload.<field>); the
// driver's Java client properties that kbench's client does not apply
// are listed in the run's notes as not applied, never dropped silently.
//
// It knows OMB's formats from its sources (Workload.java,
// WorkloadGenerator.java and the Kafka driver's KafkaBenchmarkDriver.java):
// which fields there are, their defaults (warmupDurationMinutes 1,
// backlogDrainRatio 1, keyDistributor NO_KEY), and what they mean
// (producerRate is the total over every producer, the backlog is built
// after the warm-up and the test duration runs after its drain). Which
// Kafka properties kbench applies is the runner's knowledge, handed in
// (Options.Applies); the package imports only the standard library, the
// run contract (rundoc) and the YAML parser.
package ombwork
