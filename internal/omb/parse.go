package omb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of what Parse reads. A real result is far below them: a day of
// 10 s windows is 8,640 values a list, and a quantile map of a billion
// values about 3,000 entries (100 per halving of the distance to 100%).
const (
	// MaxBytes bounds a result file.
	MaxBytes = 16 << 20
	// MaxWindows bounds a per-window list: 100 days of 10 s windows.
	MaxWindows = 864_000
	// MaxQuantiles bounds a quantile map's entries.
	MaxQuantiles = 100_000
	// MaxName bounds the workload's and the driver's names, in bytes (a
	// run's label: rundoc.MaxLabel).
	MaxName = 200
)

// ErrTooLarge is wrapped by Parse's error for a file over MaxBytes.
var ErrTooLarge = errors.New("omb: result too large")

// FieldError is a result refused for one of its fields: Field is its
// path in the document ("publishLatency99pct[3]",
// "aggregatedEndToEndLatencyQuantiles.99.0"), "" for the document as a
// whole.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Parsed is a result as Parse read it: the document, which of its
// fields it holds (a field left out, or null, is not measured: older
// OMB versions have no publish delay or error rate), and the fields
// kbench does not know (a fork's additions), which are ignored.
type Parsed struct {
	Result  Result
	Present map[string]bool
	Unknown []string
	// Windows is how many 10 s windows the result's lists hold.
	Windows int
}

// Has reports whether the result holds the field (present and not null).
func (p *Parsed) Has(field string) bool { return p.Present[field] }

// kinds of field, as Parse checks them.
type fieldKind int

const (
	kindName      fieldKind = iota // a string of at most MaxName bytes
	kindCount                      // a whole number ≥ 0
	kindFloats                     // a per-window list of numbers ≥ 0
	kindLongs                      // a per-window list of whole numbers ≥ 0
	kindFloat                      // a number ≥ 0
	kindLong                       // a whole number ≥ 0
	kindQuantiles                  // a quantile map
)

type field struct {
	name string
	kind fieldKind
	ptr  any
}

