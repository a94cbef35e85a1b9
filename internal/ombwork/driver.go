package ombwork

import (
	"github.com/kbench/kbench/internal/rundoc"
)

// KafkaDriverClass is the driverClass of OMB's Kafka driver: the only
// driver whose files kbench reads.
const KafkaDriverClass = "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver"

// maxProps bounds the properties of one of the driver's sections.
const maxProps = 500

// Driver is an OMB Kafka driver file (the framework's
// DriverConfiguration and the Kafka driver's Config): its name, the
// topics' replication factor and configs, and the clients' Java
// properties, each section as Properties.load reads it.
type Driver struct {
	Name        string
	DriverClass string
	// ReplicationFactor is the topics' (a Java short); 0 when not given.
	ReplicationFactor int
	TopicConfig       map[string]string
	// CommonConfig is given to the producers, the consumers and the
	// admin client; ProducerConfig and ConsumerConfig are laid over it
	// for each kind of client.
	CommonConfig   map[string]string
	ProducerConfig map[string]string
	ConsumerConfig map[string]string
}

// ParseDriver reads an OMB Kafka driver file: its driverClass must be
// OMB's Kafka driver, its configs Java properties text, and fields it
// does not have are errors naming them (omb-driver.<field>).
func ParseDriver(data []byte) (*Driver, error) {
	fs, err := fields(FieldDriver, data, MaxDriverBytes)
	if err != nil {
		return nil, err
	}
	r := newReader(FieldDriver, fs)
	d := &Driver{}
	d.Name = r.name()
	d.DriverClass, _ = r.text("driverClass")
	if v, ok := r.fields["driverClass"]; !ok || v.kind == kindNull {
		r.errs.Add(FieldDriver+".driverClass", "must be given: OMB's Kafka driver, %s", KafkaDriverClass)
	} else if d.DriverClass != KafkaDriverClass {
		r.fail("driverClass", v, "must be OMB's Kafka driver, %s: kbench runs Kafka workloads", KafkaDriverClass)
	}
	d.ReplicationFactor = int(r.integer("replicationFactor", 0, 0, 32767))
	props := func(name string) map[string]string {
		v, ok := r.get(name)
		if !ok {
			return map[string]string{}
		}
		if v.kind != kindString {
			r.fail(name, v, "must be Java properties text (key=value lines, written after %s: |), got %s", name, kindName(v.kind))
			return map[string]string{}
		}
		m, err := rundoc.ParseProperties(v.str)
		if err != nil {
			r.fail(name, v, "not Java properties: %v", err)
			return map[string]string{}
		}
		if len(m) > maxProps {
			r.fail(name, v, "holds %d properties, more than %d", len(m), maxProps)
			return map[string]string{}
		}
		if err := rundoc.CheckProps(m); err != nil {
			r.fail(name, v, "%v", err)
			return map[string]string{}
		}
		return m
	}
	d.TopicConfig = props("topicConfig")
	d.CommonConfig = props("commonConfig")
	d.ProducerConfig = props("producerConfig")
	d.ConsumerConfig = props("consumerConfig")
	r.unknown("OMB's Kafka driver (DriverConfiguration and the Kafka driver's Config)")
	r.errs.SortBy(prefixed(FieldDriver, "name", "driverClass", "replicationFactor", "topicConfig", "commonConfig", "producerConfig", "consumerConfig"))
	if err := r.errs.Err(); err != nil {
		return nil, err
	}
	return d, nil
}
