// Package hdr is a high-dynamic-range histogram of int64 values: counts in
// log-linear buckets, so a value is kept to a fixed number of significant
// decimal digits across the whole range with a fixed, small memory.
//
// It follows the bucketing and the answers of the HdrHistogram design
// (Gil Tene's; the hdrhistogram-go module kbench used before) for the parts
// kbench reads: quantiles are the highest value equivalent to the bucket
// holding the quantile's rank, the mean weights each bucket's median value,
// and the max is the highest value equivalent to the largest recorded one.
// kbench carries its own because the module's download (a 14 MiB zip) was
// the third-largest part of a fresh `go run . serve`, for some 200 lines
// (bench/README.md, "First start"). Not safe for concurrent use.
//
// Encode and Decode (encode.go) write and read HdrHistogram's compressed V2
// encoding, base64 with padding, which HdrHistogram's libraries and log
// tools share: kbench's encoding of every test case decodes in
// hdrhistogram-go to the counts recorded, and that module's encoding
// decodes here to the same counters (once inflated, the two are the same
// bytes; only the zlib streams differ).
//
// WriteLog and ReadLog (hlog.go) write and read HdrHistogram's log format
// (.hlog) of interval histograms: hdrhistogram-go's log reader reads
// WriteLog's log to the same times, counts and quantiles, and ReadLog
// reads that module's logs (relative and absolute starts) to the
// counters written.
package hdr

import (
	"fmt"
	"math"
	"math/bits"
)

// Histogram counts values between a lowest and a highest trackable value
// to a number of significant decimal digits.
type Histogram struct {
	lowest, highest int64
	digits          int

	unitMagnitude       uint  // log2 of the lowest value's power of two
	subHalfMagnitude    uint  // log2 of half the sub-buckets per bucket
	subCount            int64 // sub-buckets per bucket (a power of two)
	subHalfCount        int64
	subMask             int64 // values below it land in bucket 0
	leadingZerosBucket0 int   // 64 - bits of subMask's highest value

	counts []int64
	total  int64
	max    int64 // largest value recorded, 0 before any
}

// New returns a histogram of values from lowest (≥ 1) to highest
// (≥ 2×lowest), kept to digits significant decimal digits (1..5).
func New(lowest, highest int64, digits int) *Histogram {
	if lowest < 1 || highest < 2*lowest || digits < 1 || digits > 5 {
		panic(fmt.Sprintf("hdr: New(%d, %d, %d): want 1 ≤ lowest, 2×lowest ≤ highest, 1 ≤ digits ≤ 5", lowest, highest, digits))
	}
	// The smallest power of two of sub-buckets that tells apart every
	// integer up to 2×10^digits: at that many, one unit is the bucket's
	// resolution, and every later bucket doubles both range and unit.
	single := 2 * int64(math.Pow10(digits))
	subMagnitude := uint(bits.Len64(uint64(single - 1)))
	h := &Histogram{lowest: lowest, highest: highest, digits: digits}
	h.unitMagnitude = uint(bits.Len64(uint64(lowest)) - 1)
	h.subHalfMagnitude = subMagnitude - 1
	h.subCount = 1 << subMagnitude
	h.subHalfCount = h.subCount / 2
	h.subMask = (h.subCount - 1) << h.unitMagnitude
	h.leadingZerosBucket0 = 64 - int(h.unitMagnitude) - int(h.subHalfMagnitude) - 1

	h.counts = make([]int64, h.countersTo(highest))
	return h
}

// countersTo is how many counters a histogram of h's precision and
// lowest value needs to track values up to highest: buckets, each
// doubling the range, until highest is trackable; the first uses all its
// sub-buckets, every later one its upper half.
func (h *Histogram) countersTo(highest int64) int64 {
	buckets := int64(1)
	for limit := h.subCount << h.unitMagnitude; limit <= highest; buckets++ {
		if limit > math.MaxInt64/2 {
			buckets++
			break
		}
		limit <<= 1
	}
	return (buckets + 1) * h.subHalfCount
}

// bucketOf is the bucket of v: 0 for values below subMask, then one per
// doubling.
func (h *Histogram) bucketOf(v int64) int {
	return h.leadingZerosBucket0 - bits.LeadingZeros64(uint64(v|h.subMask))
}

func (h *Histogram) subOf(v int64, bucket int) int64 {
	return v >> (uint(bucket) + h.unitMagnitude)
}

// index is v's slot in counts: bucket 0 uses all its sub-buckets, each
// later bucket only its upper half (its lower half is the bucket before).
func (h *Histogram) index(v int64) int {
	b := h.bucketOf(v)
	sub := h.subOf(v, b)
	return int((int64(b)+1)<<h.subHalfMagnitude + sub - h.subHalfCount)
}

// valueAt is the lowest value counted in slot i.
func (h *Histogram) valueAt(i int) int64 {
	b := int64(i>>h.subHalfMagnitude) - 1
	sub := int64(i)&(h.subHalfCount-1) + h.subHalfCount
	if b < 0 {
		sub -= h.subHalfCount
		b = 0
	}
	return sub << (uint(b) + h.unitMagnitude)
}

// lowestEquivalent is the smallest value counted with v.
func (h *Histogram) lowestEquivalent(v int64) int64 {
	b := h.bucketOf(v)
	return h.subOf(v, b) << (uint(b) + h.unitMagnitude)
}

// rangeOf is how many values are counted with v.
func (h *Histogram) rangeOf(v int64) int64 {
	b := h.bucketOf(v)
	if h.subOf(v, b) >= h.subCount {
		b++
	}
	return 1 << (h.unitMagnitude + uint(b))
}