// fields lists r's fields as Parse reads them, in OMB's order.
func fieldsOf(r *Result) []field {
	return []field{
		{"workload", kindName, &r.Workload},
		{"driver", kindName, &r.Driver},
		{"messageSize", kindLong, &r.MessageSize},
		{"topics", kindCount, &r.Topics},
		{"partitions", kindCount, &r.Partitions},
		{"producersPerTopic", kindCount, &r.ProducersPerTopic},
		{"consumersPerTopic", kindCount, &r.ConsumersPerTopic},

		{"publishRate", kindFloats, &r.PublishRate},
		{"publishErrorRate", kindFloats, &r.PublishErrorRate},
		{"consumeRate", kindFloats, &r.ConsumeRate},
		{"backlog", kindLongs, &r.Backlog},

		{"publishLatencyAvg", kindFloats, &r.PublishLatencyAvg},
		{"publishLatency50pct", kindFloats, &r.PublishLatency50pct},
		{"publishLatency75pct", kindFloats, &r.PublishLatency75pct},
		{"publishLatency95pct", kindFloats, &r.PublishLatency95pct},
		{"publishLatency99pct", kindFloats, &r.PublishLatency99pct},
		{"publishLatency999pct", kindFloats, &r.PublishLatency999pct},
		{"publishLatency9999pct", kindFloats, &r.PublishLatency9999pct},
		{"publishLatencyMax", kindFloats, &r.PublishLatencyMax},

		{"publishDelayLatencyAvg", kindFloats, &r.PublishDelayLatencyAvg},
		{"publishDelayLatency50pct", kindLongs, &r.PublishDelayLatency50pct},
		{"publishDelayLatency75pct", kindLongs, &r.PublishDelayLatency75pct},
		{"publishDelayLatency95pct", kindLongs, &r.PublishDelayLatency95pct},
		{"publishDelayLatency99pct", kindLongs, &r.PublishDelayLatency99pct},
		{"publishDelayLatency999pct", kindLongs, &r.PublishDelayLatency999pct},
		{"publishDelayLatency9999pct", kindLongs, &r.PublishDelayLatency9999pct},
		{"publishDelayLatencyMax", kindLongs, &r.PublishDelayLatencyMax},

		{"aggregatedPublishLatencyAvg", kindFloat, &r.AggregatedPublishLatencyAvg},
		{"aggregatedPublishLatency50pct", kindFloat, &r.AggregatedPublishLatency50pct},
		{"aggregatedPublishLatency75pct", kindFloat, &r.AggregatedPublishLatency75pct},
		{"aggregatedPublishLatency95pct", kindFloat, &r.AggregatedPublishLatency95pct},
		{"aggregatedPublishLatency99pct", kindFloat, &r.AggregatedPublishLatency99pct},
		{"aggregatedPublishLatency999pct", kindFloat, &r.AggregatedPublishLatency999pct},
		{"aggregatedPublishLatency9999pct", kindFloat, &r.AggregatedPublishLatency9999pct},
		{"aggregatedPublishLatencyMax", kindFloat, &r.AggregatedPublishLatencyMax},

		{"aggregatedPublishDelayLatencyAvg", kindFloat, &r.AggregatedPublishDelayLatencyAvg},
		{"aggregatedPublishDelayLatency50pct", kindLong, &r.AggregatedPublishDelayLatency50pct},
		{"aggregatedPublishDelayLatency75pct", kindLong, &r.AggregatedPublishDelayLatency75pct},
		{"aggregatedPublishDelayLatency95pct", kindLong, &r.AggregatedPublishDelayLatency95pct},
		{"aggregatedPublishDelayLatency99pct", kindLong, &r.AggregatedPublishDelayLatency99pct},
		{"aggregatedPublishDelayLatency999pct", kindLong, &r.AggregatedPublishDelayLatency999pct},
		{"aggregatedPublishDelayLatency9999pct", kindLong, &r.AggregatedPublishDelayLatency9999pct},
		{"aggregatedPublishDelayLatencyMax", kindLong, &r.AggregatedPublishDelayLatencyMax},

		{"aggregatedPublishLatencyQuantiles", kindQuantiles, &r.AggregatedPublishLatencyQuantiles},
		{"aggregatedPublishDelayLatencyQuantiles", kindQuantiles, &r.AggregatedPublishDelayLatencyQuantiles},

		{"endToEndLatencyAvg", kindFloats, &r.EndToEndLatencyAvg},
		{"endToEndLatency50pct", kindFloats, &r.EndToEndLatency50pct},
		{"endToEndLatency75pct", kindFloats, &r.EndToEndLatency75pct},
		{"endToEndLatency95pct", kindFloats, &r.EndToEndLatency95pct},
		{"endToEndLatency99pct", kindFloats, &r.EndToEndLatency99pct},
		{"endToEndLatency999pct", kindFloats, &r.EndToEndLatency999pct},
		{"endToEndLatency9999pct", kindFloats, &r.EndToEndLatency9999pct},
		{"endToEndLatencyMax", kindFloats, &r.EndToEndLatencyMax},

		{"aggregatedEndToEndLatencyQuantiles", kindQuantiles, &r.AggregatedEndToEndLatencyQuantiles},

		{"aggregatedEndToEndLatencyAvg", kindFloat, &r.AggregatedEndToEndLatencyAvg},
		{"aggregatedEndToEndLatency50pct", kindFloat, &r.AggregatedEndToEndLatency50pct},
		{"aggregatedEndToEndLatency75pct", kindFloat, &r.AggregatedEndToEndLatency75pct},
		{"aggregatedEndToEndLatency95pct", kindFloat, &r.AggregatedEndToEndLatency95pct},
		{"aggregatedEndToEndLatency99pct", kindFloat, &r.AggregatedEndToEndLatency99pct},
		{"aggregatedEndToEndLatency999pct", kindFloat, &r.AggregatedEndToEndLatency999pct},
		{"aggregatedEndToEndLatency9999pct", kindFloat, &r.AggregatedEndToEndLatency9999pct},
		{"aggregatedEndToEndLatencyMax", kindFloat, &r.AggregatedEndToEndLatencyMax},
	}
}

// Fields lists the keys of OMB's result document, in its order.
func Fields() []string {
	var r Result
	fs := fieldsOf(&r)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// maxUnknown bounds the unknown fields Parse names (and their names'
// length): a note, not a copy of the file.
const (
	maxUnknown     = 20
	maxUnknownName = 64
)

// Parse reads an OMB result document strictly: one JSON object of valid
// UTF-8, no key twice, each known field of its type (numbers finite and
// ≥ 0, counts whole), workload and driver present, every per-window
// list of the same length (or empty) and at least one window. A field it
// refuses is a *FieldError naming it; a file over MaxBytes wraps
// ErrTooLarge. Fields it does not know are listed in Unknown, not
// refused: OMB's forks add their own.
func Parse(data []byte) (*Parsed, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(data), MaxBytes)
	}
	if !utf8.Valid(data) {
		return nil, fieldErr("", "is not UTF-8 text")
	}
	raw, err := objectFields(data, "")
	if err != nil {
		return nil, err
	}
	p := &Parsed{Present: map[string]bool{}}
	known := map[string]bool{}
	for _, f := range fieldsOf(&p.Result) {
		known[f.name] = true
		v, ok := raw.get(f.name)
		if !ok || isNull(v) {
			continue
		}
		if err := decodeField(f, v); err != nil {
			return nil, err
		}
		p.Present[f.name] = true
	}
	for _, kv := range raw {
		if !known[kv.key] && len(p.Unknown) < maxUnknown {
			name := kv.key
			if len(name) > maxUnknownName {
				name = strings.ToValidUTF8(name[:maxUnknownName], "") + "…"
			}
			p.Unknown = append(p.Unknown, name)
		}
	}
	slices.Sort(p.Unknown)
	for _, name := range []string{"workload", "driver"} {
		if !p.Present[name] {
			return nil, fieldErr(name, "missing: an OpenMessaging Benchmark result names its %s", name)
		}
	}
	if err := p.countWindows(); err != nil {
		return nil, err
	}
	return p, nil
}

