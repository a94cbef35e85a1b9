package compare

import (
	"fmt"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// t0 is the fixed creation time of fixture runs and reports.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// noise is a fixed, zero-centred pattern of relative run-to-run noise.
var noise = []float64{-0.02, 0.01, 0.03, -0.01, 0.0, 0.02, -0.03, 0.015, -0.005, 0.025}

func metric(name string, v float64, unit string, better rundoc.Better) rundoc.Metric {
	return rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better}
}

func run(id uint, label string, ms ...rundoc.Metric) rundoc.Run {
	return rundoc.Run{ID: id, Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, Source: rundoc.SourceLaunched,
		Complete: true, CreatedAt: t0.Add(time.Duration(id) * time.Minute), Metrics: ms}
}

// producerMetrics are the ~36 figures of a producer run, scaled: speed
// multiplies rates and divides latencies, j picks the noise.
func producerMetrics(speed float64, j int) []rundoc.Metric {
	n := 1 + noise[j%len(noise)]
	rate := 1_000_000 * speed * n
	lat := 4.12 / speed * (1 + noise[(j+3)%len(noise)])
	const recs = 5_000_000
	return []rundoc.Metric{
		metric("records-sent", recs, "records", ""),
		metric("record-send-rate", rate, "records/s", HigherIsBetter),
		metric("mb-per-sec", rate*256/(1<<20), "MB/s", HigherIsBetter),
		metric("record-latency-avg", lat, "ms", LowerIsBetter),
		metric("record-latency-p50", lat*0.8, "ms", LowerIsBetter),
		metric("record-latency-p95", lat*2.1, "ms", LowerIsBetter),
		metric("record-latency-p99", lat*3.3, "ms", LowerIsBetter),
		metric("record-latency-p999", lat*7.9, "ms", LowerIsBetter),
		metric("record-latency-max", lat*21, "ms", LowerIsBetter),
		metric("record-latency-intended-avg", lat*1.1, "ms", LowerIsBetter),
		metric("record-latency-intended-p50", lat*0.9, "ms", LowerIsBetter),
		metric("record-latency-intended-p95", lat*2.3, "ms", LowerIsBetter),
		metric("record-latency-intended-p99", lat*3.6, "ms", LowerIsBetter),
		metric("record-latency-intended-p999", lat*8.5, "ms", LowerIsBetter),
		metric("record-latency-intended-max", lat*23, "ms", LowerIsBetter),
		metric("record-error-total", 0, "records", LowerIsBetter),
		metric("request-rate", rate/1000, "requests/s", ""),
		metric("request-latency-avg", lat*0.7, "ms", LowerIsBetter),
		metric("request-latency-max", lat*9, "ms", LowerIsBetter),
		metric("records-per-request-avg", 1000, "records", ""),
		metric("batch-size-avg", 262144, "bytes", ""),
		metric("record-retry-total", 0, "retries", LowerIsBetter),
		metric("process-cpu-avg", 140*n, "%", LowerIsBetter),
		metric("process-cpu-p99", 190*n, "%", LowerIsBetter),
		metric("process-cpu-max", 200, "%", LowerIsBetter),
		metric("process-cpu-seconds", 7.1*n, "s", LowerIsBetter),
		metric("cpu-seconds-per-gib", 5.96*n, "s/GiB", LowerIsBetter),
		metric("gc-count", 120, "cycles", LowerIsBetter),
		metric("gc-pause-total", 3.4*n, "ms", LowerIsBetter),
		metric("heap-peak", 61.5*n, "MiB", LowerIsBetter),
		metric("syscw", 5000, "syscalls", LowerIsBetter),
		metric("syscr", 10250, "syscalls", LowerIsBetter),
		metric("wchar", 1_310_720_000, "bytes", ""),
		metric("rchar", 2_460_000, "bytes", ""),
		metric("bytes-per-write-syscall", 262144, "bytes", HigherIsBetter),
		metric("bytes-per-read-syscall", 240, "bytes", HigherIsBetter),
		metric("syscw-rate", 1000*speed*n, "syscalls/s", ""),
	}
}

// producerOutput is Kafka's producer summary and a --print-metrics block.
func producerOutput(ms []rundoc.Metric) string {
	get := func(name string) float64 {
		for _, m := range ms {
			if m.Name == name {
				return m.Value
			}
		}
		return 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.\n",
		int64(get("records-sent")), get("record-send-rate"), get("mb-per-sec"), get("record-latency-avg"), get("record-latency-max"),
		int64(get("record-latency-p50")), int64(get("record-latency-p95")), int64(get("record-latency-p99")), int64(get("record-latency-p999")))
	b.WriteString("\nMetric Name                                                              Value\n")
	fmt.Fprintf(&b, "producer-metrics:record-send-rate:{client-id=producer-1}              : %.3f\n", get("record-send-rate"))
	fmt.Fprintf(&b, "producer-metrics:request-latency-avg:{client-id=producer-1}           : %.3f\n", get("request-latency-avg"))
	return b.String()
}

