package kafkafmt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// impWithin reports whether got is want to the precision of a number printed
// with prec decimals (half a unit of the last digit, plus the rounding of
// the double itself).
func impWithin(got, want float64, prec int) bool {
	return math.Abs(got-want) <= 0.5*math.Pow(10, -float64(prec))+1e-12*math.Abs(want)
}

func impMetricMap(im *Imported) map[string]float64 {
	m := map[string]float64{}
	for _, x := range im.Metrics {
		m[x.Name] = x.Value
	}
	return m
}

// TestParseOutputRoundTripProducer renders random runs with the producer
// renderers and imports them back.
func TestParseOutputRoundTripProducer(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for iter := range 500 {
		var b strings.Builder
		steady := rng.IntN(3) == 0
		if steady {
			b.WriteString(ProducerWarmupNotice(1 + rng.Int64N(1e6)))
		}
		windows := make([]ProducerCounters, rng.IntN(8))
		for i := range windows {
			w := ProducerCounters{Records: 1 + rng.Int64N(3_000_000), ElapsedMs: 1000 + rng.Int64N(9000), MaxLatencyMs: rng.Int64N(100_000)}
			w.Bytes = w.Records * (1 + rng.Int64N(1<<20))
			w.TotalLatencyMs = w.Records * rng.Int64N(w.MaxLatencyMs+1)
			windows[i] = w
			b.WriteString(w.IntervalLine())
		}
		total := ProducerCounters{Records: rng.Int64N(1 << 40), ElapsedMs: 1 + rng.Int64N(1e8), MaxLatencyMs: rng.Int64N(1 << 31)}
		total.Bytes = total.Records * rng.Int64N(1<<16)
		total.TotalLatencyMs = total.Records * rng.Int64N(total.MaxLatencyMs+1)
		ps := []int64{rng.Int64N(1 << 31), rng.Int64N(1 << 31), rng.Int64N(1 << 31), rng.Int64N(1 << 31)}
		slices.Sort(ps)
		totals := total.Totals(ps[0], ps[1], ps[2], ps[3])
		totals.SteadyState = steady
		b.WriteString(ProducerSummary(totals))

		im, err := ParseOutput(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, b.String())
		}
		m := impMetricMap(im)
		ok := m["records-sent"] == float64(totals.Records) &&
			impWithin(m["record-send-rate"], totals.RecordsPerSec, 6) &&
			impWithin(m["mb-per-sec"], totals.MBPerSec, 2) &&
			m["record-latency-max"] == totals.MaxLatencyMs &&
			m["record-latency-p50"] == float64(ps[0]) && m["record-latency-p95"] == float64(ps[1]) &&
			m["record-latency-p99"] == float64(ps[2]) && m["record-latency-p999"] == float64(ps[3])
		if totals.Records > 0 {
			ok = ok && impWithin(m["record-latency-avg"], totals.AvgLatencyMs, 2)
		} else if _, has := m["record-latency-avg"]; has {
			ok = false // NaN for no records: left out
		}
		if !ok {
			t.Fatalf("iteration %d: metrics %v\nfrom %s", iter, m, b.String())
		}
		if len(im.Intervals) != len(windows) {
			t.Fatalf("iteration %d: %d intervals, want %d", iter, len(im.Intervals), len(windows))
		}
		var trueT, bound float64
		for i, w := range windows {
			iv := im.Intervals[i]
			// T is the window's end: it adds up records ÷ printed rate,
			// the first window's included; the rate's rounding (0.05 at
			// most) bounds the error.
			trueT += float64(w.ElapsedMs) / 1000
			if w.Records > 0 && iv.RecordsPerSec > 0 {
				bound += float64(w.Records) * 0.0500001 / (iv.RecordsPerSec * w.RecordsPerSec())
			} else {
				bound += 5 // no rate: Kafka's reporting interval stands in
			}
			if iv.Records != w.Records || !impWithin(iv.RecordsPerSec, w.RecordsPerSec(), 1) || !impWithin(iv.MBPerSec, w.MBPerSec(), 2) ||
				!impWithin(iv.LatencyAvgMs, w.AvgLatencyMs(), 1) || iv.LatencyMaxMs != float64(w.MaxLatencyMs) ||
				math.Abs(iv.T-trueT) > bound+1e-9 {
				t.Fatalf("iteration %d: interval %d = %+v, want %+v (T %v ± %v)", iter, i, iv, w, trueT, bound)
			}
		}
	}
}

