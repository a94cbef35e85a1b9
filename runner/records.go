package runner

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/runner/wire"
)

// The shape of keys and headers (--key-size, --headers).
const (
	// How many distinct keys a run with --key-size draws from, and the
	// bounds of keys and headers, are the spec's (rundoc.Spec.Keys,
	// rundoc.MaxKeySize, rundoc.MaxHeaders).
	// Headers have KIP-1096's shape: small string keys and values, the
	// same on every record. Keys are "header-000", "header-001", …
	headerKeyLen   = 10
	headerValueLen = 16
	// minEntropyPool is the smallest pool --payload-entropy values are cut
	// from; it is also at least two batches and two records long, so no
	// two records of a batch share bytes.
	minEntropyPool = 8 << 20
)

// recordShape is what every record of a producer run is made of. It is
// built once, before the window, and only read afterwards.
type recordShape struct {
	// payloads are the values without --payload-entropy: Kafka's tool's
	// single payload, or the payload file's.
	payloads [][]byte
	// pool holds the values with --payload-entropy: each record's value is
	// the next size bytes of it.
	pool    []byte
	size    int
	symbols int

	keys     [][]byte
	keyParts []int // the partition of each key
	keySize  int
	// roundRobin: each generator takes the keys in turn (--key-order
	// round-robin) rather than at random.
	roundRobin bool
	// randomBytes, with --payload-random-ratio, is how many bytes of each
	// payload are random, the rest zeros.
	randomBytes int

	headers  wire.Headers   // mode raw
	kheaders []kafka.Header // modes client and writer
	// headerBytes are the header keys' and values' bytes of one record.
	headerBytes int
}

// entropySymbols is the alphabet size that gives f × 8 bits of entropy a
// byte: 2^(8f) symbols drawn uniformly, rounded to a whole number of
// symbols.
func entropySymbols(f float64) int {
	return min(256, max(1, int(math.Round(math.Exp2(8*f)))))
}

// symbol k of an alphabet: 'A', 'B', … wrapping through every byte value,
// so 1 symbol is all 'A', 26 are the uppercase letters, 256 every byte.
func symbol(k int) byte { return byte(('A' + k) % 256) }

// recordShape builds the records' values, keys and headers for a run on a
// topic of partitions partitions.
func (r *run) recordShape(partitions int) (*recordShape, error) {
	sh := &recordShape{keySize: r.spec.KeySize}
	rng := rand.New(rand.NewPCG(3, 4))
	if e := r.spec.PayloadEntropy; e != nil {
		sh.size = r.spec.RecordSize
		sh.symbols = entropySymbols(*e)
		n := max(minEntropyPool, 2*r.st.batchBytes, 2*sh.size)
		sh.pool = make([]byte, n)
		for i := range sh.pool {
			sh.pool[i] = symbol(int(rng.Uint32N(uint32(sh.symbols))))
		}
	} else if ratio := r.spec.PayloadRandomRatio; ratio != nil {
		// OMB's randomized payloads: the first ratio × size bytes random
		// (every byte value), the rest zeros, as its generator cuts them.
		sh.randomBytes = int(float64(r.spec.RecordSize) * *ratio)
		for range r.spec.PayloadPoolSize() {
			p := make([]byte, r.spec.RecordSize)
			for i := range sh.randomBytes {
				p[i] = byte(rng.Uint32())
			}
			sh.payloads = append(sh.payloads, p)
		}
	} else {
		payloads, err := r.payloads()
		if err != nil {
			return nil, err
		}
		sh.payloads = payloads
	}
	if sh.keySize > 0 {
		parts := make([]int, partitions)
		for i := range parts {
			parts[i] = i
		}
		sh.roundRobin = r.spec.KeyOrder == rundoc.KeyOrderRoundRobin
		var murmur kafka.Murmur2Balancer
		for range r.spec.Keys() {
			k := make([]byte, sh.keySize)
			for i := range k {
				k[i] = byte('A' + rng.IntN(26))
			}
			sh.keys = append(sh.keys, k)
			sh.keyParts = append(sh.keyParts, murmur.Balance(kafka.Message{Key: k}, parts...))
		}
	}
	if r.spec.Headers > 0 {
		var hs []wire.Header
		for i := range r.spec.Headers {
			v := make([]byte, headerValueLen)
			for j := range v {
				v[j] = byte('A' + rng.IntN(26))
			}
			key := fmt.Sprintf("header-%03d", i)
			hs = append(hs, wire.Header{Key: key, Value: v})
			sh.kheaders = append(sh.kheaders, kafka.Header{Key: key, Value: v})
			sh.headerBytes += len(key) + len(v)
		}
		sh.headers = wire.EncodeHeaders(hs)
	}
	return sh, nil
}

