package rundoc

// Config is the configuration a run applied, after defaults: what the
// client really did, which is not always what was asked (a property a
// mode ignores is recorded with the value in effect). It is result.json's
// environment.config:
//
//	{"mode": "raw", "settings": [{"name": "acks", "value": "all"}, …]}
//
// Settings named like Kafka client properties (acks, linger.ms, …) hold
// the value in Kafka's own notation (milliseconds, bytes); settings named
// like kbench flags (record-size, partitions, strategy, …) hold the flag's
// value as the spec's JSON writes it. Comparisons diff settings by name.
type Config struct {
	// Mode is how the workload drove kafka-go: the producer's raw, client
	// or writer, the consumer's group or assign, the write path's
	// strategy.
	Mode     string    `json:"mode"`
	Settings []Setting `json:"settings"`
}

// Setting is one resolved configuration value.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Set replaces the named setting's value, or appends it.
func (c *Config) Set(name, value string) {
	for i := range c.Settings {
		if c.Settings[i].Name == name {
			c.Settings[i].Value = value
			return
		}
	}
	c.Settings = append(c.Settings, Setting{Name: name, Value: value})
}

// Get returns the named setting's value.
func (c *Config) Get(name string) (string, bool) {
	for _, s := range c.Settings {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}

// Target kinds: what a run talked to.
const (
	TargetEmbedded = "embedded" // kbench's own kfake broker, a child process
	TargetSink     = "sink"     // the write-path sink, a child process
	TargetCluster  = "cluster"  // bootstrap servers the user gave
)

// Target is what a run talked to, as result.json's environment.target:
// its kind, and the ApiVersions ranges its first reachable bootstrap
// server answered during the preflight. For a cluster, ReleaseGuess reads
// a Kafka release off those ranges ([GuessRelease]); it is always
// labelled as a guess, since brokers of other makes answer ranges too.
type Target struct {
	Kind string `json:"kind"`
	// Cluster is the named cluster (serve's --cluster NAME=FILE) whose
	// properties the run used, "" for none: a run's history follows the
	// name, so the record says which machine's file it came from.
	Cluster string `json:"cluster,omitempty"`
	// APIVersionsFrom is the bootstrap server that answered: brokers of
	// one cluster may differ during a rolling upgrade.
	APIVersionsFrom string       `json:"api_versions_from,omitempty"`
	APIVersions     []APIVersion `json:"api_versions,omitempty"`
	ReleaseGuess    string       `json:"release_guess,omitempty"`
}

// APIVersion is the range of versions a broker takes for one API key.
type APIVersion struct {
	Key  int16  `json:"key"`
	Name string `json:"name"` // Kafka's name of the API ("Produce"), "" if unknown
	Min  int16  `json:"min"`
	Max  int16  `json:"max"`
}

// LoadAverage is the machine's load average when the run started
// (/proc/loadavg), result.json's environment.load_average.
type LoadAverage struct {
	Load1  float64 `json:"load1"`
	Load5  float64 `json:"load5"`
	Load15 float64 `json:"load15"`
}