// TestParseOutputRoundTripConsumer renders random summary rows and
// detailed rows with the consumer renderers and imports them back.
func TestParseOutputRoundTripConsumer(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 2))
	mbTolerance := 0.5e-4*bytesPerMB + 1 // data.consumed.in.MB has 4 decimals
	for iter := range 500 {
		loc := time.FixedZone("", (rng.IntN(27)-12)*3600)
		start := 1_000_000_000_000 + rng.Int64N(1e12)
		elapsed := 1 + rng.Int64N(1e7)
		c := ConsumerCounters{StartMs: start, EndMs: start + elapsed, Bytes: rng.Int64N(1 << 44), Messages: rng.Int64N(1 << 36),
			RebalanceMs: rng.Int64N(elapsed)}
		r := c.Row(loc)
		text := ConsumerSummaryRow(r)
		if rng.IntN(2) == 0 {
			text = ConsumerHeader(false) + text
		}
		im, err := ParseOutput(strings.NewReader(text))
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, text)
		}
		m := impMetricMap(im)
		if m["records-consumed-total"] != float64(c.Messages) || math.Abs(m["bytes-consumed-total"]-float64(c.Bytes)) > mbTolerance ||
			!impWithin(m["records-consumed-rate"], r.MessagesPerSec, 4) || !impWithin(m["mb-per-sec"], r.MBPerSec, 4) ||
			m["rebalance-time"] != float64(c.RebalanceMs) || m["fetch-time"] != float64(r.FetchMs) ||
			!impWithin(m["fetch-records-per-sec"], r.FetchMessagesPerSec, 4) || !impWithin(m["fetch-mb-per-sec"], r.FetchMBPerSec, 4) {
			t.Fatalf("iteration %d: metrics %v\nfrom %s", iter, m, text)
		}

		// Detailed rows.
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteString(ConsumerHeader(true))
		}
		n := 1 + rng.IntN(10)
		var want []ConsumerIntervalCounters
		var bytes, msgs, rebalance, fetch int64
		last := start
		for range n {
			end := last + 1 + rng.Int64N(20_000)
			ic := ConsumerIntervalCounters{StartMs: last, EndMs: end, LastBytes: bytes, LastMessages: msgs,
				Bytes: bytes + rng.Int64N(1<<32), Messages: msgs + rng.Int64N(1<<24), RebalanceMs: rng.Int64N(end - last + 1)}
			b.WriteString(ConsumerDetailedRow(ic.Row(loc)))
			want = append(want, ic)
			bytes, msgs, last = ic.Bytes, ic.Messages, end
			rebalance += ic.RebalanceMs
			fetch += end - ic.StartMs - ic.RebalanceMs
		}
		im, err = ParseOutput(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, b.String())
		}
		if len(im.Intervals) != n {
			t.Fatalf("iteration %d: %d intervals, want %d", iter, len(im.Intervals), n)
		}
		for i, ic := range want {
			row := ic.Row(loc)
			iv := im.Intervals[i]
			// The row's end, from the start of the first: rows last
			// rebalance.time.ms + fetch.time.ms exactly.
			wantT := float64(ic.EndMs-want[0].StartMs) / 1000
			if iv.Records != ic.Messages-ic.LastMessages || math.Abs(iv.T-wantT) > 1e-9 ||
				!impWithin(iv.RecordsPerSec, row.MessagesPerSec, 4) || !impWithin(iv.MBPerSec, row.MBPerSec, 4) {
				t.Fatalf("iteration %d: interval %d = %+v, want T %v and %+v", iter, i, iv, wantT, row)
			}
		}
		m = impMetricMap(im)
		if m["records-consumed-total"] != float64(msgs) || math.Abs(m["bytes-consumed-total"]-float64(bytes)) > mbTolerance ||
			m["rebalance-time"] != float64(rebalance) || m["fetch-time"] != float64(fetch) {
			t.Fatalf("iteration %d: metrics %v, want %d msgs, %d bytes, %d ms rebalance, %d ms fetch", iter, m, msgs, bytes, rebalance, fetch)
		}
		secs := float64(rebalance+fetch) / 1000
		if !impSameFloat(m["records-consumed-rate"], float64(msgs)/secs, 1e-12) {
			t.Fatalf("iteration %d: records-consumed-rate %v, want %v", iter, m["records-consumed-rate"], float64(msgs)/secs)
		}
	}
}

