// Command summarize is the bookkeeping step of bench/compare.sh: it turns
// each run's output into one JSON line of a common shape, and prints the
// table of medians and ratios from those lines.
//
//	summarize line --round R --case C --side S --config TEXT --kbench-result DIR
//	summarize line --round R --case C --side S --config TEXT < kgopeer-output
//	summarize table RUNS.jsonl
//
// A line is {"round","case","side","client","workload","records","seconds",
// "records_per_sec","config"}. In the table, a case's ratio is the median of
// its numerator side over the median of its denominator side: kbench/kgo for
// the peer comparisons, cpu/none for the profiling overhead.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kbench/kbench/internal/numfmt"

	"github.com/kbench/kbench/internal/median"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: summarize line|table …")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "line":
		err = cmdLine(os.Args[2:], os.Stdin, os.Stdout)
	case "table":
		err = cmdTable(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q (want line or table)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "summarize %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// runLine is one measured run.
type runLine struct {
	Round         int     `json:"round"`
	Case          string  `json:"case"`
	Side          string  `json:"side"`
	Client        string  `json:"client"`
	Workload      string  `json:"workload"`
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	Config        string  `json:"config"`
}

// kbenchResult is the part of kbench's result.json this step reads.
type kbenchResult struct {
	Workload    string `json:"workload"`
	Complete    bool   `json:"complete"`
	Error       string `json:"error"`
	Measurement struct {
		MeasuredRecords int64   `json:"measured_records"`
		WindowSeconds   float64 `json:"window_seconds"`
	} `json:"measurement"`
	Metrics []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
	} `json:"metrics"`
}

// peerResult is kgopeer's output line.
type peerResult struct {
	Client        string  `json:"client"`
	Workload      string  `json:"workload"`
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
}

func cmdLine(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("summarize line", flag.ContinueOnError)
	var l runLine
	fs.IntVar(&l.Round, "round", 0, "round number")
	fs.StringVar(&l.Case, "case", "", "case name")
	fs.StringVar(&l.Side, "side", "", "side of the case (kbench, kgo, cpu, none)")
	fs.StringVar(&l.Config, "config", "", "configuration, as text")
	dir := fs.String("kbench-result", "", "kbench output directory (else a kgopeer line is read from stdin)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if l.Case == "" || l.Side == "" {
		return errors.New("--case and --side are required")
	}
	if *dir != "" {
		data, err := os.ReadFile(filepath.Join(*dir, "result.json"))
		if err != nil {
			return err
		}
		var r kbenchResult
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", *dir, err)
		}
		if !r.Complete {
			return fmt.Errorf("%s: run incomplete: %s", *dir, r.Error)
		}
		headline := map[string]string{"producer": "record-send-rate", "consumer": "records-consumed-rate"}[r.Workload]
		for _, m := range r.Metrics {
			if m.Name == headline {
				l.RecordsPerSec = m.Value
			}
		}
		if l.RecordsPerSec == 0 {
			return fmt.Errorf("%s: no %q metric", *dir, headline)
		}
		l.Client, l.Workload = "kbench", r.Workload
		l.Records = r.Measurement.MeasuredRecords
		l.Seconds = r.Measurement.WindowSeconds
	} else {
		var p peerResult
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &p); err == nil && p.Client != "" {
				found = true
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		if !found || p.RecordsPerSec <= 0 {
			return errors.New("no kgopeer result line on stdin")
		}
		l.Client, l.Workload, l.Records, l.Seconds, l.RecordsPerSec = p.Client, p.Workload, p.Records, p.Seconds, p.RecordsPerSec
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// pairs says which side is the numerator of a case's ratio.
var pairs = [][2]string{{"kbench", "kgo"}, {"cpu", "none"}}

func cmdTable(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("want one RUNS.jsonl file")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	var order []string
	rates := map[string]map[string][]float64{}
	byRound := map[string]map[int]map[string]float64{}
	configs := map[string]map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l runLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		if rates[l.Case] == nil {
			order = append(order, l.Case)
			rates[l.Case] = map[string][]float64{}
			byRound[l.Case] = map[int]map[string]float64{}
			configs[l.Case] = map[string]string{}
		}
		rates[l.Case][l.Side] = append(rates[l.Case][l.Side], l.RecordsPerSec)
		if byRound[l.Case][l.Round] == nil {
			byRound[l.Case][l.Round] = map[string]float64{}
		}
		byRound[l.Case][l.Round][l.Side] = l.RecordsPerSec
		configs[l.Case][l.Side] = l.Config
	}
	if err := sc.Err(); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tA\tmedian A rec/s\tB\tmedian B rec/s\tA/B\tmedian of round ratios\truns\ttarget\t")
	for _, c := range order {
		a, b := sidesOf(rates[c])
		ma, mb := med(rates[c][a]), med(rates[c][b])
		var perRound []float64
		for _, sides := range byRound[c] {
			if sides[a] > 0 && sides[b] > 0 {
				perRound = append(perRound, sides[a]/sides[b])
			}
		}
		target := targetOf(c, a)
		ratio, rr := "-", "-"
		if ma > 0 && mb > 0 {
			ratio = fmt.Sprintf("%.2f", ma/mb)
		}
		if len(perRound) > 0 {
			rr = fmt.Sprintf("%.2f", med(perRound))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t\n", c, a, fmtRate(ma), b, fmtRate(mb), ratio, rr,
			len(rates[c][a]), len(rates[c][b]), target)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nconfigurations:")
	for _, c := range order {
		sides := make([]string, 0, len(configs[c]))
		for s := range configs[c] {
			sides = append(sides, s)
		}
		sort.Strings(sides)
		for _, s := range sides {
			fmt.Fprintf(stdout, "  %s / %s: %s\n", c, s, configs[c][s])
		}
	}
	return nil
}

// targetOf is the goal for a case: kbench at least as fast as kgo
// where kbench drives kafka-go its fastest way, profiling costing at most
// 3%. The Writer and out-of-the-box cases are reported, with no target.
func targetOf(c, numerator string) string {
	switch {
	case numerator == "cpu":
		return "≥ 0.97"
	case strings.HasSuffix(c, "-writer"), strings.HasSuffix(c, "-defaults"):
		return "reported"
	}
	return "≥ 1.00"
}

// sidesOf returns a case's numerator and denominator sides.
func sidesOf(m map[string][]float64) (string, string) {
	for _, p := range pairs {
		if _, ok := m[p[0]]; ok {
			return p[0], p[1]
		}
		if _, ok := m[p[1]]; ok {
			return p[0], p[1]
		}
	}
	var names []string
	for s := range m {
		names = append(names, s)
	}
	sort.Strings(names)
	names = append(names, "", "")
	return names[0], names[1]
}

// med is the median of xs (internal/median), 0 for none.
func med(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median.Of(xs)
}

func fmtRate(x float64) string {
	if x == 0 {
		return "-"
	}
	// Thousands separators keep six- and seven-digit rates readable.
	return numfmt.Fixed(x, 0, numfmt.Hyphen)
}
