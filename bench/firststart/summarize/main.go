// Command summarize prints the tables of a bench/firststart run: for each
// revision measured, the medians of its phases (module download, compile,
// start to the first page), the module zips the build downloaded by size,
// and the compile time by module and by package, from the runs' files
// (phases.tsv, zips.txt, build-modules.txt, actiongraph.json).
//
//	go run ./bench/firststart/summarize bench/out/firststart-…
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	kmedian "github.com/kbench/kbench/internal/median"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summarize DIR")
		os.Exit(2)
	}
	runs, err := loadRuns(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(1)
	}
	if len(runs) == 0 {
		fmt.Fprintln(os.Stderr, "summarize: no runs in", os.Args[1])
		os.Exit(1)
	}
	// Revisions in the order run.sh was given them (the first is the base).
	if b, err := os.ReadFile(filepath.Join(os.Args[1], "revs.txt")); err == nil {
		order := strings.Fields(string(b))
		sort.SliceStable(runs, func(i, j int) bool { return slices.Index(order, runs[i].rev) < slices.Index(order, runs[j].rev) })
	}
	report(os.Stdout, runs)
}

// run is what one fresh run measured.
type run struct {
	rev, commit string
	load1       float64
	downloadS   float64
	compileS    float64
	healthzS    float64
	pageS       float64
	zips        map[string]int64 // module@version → zip bytes
	modFiles    int              // go.mod files downloaded
	modBytes    int64
	provides    map[string]bool    // modules that provide a package of the build
	pkgs        map[string]float64 // package → compile action wall seconds
	pkgCgo      map[string]bool    // packages whose action ran cgo
	pkgModule   map[string]string  // package → module path ("std" for the standard library)
	linkS       float64            // the link action's wall seconds
	linkCPU     float64
	pkgCPU      map[string]float64 // package → CPU seconds of its actions' commands
	modCompile  map[string]float64 // module → summed action wall seconds
	modCPU      map[string]float64 // module → summed action CPU seconds (user+sys, children included)
	downloadCPU float64            // CPU seconds of the download phase's process tree (NaN if not measured)
	compileCPU  float64
}

func (r run) zipBytes() int64 {
	var t int64
	for _, b := range r.zips {
		t += b
	}
	return t
}