func (h *Histogram) highestEquivalent(v int64) int64 {
	return h.lowestEquivalent(v) + h.rangeOf(v) - 1
}

func (h *Histogram) medianEquivalent(v int64) int64 {
	return h.lowestEquivalent(v) + h.rangeOf(v)>>1
}

// RecordValue counts v once; a value outside [0, highest] is an error and
// is not counted.
func (h *Histogram) RecordValue(v int64) error {
	if v < 0 || v > h.highest {
		return fmt.Errorf("hdr: value %d outside 0..%d", v, h.highest)
	}
	i := h.index(v)
	if i < 0 || i >= len(h.counts) {
		return fmt.Errorf("hdr: value %d outside 0..%d", v, h.highest)
	}
	h.counts[i]++
	h.total++
	h.max = max(h.max, v)
	return nil
}

// Lowest, Highest and Digits are the layout New was given (or, for a
// decoded histogram, its encoding's header).
func (h *Histogram) Lowest() int64  { return h.lowest }
func (h *Histogram) Highest() int64 { return h.highest }
func (h *Histogram) Digits() int    { return h.digits }

// TotalCount is how many values were recorded.
func (h *Histogram) TotalCount() int64 { return h.total }

// Max is the highest value equivalent to the largest recorded; when empty,
// the highest equivalent to 0 (0 for a lowest value of 1, as
// hdrhistogram-go answers).
func (h *Histogram) Max() int64 { return h.highestEquivalent(h.max) }

// Mean is the mean of the recorded values, each taken at its bucket's
// median value; 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	// Each bucket's share is divided before it is added (not the sum at
	// the end): the same rounding as hdrhistogram-go, so means match it to
	// the last digit.
	n := float64(h.total)
	var mean float64
	for i, c := range h.counts {
		if c != 0 {
			mean += float64(c) * float64(h.medianEquivalent(h.valueAt(i))) / n
		}
	}
	return mean
}

// ValueAtQuantile is the value below or at which q percent (0..100) of the
// recorded values fall: the highest value equivalent to the bucket where
// the count reaches round(q% of the total), kept within 1..total; for q 0,
// the lowest value of that bucket. 0 when empty.
func (h *Histogram) ValueAtQuantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 100)
	want := h.rankOf(q)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= want {
			if q == 0 {
				return h.lowestEquivalent(h.valueAt(i))
			}
			return h.highestEquivalent(h.valueAt(i))
		}
	}
	return 0
}

// rankOf is the count at which quantile q (0..100) is reached:
// round(q% of the total), kept within 1..total.
func (h *Histogram) rankOf(q float64) int64 {
	switch rank := q/100*float64(h.total) + 0.5; {
	case !(rank >= 1): // also NaN
		return 1
	case rank >= float64(h.total):
		return h.total
	default:
		return int64(rank)
	}
}

// Merge adds o's counts to h's; both must have been made by New with the
// same arguments.
func (h *Histogram) Merge(o *Histogram) error {
	if h.lowest != o.lowest || h.highest != o.highest || h.digits != o.digits {
		return fmt.Errorf("hdr: merge of histograms with different ranges (%d..%d, %d digits and %d..%d, %d digits)",
			h.lowest, h.highest, h.digits, o.lowest, o.highest, o.digits)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
	return nil
}

// Reset empties h, keeping its layout and its memory.
func (h *Histogram) Reset() {
	clear(h.counts)
	h.total, h.max = 0, 0
}

// SpectrumPoint is one point of a percentile spectrum: the value at
// quantile Q (0..100).
type SpectrumPoint struct {
	Q     float64
	Value int64
}

// Spectrum is h's percentile spectrum as HdrHistogram's percentile
// distribution lists it: quantiles that halve the distance to 100% again
// and again (0, 50, 75, 87.5, …), ticksPerHalf of them in each halving,
// as far as the quantile 1 − 1/total, beyond which one value is left; the
// last point is the max at that quantile. Plotted against 1/(1−q) on a
// log axis every halving takes the same width, and the last point sits at
// the total count. Each value is ValueAtQuantile's, found in one walk of
// the counters. Empty for an empty histogram.
func (h *Histogram) Spectrum(ticksPerHalf int) []SpectrumPoint {
	if h.total == 0 {
		return nil
	}
	ticksPerHalf = max(ticksPerHalf, 1)
	last := 100 * (1 - 1/float64(h.total))
	var qs []float64
	for half := 0; half < 64; half++ {
		lo := 100 * (1 - math.Pow(0.5, float64(half)))
		hi := 100 * (1 - math.Pow(0.5, float64(half+1)))
		for t := range ticksPerHalf {
			q := lo + (hi-lo)*float64(t)/float64(ticksPerHalf)
			if q >= last {
				half = 64
				break
			}
			qs = append(qs, q)
		}
	}
	out := make([]SpectrumPoint, 0, len(qs)+1)
	var seen int64
	i := 0
	for _, q := range qs {
		want := h.rankOf(q)
		for ; i < len(h.counts); i++ {
			if seen+h.counts[i] >= want {
				break
			}
			seen += h.counts[i]
		}
		v := h.highestEquivalent(h.valueAt(min(i, len(h.counts)-1)))
		if q == 0 {
			v = h.lowestEquivalent(h.valueAt(min(i, len(h.counts)-1)))
		}
		out = append(out, SpectrumPoint{Q: q, Value: v})
	}
	return append(out, SpectrumPoint{Q: last, Value: h.Max()})
}