// describe says what the records were made of, for the result's notes.
func (sh *recordShape) describe(spec rundoc.Spec) string {
	var s string
	switch {
	case sh.pool != nil:
		s = fmt.Sprintf("values (--payload-entropy %v): each record's %d bytes are the next ones of a %d-byte pool of bytes drawn uniformly from %d symbols, %.2f bits of entropy a byte, so records differ and no two records of a batch share bytes",
			*spec.PayloadEntropy, sh.size, len(sh.pool), sh.symbols, math.Log2(float64(sh.symbols)))
	case spec.PayloadFile != "":
		s = fmt.Sprintf("values: the %d payloads of %s, one picked at random per record", len(sh.payloads), spec.PayloadFile)
	case len(spec.Payload) > 0:
		s = fmt.Sprintf("values: the payload given (--payload, %d bytes), sent as every record's value", len(spec.Payload))
	case spec.PayloadRandomRatio != nil:
		s = fmt.Sprintf("values (--payload-random-ratio %v): one of %d payloads picked at random per record, each %d random bytes followed by %d zero bytes (OMB's randomized payloads)",
			*spec.PayloadRandomRatio, len(sh.payloads), sh.randomBytes, spec.RecordSize-sh.randomBytes)
	default:
		s = fmt.Sprintf("values: one payload of %d random uppercase letters sent as every record's value, as Kafka's tool does; compression then sees one value repeated (use --payload-entropy for realistic compression figures)", len(sh.payloads[0]))
	}
	if sh.keySize > 0 {
		pick := "one picked at random per record"
		if sh.roundRobin {
			pick = "each producer taking them in turn (--key-order round-robin)"
		}
		s += fmt.Sprintf("; keys (--key-size %d): %d distinct keys of uppercase letters, %s, on the partition murmur2 gives them as Kafka's default partitioner does", sh.keySize, len(sh.keys), pick)
	} else {
		s += "; null keys"
	}
	if n := sh.headers.Count(); n > 0 {
		s += fmt.Sprintf("; headers (--headers %d): the same on every record, keys header-000 … (%d bytes) with values of %d uppercase letters, %d bytes of keys and values a record",
			n, headerKeyLen, headerValueLen, sh.headerBytes)
	} else {
		s += "; no headers"
	}
	return s
}

// extraBytes are the key and header bytes of every record, besides its
// value.
func (sh *recordShape) extraBytes() int64 { return int64(sh.keySize + sh.headerBytes) }

// recordGen hands one producer thread its records.
type recordGen struct {
	sh     *recordShape
	rng    *rand.Rand
	cursor int
	key    int // the last key taken, with --key-order round-robin
	// keyParts is the partition of each key: the shape's, or of a
	// shard's own partitions (onto).
	keyParts []int
}

// generator is thread i of n's record source: its own random stream and,
// with --payload-entropy, its own place in the pool.
func (sh *recordShape) generator(i, n int) *recordGen {
	g := &recordGen{sh: sh, rng: rand.New(rand.NewPCG(uint64(i), 7)), keyParts: sh.keyParts}
	if sh.pool != nil {
		g.cursor = len(sh.pool) / n * i
	}
	return g
}

// next returns a record's value, its key (nil: a null key) and the key's
// partition (-1 without a key).
func (g *recordGen) next() (value, key []byte, part int) {
	sh := g.sh
	switch {
	case sh.pool != nil:
		if g.cursor+sh.size > len(sh.pool) {
			g.cursor = 0
		}
		value = sh.pool[g.cursor : g.cursor+sh.size : g.cursor+sh.size]
		g.cursor += sh.size
	case len(sh.payloads) == 1:
		value = sh.payloads[0]
	default:
		value = sh.payloads[g.rng.IntN(len(sh.payloads))]
	}
	if sh.keys == nil {
		return value, nil, -1
	}
	var k int
	if sh.roundRobin {
		g.key = (g.key + 1) % len(sh.keys)
		k = g.key
	} else {
		k = g.rng.IntN(len(sh.keys))
	}
	return value, sh.keys[k], g.keyParts[k]
}

// onto makes the generator's keys go to partitions of owned only (a
// shard's): murmur2 over them, as Kafka's partitioner over a topic of
// those partitions. parts caches the tables by owned set, since threads
// of one topic share theirs.
func (g *recordGen) onto(owned []int, parts map[string][]int) {
	if g.sh.keys == nil {
		return
	}
	id := fmt.Sprint(owned)
	kp, ok := parts[id]
	if !ok {
		var murmur kafka.Murmur2Balancer
		kp = make([]int, len(g.sh.keys))
		for i, k := range g.sh.keys {
			kp[i] = murmur.Balance(kafka.Message{Key: k}, owned...)
		}
		parts[id] = kp
	}
	g.keyParts = kp
}