func loadRuns(dir string) ([]run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var runs []run
	for _, e := range entries {
		d := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(d, "phases.tsv")); err != nil {
			continue
		}
		r, err := loadRun(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func loadRun(d string) (run, error) {
	var r run
	rows, err := readTSV(filepath.Join(d, "phases.tsv"))
	if err != nil {
		return r, err
	}
	if len(rows) != 2 {
		return r, fmt.Errorf("phases.tsv: want a header and one row, got %d rows", len(rows))
	}
	f := map[string]string{}
	for i, h := range rows[0] {
		if i < len(rows[1]) {
			f[h] = rows[1][i]
		}
	}
	r.rev, r.commit = f["rev"], f["commit"]
	for k, p := range map[string]*float64{"load1": &r.load1, "download_s": &r.downloadS, "compile_s": &r.compileS,
		"start_healthz_s": &r.healthzS, "start_page_s": &r.pageS} {
		if f[k] == "-" { // a phase the run skipped
			*p = math.NaN()
			continue
		}
		if *p, err = strconv.ParseFloat(f[k], 64); err != nil {
			return r, fmt.Errorf("phases.tsv: %s: %w", k, err)
		}
	}
	if r.zips, _, _, err = readSizes(filepath.Join(d, "zips.txt"), ".zip"); err != nil {
		return r, err
	}
	if _, r.modFiles, r.modBytes, err = readSizes(filepath.Join(d, "mods.txt"), ".mod"); err != nil {
		return r, err
	}
	r.provides = map[string]bool{}
	mods, err := readTSV(filepath.Join(d, "build-modules.txt"))
	if err != nil {
		return r, err
	}
	for _, m := range mods {
		if f := strings.Fields(strings.Join(m, " ")); len(f) == 2 {
			r.provides[f[0]+"@"+f[1]] = true
		}
	}
	r.downloadCPU, r.compileCPU = readCPU(filepath.Join(d, "download.cpu")), readCPU(filepath.Join(d, "compile.cpu"))
	ag := filepath.Join(d, "actiongraph.json")
	if _, err := os.Stat(ag); err != nil {
		return r, nil // compile skipped
	}
	return r, loadActions(ag, &r)
}

// readCPU reads the CPU seconds run.sh wrote; NaN when the file is missing.
func readCPU(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func readTSV(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "" {
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	return rows, nil
}

// readSizes reads "SIZE PATH" lines of files in a module download cache
// (escaped/module/path/@v/VERSION.ext) into module@version → size.
func readSizes(path, ext string) (map[string]int64, int, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer fh.Close()
	out := map[string]int64{}
	var n int
	var total int64
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		size, p, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		b, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		mod, ver, ok := strings.Cut(p, "/@v/")
		if !ok {
			continue // sumdb and other files
		}
		out[unescape(mod)+"@"+strings.TrimSuffix(ver, ext)] = b
		n++
		total += b
	}
	return out, n, total, sc.Err()
}

// unescape undoes the module cache's case encoding ("!x" for "X").
func unescape(p string) string {
	var b strings.Builder
	up := false
	for _, c := range p {
		switch {
		case c == '!':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(c)))
			up = false
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// action is the part of a -debug-actiongraph entry this reads.
type action struct {
	Mode      string
	Package   string
	Cmd       []string
	CmdUser   int64 // nanoseconds
	CmdSys    int64
	TimeStart time.Time
	TimeDone  time.Time
}

func loadActions(path string, r *run) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var acts []action
	if err := json.Unmarshal(b, &acts); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r.pkgs, r.pkgCPU, r.pkgCgo, r.pkgModule, r.modCompile, r.modCPU = map[string]float64{}, map[string]float64{}, map[string]bool{}, map[string]string{}, map[string]float64{}, map[string]float64{}
	mods := make([]string, 0, len(r.provides))
	for m := range r.provides {
		mods = append(mods, strings.SplitN(m, "@", 2)[0])
	}
	// Longest module path first, so a package goes to its own module.
	sort.Slice(mods, func(i, j int) bool { return len(mods[i]) > len(mods[j]) })
	for _, a := range acts {
		if a.TimeStart.IsZero() || a.TimeDone.IsZero() {
			continue
		}
		s := a.TimeDone.Sub(a.TimeStart).Seconds()
		cpu := float64(a.CmdUser+a.CmdSys) / 1e9
		switch {
		case a.Mode == "link":
			r.linkS += s
			r.linkCPU += cpu
		case a.Package != "" && (a.Mode == "build" || strings.HasPrefix(a.Mode, "cgo")):
			// A cgo package is several actions (cgo run, one C compile per
			// file, then the Go build): all count for it.
			r.pkgs[a.Package] += s
			r.pkgCPU[a.Package] += cpu
			if strings.HasPrefix(a.Mode, "cgo") {
				r.pkgCgo[a.Package] = true
			}
			m := moduleOf(a.Package, mods)
			r.pkgModule[a.Package] = m
			r.modCompile[m] += s
			r.modCPU[m] += cpu
		}
	}
	return nil
}

func moduleOf(pkg string, mods []string) string {
	for _, m := range mods {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	if first, _, _ := strings.Cut(pkg, "/"); !strings.Contains(first, ".") {
		return "std"
	}
	return "github.com/kbench/kbench" // the main module's own packages
}

// median of the values that are not NaN (skipped phases); NaN if none.
func median(xs []float64) float64 {
	var s []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	return kmedian.Of(s)
}

const mib = 1 << 20

func report(w io.Writer, runs []run) {
	var revs []string
	byRev := map[string][]run{}
	for _, r := range runs {
		if _, ok := byRev[r.rev]; !ok {
			revs = append(revs, r.rev)
		}
		byRev[r.rev] = append(byRev[r.rev], r)
	}
	col := func(rs []run, f func(run) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	total := func(r run) float64 { return r.downloadS + r.compileS + r.pageS }

	fmt.Fprintf(w, "First start, medians of each revision's runs (seconds; zips in MiB)\n\n")
	fmt.Fprintf(w, "| revision | runs | download s (CPU s) | zips MiB (count) | go.mod files | compile s (CPU s) | start → /healthz s | start → / s | total s | load1 at start |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, rev := range revs {
		rs := byRev[rev]
		fmt.Fprintf(w, "| %s (%.7s) | %d | %.1f (%.1f) | %.1f (%d) | %d | %.1f (%.1f) | %.1f | %.1f | %.1f | %.1f |\n", rev, rs[0].commit, len(rs),
			col(rs, func(r run) float64 { return r.downloadS }), col(rs, func(r run) float64 { return r.downloadCPU }),
			col(rs, func(r run) float64 { return float64(r.zipBytes()) / mib }), len(rs[0].zips),
			rs[0].modFiles, col(rs, func(r run) float64 { return r.compileS }), col(rs, func(r run) float64 { return r.compileCPU }),
			col(rs, func(r run) float64 { return r.healthzS }),
			col(rs, func(r run) float64 { return r.pageS }), col(rs, total), col(rs, func(r run) float64 { return r.load1 }))
	}
	if len(revs) > 1 {
		base := byRev[revs[0]]
		for _, rev := range revs[1:] {
			rs := byRev[rev]
			fmt.Fprintf(w, "\n%s against %s: total %.2f×, download %.2f×, zips %.2f×, compile %.2f×\n", rev, revs[0],
				col(rs, total)/col(base, total),
				col(rs, func(r run) float64 { return r.downloadS })/col(base, func(r run) float64 { return r.downloadS }),
				col(rs, func(r run) float64 { return float64(r.zipBytes()) })/col(base, func(r run) float64 { return float64(r.zipBytes()) }),
				col(rs, func(r run) float64 { return r.compileS })/col(base, func(r run) float64 { return r.compileS }))
		}
	}
	for _, rev := range revs {
		rs := byRev[rev]
		fmt.Fprintf(w, "\n## %s: module zips the build downloads (largest first)\n\n", rev)
		fmt.Fprintf(w, "| module | zip MiB | provides a package |\n| --- | --- | --- |\n")
		z := rs[0].zips
		keys := sortedKeys(z, func(a, b string) bool { return z[a] > z[b] })
		var rest int64
		for i, k := range keys {
			if i >= 15 {
				rest += z[k]
				continue
			}
			p := "yes"
			if !rs[0].provides[k] {
				p = "no (path-prefix check only)"
			}
			fmt.Fprintf(w, "| %s | %.2f | %s |\n", k, float64(z[k])/mib, p)
		}
		if rest > 0 {
			fmt.Fprintf(w, "| %d others | %.2f | |\n", len(keys)-15, float64(rest)/mib)
		}

		fmt.Fprintf(w, "\n## %s: compile time by module (medians of the summed actions: wall seconds, and CPU seconds of their commands; 2 actions run at once)\n\n", rev)
		mods, cpus := map[string][]float64{}, map[string][]float64{}
		for _, r := range rs {
			for m, s := range r.modCompile {
				mods[m] = append(mods[m], s)
				cpus[m] = append(cpus[m], r.modCPU[m])
			}
		}
		mm, mc := map[string]float64{}, map[string]float64{}
		for m, xs := range mods {
			mm[m], mc[m] = median(xs), median(cpus[m])
		}
		fmt.Fprintf(w, "| module | wall s | CPU s |\n| --- | --- | --- |\n")
		var restS, restC, allS, allC float64
		mkeys := sortedKeys(mc, func(a, b string) bool { return mc[a] > mc[b] })
		for i, m := range mkeys {
			allS, allC = allS+mm[m], allC+mc[m]
			if i >= 20 {
				restS, restC = restS+mm[m], restC+mc[m]
				continue
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f |\n", m, mm[m], mc[m])
		}
		if len(mkeys) > 20 {
			fmt.Fprintf(w, "| %d others | %.1f | %.1f |\n", len(mkeys)-20, restS, restC)
		}
		fmt.Fprintf(w, "| all packages | %.1f | %.1f |\n", allS, allC)
		fmt.Fprintf(w, "| (link) | %.1f | %.1f |\n", col(rs, func(r run) float64 { return r.linkS }), col(rs, func(r run) float64 { return r.linkCPU }))

		fmt.Fprintf(w, "\n## %s: costliest packages to compile (medians: CPU seconds of their commands, and wall seconds)\n\n", rev)
		pk, pc := map[string][]float64{}, map[string][]float64{}
		for _, r := range rs {
			for p, s := range r.pkgs {
				pk[p] = append(pk[p], s)
				pc[p] = append(pc[p], r.pkgCPU[p])
			}
		}
		pm, pcm := map[string]float64{}, map[string]float64{}
		for p, xs := range pk {
			pm[p], pcm[p] = median(xs), median(pc[p])
		}
		fmt.Fprintf(w, "| package | CPU s | wall s | cgo |\n| --- | --- | --- | --- |\n")
		for i, p := range sortedKeys(pcm, func(a, b string) bool { return pcm[a] > pcm[b] }) {
			if i >= 12 {
				break
			}
			cgo := ""
			if rs[0].pkgCgo[p] {
				cgo = "cgo"
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %s |\n", p, pcm[p], pm[p], cgo)
		}
	}
}

func sortedKeys[V any](m map[string]V, less func(a, b string) bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if less(keys[i], keys[j]) {
			return true
		}
		if less(keys[j], keys[i]) {
			return false
		}
		return keys[i] < keys[j]
	})
	return keys
}
