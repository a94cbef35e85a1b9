package ombwork

import (
	"math"
)

// Key distributors of OMB's workloads (keyDistributor).
const (
	KeyNone       = "NO_KEY"
	KeyRoundRobin = "KEY_ROUND_ROBIN"
	KeyRandomNano = "RANDOM_NANO"
)

// OMB's keys: its distributors draw from 10,000 keys, each 7 random bytes
// in unpadded URL-safe base64, 10 characters.
const (
	ombKeyCount = 10000
	ombKeySize  = 10
)

// Workload is an OMB workload file (OMB's Workload.java), as read: each
// field holds the file's value or OMB's default.
type Workload struct {
	Name string

	Topics             int
	PartitionsPerTopic int
	KeyDistributor     string

	MessageSize               int
	UseRandomizedPayloads     bool
	RandomBytesRatio          float64
	RandomizedPayloadPoolSize int
	PayloadFile               string

	SubscriptionsPerTopic   int
	ProducersPerTopic       int
	ConsumerPerSubscription int
	// ProducerRate is messages/s over every producer; 0 asks OMB to
	// search for the highest sustainable rate.
	ProducerRate int

	ConsumerBacklogSizeGB int64
	BacklogDrainRatio     float64

	TestDurationMinutes   int
	WarmupDurationMinutes int

	// given holds the fields the file gave, for messages and notes.
	given map[string]bool
}

// Given reports whether the file gave field name (with a value).
func (w *Workload) Given(name string) bool { return w.given[name] }

// maxInt is Java's int: the workload's int fields take no more.
const maxInt = math.MaxInt32

// ParseWorkload reads an OMB workload file. Every field is checked for
// its type and range; fields OMB does not have are errors naming them
// (omb-workload.<field>). What kbench can run of it is Translate's to
// judge.
func ParseWorkload(data []byte) (*Workload, error) {
	fs, err := fields(FieldWorkload, data, MaxWorkloadBytes)
	if err != nil {
		return nil, err
	}
	r := newReader(FieldWorkload, fs)
	w := &Workload{given: map[string]bool{}}
	for name, v := range fs {
		if v.kind != kindNull {
			w.given[name] = true
		}
	}
	w.Name = r.name()
	w.Topics = int(r.integer("topics", 0, 0, maxInt))
	w.PartitionsPerTopic = int(r.integer("partitionsPerTopic", 0, 0, maxInt))
	w.KeyDistributor = KeyNone
	if v, ok := r.get("keyDistributor"); ok {
		switch {
		case v.kind != kindString:
			r.fail("keyDistributor", v, "must be %s, %s or %s, got %s", KeyNone, KeyRoundRobin, KeyRandomNano, kindName(v.kind))
		case v.str == KeyNone || v.str == KeyRoundRobin || v.str == KeyRandomNano:
			w.KeyDistributor = v.str
		default:
			r.fail("keyDistributor", v, "must be %s, %s or %s", KeyNone, KeyRoundRobin, KeyRandomNano)
		}
	}
	w.MessageSize = int(r.integer("messageSize", 0, 0, maxInt))
	w.UseRandomizedPayloads = r.boolean("useRandomizedPayloads")
	w.RandomBytesRatio = r.number("randomBytesRatio", 0, 0, 1)
	w.RandomizedPayloadPoolSize = int(r.integer("randomizedPayloadPoolSize", 0, 0, maxInt))
	w.PayloadFile, _ = r.text("payloadFile")
	w.SubscriptionsPerTopic = int(r.integer("subscriptionsPerTopic", 0, 0, maxInt))
	w.ProducersPerTopic = int(r.integer("producersPerTopic", 0, 0, maxInt))
	w.ConsumerPerSubscription = int(r.integer("consumerPerSubscription", 0, 0, maxInt))
	w.ProducerRate = int(r.integer("producerRate", 0, 0, maxInt))
	// Whole GiB, as OMB multiplies it by 1024³: at most what bytes in an
	// int64 hold.
	w.ConsumerBacklogSizeGB = r.integer("consumerBacklogSizeGB", 0, 0, math.MaxInt64>>30)
	w.BacklogDrainRatio = r.number("backlogDrainRatio", 1, 0, 1)
	w.TestDurationMinutes = int(r.integer("testDurationMinutes", 0, 0, maxInt))
	w.WarmupDurationMinutes = int(r.integer("warmupDurationMinutes", 1, 0, maxInt))
	r.unknown("OMB's workload (Workload.java)")
	r.errs.SortBy(workloadOrder)
	if err := r.errs.Err(); err != nil {
		return nil, err
	}
	return w, nil
}

// workloadOrder is the order errors are given in: the file's usual.
var workloadOrder = prefixed(FieldWorkload, "name", "topics", "partitionsPerTopic", "keyDistributor", "messageSize", "useRandomizedPayloads",
	"randomBytesRatio", "randomizedPayloadPoolSize", "payloadFile", "subscriptionsPerTopic", "producersPerTopic", "consumerPerSubscription",
	"producerRate", "consumerBacklogSizeGB", "backlogDrainRatio", "testDurationMinutes", "warmupDurationMinutes")

func prefixed(file string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = file + "." + n
	}
	return out
}