// consumerMetrics are the figures of a consumer run.
func consumerMetrics(speed float64, j int) []rundoc.Metric {
	n := 1 + noise[j%len(noise)]
	rate := 1_500_000 * speed * n
	secs := 10 / speed / n
	fetchLat := 2.5 * (1 + noise[(j+5)%len(noise)]) // same for every speed
	return []rundoc.Metric{
		metric("records-consumed-total", 15_000_000, "records", ""),
		metric("records-consumed-rate", rate, "records/s", HigherIsBetter),
		metric("bytes-consumed-total", 3_840_000_000, "bytes", ""),
		metric("bytes-consumed-rate", rate*256, "bytes/s", HigherIsBetter),
		metric("mb-per-sec", rate*256/(1<<20), "MB/s", HigherIsBetter),
		metric("rebalance-time", 3012, "ms", LowerIsBetter),
		metric("fetch-time", secs*1000, "ms", ""),
		metric("fetch-records-per-sec", rate*1.02, "records/s", HigherIsBetter),
		metric("fetch-mb-per-sec", rate*1.02*256/(1<<20), "MB/s", HigherIsBetter),
		metric("fetch-total", 14_650, "fetches", ""),
		metric("fetch-rate", 1465*speed*n, "fetches/s", ""),
		metric("fetch-latency-avg", fetchLat, "ms", LowerIsBetter),
		metric("fetch-latency-max", fetchLat*12, "ms", LowerIsBetter),
		metric("fetch-size-avg", 262_000, "bytes", ""),
		metric("records-per-request-avg", 1024, "records", ""),
		metric("records-lag-max", 15000*(1+noise[(j+1)%len(noise)]), "records", LowerIsBetter),
		metric("process-cpu-avg", 95*(1+noise[(j+2)%len(noise)]), "%", LowerIsBetter),
		metric("gc-count", 40, "cycles", LowerIsBetter),
		metric("syscr", 40_000/speed, "syscalls", LowerIsBetter),
	}
}

func consumerOutput(ms []rundoc.Metric) string {
	get := func(name string) float64 {
		for _, m := range ms {
			if m.Name == name {
				return m.Value
			}
		}
		return 0
	}
	mb := get("bytes-consumed-total") / (1 << 20)
	secs := get("fetch-time")/1000 + 3.012
	return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n" +
		fmt.Sprintf("2026-03-01 12:00:00:000, 2026-03-01 12:00:%02d:%03d, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f\n",
			int(secs), int(secs*1000)%1000, mb, mb/secs, int64(get("records-consumed-total")), get("records-consumed-total")/secs,
			3012, int64(get("fetch-time")), get("fetch-mb-per-sec"), get("fetch-records-per-sec"))
}

// groupRuns are three labels of consumer runs: CLASSIC (6 runs and a
// warm-up), CONSUMER (trunk) (6 runs, 20% faster) and CONSUMER (branch)
// (3 runs, as fast as trunk).
func groupRuns() []rundoc.Run {
	var runs []rundoc.Run
	add := func(id uint, label, group string, index int, warmup bool, speed float64) {
		ms := consumerMetrics(speed, index)
		r := run(id, label, ms...)
		r.Workload = "consumer"
		r.GroupID, r.GroupIndex, r.Warmup = group, index, warmup
		if warmup {
			r.GroupIndex = 0
		}
		r.Output = consumerOutput(ms)
		runs = append(runs, r)
	}
	add(10, "CLASSIC", "g-classic", 0, true, 0.5) // a slow warm-up, excluded
	for i := 1; i <= 6; i++ {
		add(uint(10+i), "CLASSIC", "g-classic", i, false, 1)
	}
	for i := 1; i <= 6; i++ {
		add(uint(20+i), "CONSUMER (trunk)", "g-trunk", i, false, 1.2)
	}
	for i := 1; i <= 3; i++ {
		add(uint(30+i), "CONSUMER (branch)", "g-branch", i, false, 1.2)
	}
	return runs
}

// singleRuns are three producer runs, the last with a label that needs
// escaping and an output holding a fence.
func singleRuns() []rundoc.Run {
	labels := []string{"trunk", "branch", "branch `fix|2` <b>"}
	speeds := []float64{1, 1.1, 0.9}
	var runs []rundoc.Run
	for i, l := range labels {
		ms := producerMetrics(speeds[i], 0)
		r := run(uint(i+1), l, ms...)
		r.Output = producerOutput(ms)
		runs = append(runs, r)
	}
	runs[2].Output += "```\nnot the end of the block\n```\n"
	// A metric only the later runs have.
	runs[1].Metrics = append(runs[1].Metrics, metric("record-latency-p9999", 60.5, "ms", LowerIsBetter))
	return runs
}