// TestParseOutputRoundTripMetrics renders random --print-metrics blocks
// and imports them back.
func TestParseOutputRoundTripMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 3))
	summary := ProducerSummary(impTotal.Totals(2, 6, 14, 561))
	groups := []string{"producer-metrics", "producer-node-metrics", "producer-topic-metrics", "app-info", "kafka-metrics-count"}
	for iter := range 300 {
		var ms []Metric
		want := map[string]float64{}
		for i := range rng.IntN(40) {
			g := groups[rng.IntN(len(groups))]
			name := fmt.Sprintf("metric-%d", i)
			tags := []Tag{{"client-id", "perf-producer-client"}}
			folded := g + ":" + name
			if rng.IntN(2) == 0 {
				tags = append(tags, Tag{"node-id", fmt.Sprintf("node-%d", rng.IntN(5))})
				folded += "{" + tags[1].Key + "=" + tags[1].Value + "}"
			}
			var v float64
			switch rng.IntN(8) {
			case 0:
				v = math.NaN()
			case 1:
				v = math.Inf(1 - 2*rng.IntN(2))
			case 2:
				v = float64(rng.Int64N(1 << 53))
			default:
				v = (rng.Float64() - 0.3) * math.Pow(10, float64(rng.IntN(30)-10))
			}
			ms = append(ms, Metric{Group: g, Name: name, Tags: tags, Value: v})
			want[folded] = v
		}
		text := summary + PrintMetrics(ms)
		im, err := ParseOutput(strings.NewReader(text))
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, text)
		}
		got := impMetricMap(im)
		if len(got) != 9+len(want) {
			t.Fatalf("iteration %d: %d metrics, want %d", iter, len(got), 9+len(want))
		}
		for name, v := range want {
			g, ok := got[name]
			if !ok || !(impSameFloat(g, v, 0) || impWithin(g, v, 3)) {
				t.Fatalf("iteration %d: %s = %v (present %v), want %v", iter, name, g, ok, v)
			}
		}
	}
}

// TestParseOutputRoundTripE2E renders random EndToEndLatency runs with
// E2EProgress and E2ESummary and imports them back: the figures are the
// round trips' own, computed here.
func TestParseOutputRoundTripE2E(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	for iter := range 300 {
		nanos := make([]int64, 1+rng.IntN(5000))
		scale := int64(1) << rng.IntN(36) // up to about 69 s
		for i := range nanos {
			nanos[i] = 1 + rng.Int64N(scale)
		}
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteString(E2ETopicCreation(fmt.Sprintf("t%d", iter), 1, 1))
		}
		for i, e := range nanos {
			if i%E2EProgressEvery == 0 {
				b.WriteString(E2EProgress(int64(i), e))
			}
		}
		b.WriteString(E2ESummary(nanos))
		im, err := ParseOutput(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, b.String())
		}
		sum := 0.0
		ms := make([]int64, len(nanos))
		for i, e := range nanos {
			sum += float64(e)
			ms[i] = e / 1e6
		}
		slices.Sort(ms)
		at := func(q float64) float64 { return float64(ms[int(float64(len(ms))*q)]) }
		m := impMetricMap(im)
		if im.Tool != ToolE2E || len(m) != 4 || !impWithin(m["e2e-latency-avg"], sum/float64(len(nanos))/1e6, 4) ||
			m["e2e-latency-p50"] != at(0.5) || m["e2e-latency-p99"] != at(0.99) || m["e2e-latency-p999"] != at(0.999) {
			t.Fatalf("iteration %d: %s %v\nfrom %s", iter, im.Tool, m, b.String())
		}
		want := fmt.Sprintf("%d progress lines", (len(nanos)+E2EProgressEvery-1)/E2EProgressEvery)
		if !slices.ContainsFunc(im.Notes, func(n string) bool { return strings.Contains(n, want) }) {
			t.Fatalf("iteration %d: no note %q in %q", iter, want, im.Notes)
		}
	}
}