// countWindows checks that every per-window list holds one value per
// window, or none (a figure OMB did not measure), and that there is at
// least one window.
func (p *Parsed) countWindows() error {
	longest, n := "", 0
	for _, f := range fieldsOf(&p.Result) {
		if l := windowLen(f); l > n {
			longest, n = f.name, l
		}
	}
	if n == 0 {
		return fieldErr("publishRate", "holds no 10 s window: every per-window list of the result is empty")
	}
	for _, f := range fieldsOf(&p.Result) {
		if l := windowLen(f); l != 0 && l != n {
			return fieldErr(f.name, "has %d values, but %s has %d: each per-window list holds one value per 10 s window", l, longest, n)
		}
	}
	p.Windows = n
	return nil
}

// windowLen is the length of a per-window list, 0 for another field.
func windowLen(f field) int {
	switch v := f.ptr.(type) {
	case *[]float64:
		return len(*v)
	case *[]int64:
		return len(*v)
	}
	return 0
}

// keyValue is one member of a JSON object, its value undecoded.
type keyValue struct {
	key   string
	value json.RawMessage
}

type members []keyValue

func (m members) get(key string) (json.RawMessage, bool) {
	for _, kv := range m {
		if kv.key == key {
			return kv.value, true
		}
	}
	return nil, false
}

// objectFields reads one JSON object (and nothing after it) into its
// members, refusing a key given twice (encoding/json would keep the last
// silently). path names the object in errors.
func objectFields(data []byte, path string) (members, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	what := path
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fieldErr(path, "invalid JSON at byte %d: %s", se.Offset, trimJSON(se.Error()))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fieldErr(path, "invalid JSON: ends before the object does")
		}
		return fieldErr(path, "invalid JSON: %s", trimJSON(err.Error()))
	}
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil, fieldErr(path, "is empty: want a JSON object")
	case err != nil:
		return nil, syntax(err)
	case tok != json.Delim('{'):
		if what == "" {
			return nil, fieldErr(path, "must be a JSON object (an OpenMessaging Benchmark result), not %s", jsonWhat(tok))
		}
		return nil, fieldErr(path, "must be an object, not %s", jsonWhat(tok))
	}
	var out members
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, syntax(fmt.Errorf("a key is not a string"))
		}
		if seen[key] {
			return nil, fieldErr(join(path, key), "appears twice")
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, syntax(err)
		}
		out = append(out, keyValue{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntax(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fieldErr(path, "invalid JSON: more after the object")
	}
	return out, nil
}

// join is the path of key in the object at path.
func join(path, key string) string {
	switch {
	case path == "":
		return key
	case key == "":
		return path
	}
	return path + "." + key
}

func trimJSON(s string) string {
	if len(s) > 5 && s[:5] == "json:" {
		return s[6:]
	}
	return s
}

// jsonWhat names a JSON token's kind for a message.
func jsonWhat(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "a list"
		}
		return "an object"
	case string:
		return "a string"
	case bool:
		return "true or false"
	case nil:
		return "null"
	}
	return "a number"
}

