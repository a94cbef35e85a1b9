package runner

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// shapeValues builds the record shape of a producer spec of args and
// draws n records from its first generator.
func shapeValues(t *testing.T, n int, args ...string) (values, keys [][]byte) {
	t.Helper()
	spec := mustParse(t, rundoc.Producer, args...)
	r := &run{spec: spec}
	st, err := clientSettings(&spec)
	if err != nil {
		t.Fatal(err)
	}
	r.st = st
	shape, err := r.recordShape(4)
	if err != nil {
		t.Fatal(err)
	}
	g := shape.generator(0, 1)
	for range n {
		v, k, _ := g.next()
		values, keys = append(values, v), append(keys, k)
	}
	return values, keys
}

// TestGivenAndRandomPayloads: --payload is every record's value and its
// length the record size; --payload-random-ratio makes a pool of
// --payload-pool payloads, each that share of random bytes and then
// zeros (OMB's randomized payloads), picked at random.
func TestGivenAndRandomPayloads(t *testing.T) {
	payload := bytes.Repeat([]byte("omb\x00\xff"), 20)
	values, _ := shapeValues(t, 50, "--payload", base64.StdEncoding.EncodeToString(payload))
	for i, v := range values {
		if !bytes.Equal(v, payload) {
			t.Fatalf("record %d is %q, want the payload given", i, v)
		}
	}
	values, _ = shapeValues(t, 500, "--record-size", "64", "--payload-random-ratio", "0.25", "--payload-pool", "3")
	distinct := map[string]bool{}
	for i, v := range values {
		if len(v) != 64 || bytes.Count(v[16:], []byte{0}) != 48 || bytes.Count(v[:16], []byte{0}) == 16 {
			t.Fatalf("record %d is %x: want 16 random bytes, then 48 zeros", i, v)
		}
		distinct[string(v)] = true
	}
	if len(distinct) != 3 {
		t.Errorf("%d distinct values, want the pool's 3", len(distinct))
	}
}

// TestKeyOrder: --key-count keys, taken in turn by each producer with
// --key-order round-robin (OMB's KEY_ROUND_ROBIN), at random otherwise.
func TestKeyOrder(t *testing.T) {
	_, keys := shapeValues(t, 20, "--key-size", "10", "--key-count", "5", "--key-order", "round-robin")
	for i, k := range keys {
		if len(k) != 10 || !bytes.Equal(k, keys[i%5]) {
			t.Fatalf("key %d is %q, want key %d of the cycle of 5, %q", i, k, i%5, keys[i%5])
		}
	}
	if bytes.Equal(keys[0], keys[1]) {
		t.Errorf("the cycle repeats its first key at once")
	}
	_, keys = shapeValues(t, 2000, "--key-size", "10", "--key-count", "5")
	distinct, inTurn := map[string]bool{}, 0
	for i, k := range keys {
		distinct[string(k)] = true
		if i >= 5 && bytes.Equal(k, keys[i-5]) {
			inTurn++
		}
	}
	if len(distinct) != 5 || inTurn == len(keys)-5 {
		t.Errorf("random order: %d distinct keys, %d of %d a cycle of 5 would give", len(distinct), inTurn, len(keys)-5)
	}
}
