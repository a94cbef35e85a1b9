package runner

import "github.com/kbench/kbench/internal/rundoc"

// requestRateHelp says what the producer's request-rate counts in mode:
// the Writer and kbench's own sender keep different books.
func requestRateHelp(mode string) string {
	switch mode {
	case rundoc.ModeWriter:
		return "produce requests per second: kafka-go Writer's Writes statistic, one per request attempt for one partition's batch (retries included)"
	case rundoc.ModeClient:
		return "produce requests per second: batches kbench sent with kafka-go's Client.Produce, one request for one partition each (a retried batch counts once)"
	default:
		return "produce requests per second: batches kbench encoded and sent with kafka-go's Client.RawProduce, one request for one partition each (a retried batch counts once)"
	}
}