// rawWhat names a raw JSON value's kind for a message.
func rawWhat(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// decodeField decodes v into f, checking it as f's kind.
func decodeField(f field, v json.RawMessage) error {
	switch f.kind {
	case kindName:
		if rawWhat(v) != "a string" {
			return fieldErr(f.name, "is %s, want a string", rawWhat(v))
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fieldErr(f.name, "is not a JSON string: %s", trimJSON(err.Error()))
		}
		if len(s) > MaxName {
			return fieldErr(f.name, "is %d bytes, at most %d", len(s), MaxName)
		}
		*f.ptr.(*string) = s
	case kindCount:
		n, err := whole(f.name, v, math.MaxInt32)
		if err != nil {
			return err
		}
		*f.ptr.(*int) = int(n)
	case kindLong:
		n, err := whole(f.name, v, 1<<53)
		if err != nil {
			return err
		}
		*f.ptr.(*int64) = n
	case kindFloat:
		x, err := number(f.name, v)
		if err != nil {
			return err
		}
		*f.ptr.(*float64) = x
	case kindFloats, kindLongs:
		elems, err := list(f.name, v)
		if err != nil {
			return err
		}
		if f.kind == kindFloats {
			out := make([]float64, len(elems))
			for i, e := range elems {
				if out[i], err = number(index(f.name, i), e); err != nil {
					return err
				}
			}
			*f.ptr.(*[]float64) = out
			return nil
		}
		out := make([]int64, len(elems))
		for i, e := range elems {
			if out[i], err = whole(index(f.name, i), e, 1<<53); err != nil {
				return err
			}
		}
		*f.ptr.(*[]int64) = out
	case kindQuantiles:
		qs, err := parseQuantiles(v)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				return &FieldError{Field: join(f.name, fe.Field), Msg: fe.Msg}
			}
			return err
		}
		*f.ptr.(*Quantiles) = qs
	}
	return nil
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// list reads a JSON list of at most MaxWindows values.
func list(name string, v json.RawMessage) ([]json.RawMessage, error) {
	if rawWhat(v) != "a list" {
		return nil, fieldErr(name, "is %s, want a list of numbers, one per 10 s window", rawWhat(v))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil {
		return nil, fieldErr(name, "is not a JSON list: %s", trimJSON(err.Error()))
	}
	if len(elems) > MaxWindows {
		return nil, fieldErr(name, "has %d values, at most %d", len(elems), MaxWindows)
	}
	return elems, nil
}

// number reads a JSON number: finite and ≥ 0, as every figure of a
// result is (rates, latencies, counts).
func number(name string, v json.RawMessage) (float64, error) {
	if w := rawWhat(v); w != "a number" {
		return 0, fieldErr(name, "is %s, want a number", w)
	}
	text := string(bytes.TrimSpace(v))
	x, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil:
		return 0, fieldErr(name, "%s is not a number a double holds", text)
	case x < 0:
		return 0, fieldErr(name, "is %s, want a number ≥ 0", text)
	}
	return x, nil
}

// whole reads a whole number from 0 to most (written as an integer, or
// as a double of an integer value: "12.0").
func whole(name string, v json.RawMessage, most float64) (int64, error) {
	x, err := number(name, v)
	if err != nil {
		return 0, err
	}
	if x != math.Trunc(x) || x > most {
		return 0, fieldErr(name, "is %s, want a whole number from 0 to %.0f", bytes.TrimSpace(v), most)
	}
	return int64(x), nil
}

// parseQuantiles reads a quantile map: an object whose keys are
// percentiles (0..100, each once however written) and whose values are
// numbers ≥ 0; at most MaxQuantiles of them. Errors name the key.
func parseQuantiles(v json.RawMessage) (Quantiles, error) {
	if w := rawWhat(v); w != "an object" {
		return nil, fieldErr("", "is %s, want an object of percentile → value", w)
	}
	ms, err := objectFields(v, "")
	if err != nil {
		return nil, err
	}
	if len(ms) > MaxQuantiles {
		return nil, fieldErr("", "has %d entries, at most %d", len(ms), MaxQuantiles)
	}
	qs := make(Quantiles, 0, len(ms))
	seen := map[float64]string{}
	for _, kv := range ms {
		q, err := strconv.ParseFloat(kv.key, 64)
		if err != nil || !(q >= 0 && q <= 100) {
			return nil, fieldErr(kv.key, "the key is not a percentile from 0 to 100")
		}
		if prev, ok := seen[q]; ok {
			return nil, fieldErr(kv.key, "the percentile %s appears twice (also as %q)", javaDouble(q), prev)
		}
		seen[q] = kv.key
		x, err := number(kv.key, kv.value)
		if err != nil {
			return nil, err
		}
		qs = append(qs, Quantile{Percentile: q, Value: x})
	}
	sortQuantiles(qs)
	return qs, nil
}

// Detect reports whether data looks like an OMB result: a JSON object
// (of at most MaxBytes) naming its workload and driver and holding one of
// OMB's per-window lists. It does not check the rest (Parse does): it
// tells an OMB result from the other files an import takes, a Kafka
// tool's text output or a kbench result.json, which has no driver.
func Detect(data []byte) bool {
	if len(data) > MaxBytes {
		return false
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	ms, err := objectFields(trimmed, "")
	if err != nil {
		return false
	}
	_, workload := ms.get("workload")
	_, driver := ms.get("driver")
	if !workload || !driver {
		return false
	}
	for _, name := range []string{"publishRate", "consumeRate", "publishLatency99pct", "endToEndLatencyAvg"} {
		if _, ok := ms.get(name); ok {
			return true
		}
	}
	return false
}
