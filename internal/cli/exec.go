package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/toolexec"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/profiles/jfr"
)

// Exec is `kbench exec`.
var Exec = &Command{
	Name:      "exec",
	UsageLine: "exec --label L -- CMD",
	Short:     "run Kafka's perf-test tool (or any command): CPU of its process tree, JFR, stored in a running kbench serve",
	Run:       cmdExec,
}

const execUsage = `usage: kbench exec --label L [--meta KEY=VALUE]... [--profile FILE] [--jfr[=false]] [--java-home DIR]
       [--server URL] [--token T] -- CMD ARGS...

Runs CMD (Kafka's kafka-producer-perf-test.sh, kafka-consumer-perf-test.sh
or kafka-e2e-latency.sh, java, anything), passing its output through as it
comes, samples the CPU of its whole process tree every 100 ms (average,
p99, max in % of one core, stored as process-cpu-avg, -p99, -max and
process-cpu-seconds), reads its output with kbench import's parser into a
producer, consumer or e2e run, and stores the run through a running
kbench server, as kbench import does. Prints the run's URL.

A JVM is recorded with Java Flight Recorder and the recording becomes the
run's profile of kind wall (thread samples by state: Java code running and
threads inside native methods, blocked ones included; not a CPU profile).
JFR is on when --jfr is given, or by default when CMD is java (a path
ending in /java) or a Kafka script (kafka-*.sh) and --profile is not
given; --jfr=false turns it off. It goes through JAVA_TOOL_OPTIONS
(-XX:StartFlightRecording appended to any value CMD's environment has),
so every JVM the command starts is recorded, with kbench's settings: the
execution samples (every 10 ms) and native method samples (every 20 ms)
alone; the JDK's jfr tool converts the recordings. Without a JDK, --jfr is refused and the automatic JFR is
left out with a warning saying what to install.

--profile FILE attaches a CPU profile the command writes, as
async-profiler's collapsed stacks (or pprof), read when CMD has ended:
  kbench exec --label trunk --profile cpu.collapsed -- env \
    KAFKA_OPTS=-agentpath:/opt/ap/lib/libasyncProfiler.so=start,event=cpu,file=cpu.collapsed,collapsed \
    kafka-producer-perf-test.sh --topic t --num-records 1000000 ...

A command that fails (non-zero exit status, a signal, not found) is stored
as a failed run with its exit status, the end of its stderr and what it
printed. Secrets of the command line and environment (SASL passwords in
--producer-props or sasl.jaas.config, secret values of the file of
--command-config, --producer.config or --consumer.config, given as
--flag FILE or --flag=FILE, values named like passwords, tokens, secrets,
credentials, API keys or basic.auth.user.info, such as *_PASSWD or
API_KEY, and the passwords of URLs, user:pass@host or ?password=, as in
DATABASE_URL) are replaced with [redacted] in what is passed through,
printed and stored. The command does not inherit kbench's own secrets
(KBENCH_TOKEN, KBENCH_DATABASE, KBENCH_NOTIFY_URL).

Interrupting kbench exec (SIGINT, SIGTERM) stops the command (SIGINT to
its process group, SIGKILL 10 s later) and stores nothing, as for kbench
run --server.

Exit codes: 0 the command succeeded and the run is stored, 1 the command
failed or the run could not be stored, 2 bad usage.

flags:
`

// jfrFlag is --jfr: unset (automatic), true or false.
type jfrFlag struct{ set, on bool }

func (f *jfrFlag) String() string {
	if !f.set {
		return "auto"
	}
	return strconv.FormatBool(f.on)
}

func (f *jfrFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("want true or false")
	}
	f.set, f.on = true, b
	return nil
}

func (f *jfrFlag) IsBoolFlag() bool { return true }

// jvmCommand reports whether argv starts a JVM kbench exec records
// automatically: java itself, or one of Kafka's scripts.
func jvmCommand(argv []string) bool {
	base := filepath.Base(argv[0])
	return base == "java" || (strings.HasPrefix(base, "kafka-") && strings.HasSuffix(base, ".sh"))
}

// cmdExec is `kbench exec`.
func cmdExec(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kbench exec", execUsage, stderr)
	fs.showUsage, fs.operands, fs.env = true, operandsAfterFlags, theseFlags("server", "token")
	label := fs.String("label", "", "label of the new run, e.g. java-trunk (required)")
	serverURL := fs.String("server", "http://127.0.0.1:8080", "the kbench server (also KBENCH_SERVER)")
	token := fs.String("token", "", "the server's token, sent as Authorization: Bearer (also KBENCH_TOKEN)")
	profileFile := fs.String("profile", "", "a CPU profile the command writes (async-profiler collapsed stacks, or pprof), attached as kind cpu")
	javaHome := fs.String("java-home", "", "the JDK whose jfr tool converts recordings (default: the one on PATH)")
	var metaFlag listFlag
	fs.Var(&metaFlag, "meta", "tag the run with KEY=VALUE: commit, branch, version or any key (repeatable)")
	var useJFR jfrFlag
	fs.Var(&useJFR, "jfr", "record JVMs with Java Flight Recorder (default: for java and kafka-*.sh commands without --profile)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	argv := fs.args
	switch {
	case len(argv) == 0:
		return fs.usageError("name the command to run after --")
	case strings.TrimSpace(*label) == "":
		return fs.usageError("--label: needed, it names the run in comparisons")
	}
	if _, err := rundoc.ParseMeta(metaFlag); err != nil {
		return fs.usageError("%v", err)
	}
	base := strings.TrimRight(*serverURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return fs.usageError("--server: must be an http:// or https:// URL, got %q", *serverURL)
	}
	if *profileFile != "" {
		abs, err := filepath.Abs(*profileFile)
		if err != nil {
			return fs.usageError("--profile: %v", err)
		}
		*profileFile = abs
	}

	env := os.Environ()
	secrets := toolexec.Secrets(argv, env)
	env = toolexec.ChildEnv(env)
	dir, err := os.MkdirTemp("", "kbench-exec-")
	if err != nil {
		fmt.Fprintf(stderr, "kbench exec: %v\n", err)
		return 1
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}()

	var notes []string
	var jfrTool, recDir string
	wantJFR := useJFR.on || (!useJFR.set && *profileFile == "" && jvmCommand(argv))
	if wantJFR {
		j, err := jdk.Find(*javaHome)
		switch {
		case err != nil && useJFR.set:
			return fs.argError(fmt.Errorf("--jfr: %w", err))
		case err != nil:
			fmt.Fprintf(stderr, "kbench exec: not recording with JFR: %v\n", err)
			notes = append(notes, "not recorded with JFR: "+err.Error())
		default:
			jfrTool, recDir = j.JFR, filepath.Join(dir, "jfr")
			if err := os.Mkdir(recDir, 0o700); err != nil {
				fmt.Fprintf(stderr, "kbench exec: %v\n", err)
				return 1
			}
			settings := filepath.Join(dir, "kbench.jfc")
			if err := os.WriteFile(settings, []byte(jfr.Settings()), 0o600); err != nil {
				fmt.Fprintf(stderr, "kbench exec: %v\n", err)
				return 1
			}
			env = withJFR(env, recDir, settings)
		}
	}

	e, err := toolexec.Run(ctx, toolexec.Command{Argv: argv, Env: env, Stdout: stdout, Stderr: stderr, Secrets: secrets})
	if err != nil {
		return fs.argError(err)
	}
	if e.StartErr != nil {
		fmt.Fprintf(stderr, "kbench exec: %v\n", e.StartErr)
	}
	if e.Stopped != nil {
		fmt.Fprintf(stderr, "kbench exec: stopped (%v): not stored in %s\n", e.Stopped, base)
		return 1
	}

	var pfs []rundoc.ProfileFile
	if recDir != "" {
		pf, note, err := jfrProfile(context.WithoutCancel(ctx), jfrTool, recDir, dir, e.CPU.Wall)
		if err != nil {
			fmt.Fprintf(stderr, "kbench exec: JFR: %v\n", err)
			notes = append(notes, "JFR: "+toolexec.RedactText(err.Error(), secrets))
		} else {
			pfs = append(pfs, pf)
			notes = append(notes, note)
		}
	}
	if *profileFile != "" {
		pf, err := collapsedProfile(*profileFile, dir)
		if err != nil {
			fmt.Fprintf(stderr, "kbench exec: --profile: %v\n", err)
			notes = append(notes, "--profile: "+toolexec.RedactText(err.Error(), secrets))
		} else {
			pfs = append(pfs, pf)
		}
	}
	res := toolexec.ToResult(e, toolexec.ResultOptions{Profiles: pfs, Notes: notes})
	if res.Workload == rundoc.E2E {
		// EndToEndLatency prints no count: its command line has it.
		if c, ok := toolexec.E2EArgs(argv); ok {
			c.Apply(res)
		} else {
			res.Measurement.Notes = append(res.Measurement.Notes, "the record count is not known: EndToEndLatency prints none, and its command line gives no positional num_messages")
		}
	}
	if err := rundoc.WriteResult(dir, res); err != nil {
		fmt.Fprintf(stderr, "kbench exec: %v\n", err)
		return 1
	}
	if !res.Complete {
		fmt.Fprintf(stderr, "kbench exec: %s\n", firstLine(res.Error))
	}

	fields := [][2]string{{"label", *label}}
	for _, m := range metaFlag {
		fields = append(fields, [2]string{"meta", m})
	}
	url, err := storeResult(ctx, newAPIClient(base, *token), dir, fields)
	if err == nil {
		fmt.Fprintln(stdout, url)
		if !res.Complete {
			return 1
		}
		return 0
	}
	keep = true
	fmt.Fprintf(stderr, "kbench exec: the run was not stored: %v\n", err)
	fmt.Fprintf(stderr, "kbench exec: its result stays in %s (send it later with: kbench import --server %s --label %s %s)\n", dir, base, *label, dir)
	return 1
}

// firstLine is s up to its first line end.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// withJFR returns env with JAVA_TOOL_OPTIONS asking every JVM to record
// into dir (one file per JVM; dumped when it exits) with the settings
// file at settings (jfr.Settings: thread samples alone), after the
// options already there, and JFR's start-up lines, which it prints on
// stdout, silenced so the tool's output parses.
func withJFR(env []string, dir, settings string) []string {
	const name = "JAVA_TOOL_OPTIONS"
	opts := "-XX:StartFlightRecording=filename=" + dir + string(filepath.Separator) + ",settings=" + settings + " -Xlog:jfr+startup=error"
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			if strings.TrimSpace(v) != "" {
				opts = v + " " + opts
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, name+"="+opts)
}

// jfrProfile converts the recordings in recDir (one per JVM the command
// started) into one pprof profile of kind wall, written to outDir as
// client-wall.pb.gz, and says what it holds and how many samples a
// thread could have given over wall, the command's run time.
func jfrProfile(ctx context.Context, jfrTool, recDir, outDir string, wall time.Duration) (rundoc.ProfileFile, string, error) {
	recs, err := filepath.Glob(filepath.Join(recDir, "*.jfr"))
	if err != nil {
		return rundoc.ProfileFile{}, "", err
	}
	if len(recs) == 0 {
		return rundoc.ProfileFile{}, "", errors.New("no JVM left a recording (did the command start one, and did it exit normally?)")
	}
	var ps []*profile.Profile
	var sum jfr.Summary
	for _, r := range recs {
		p, s, err := jfr.FromRecording(ctx, jfrTool, r)
		if err != nil {
			return rundoc.ProfileFile{}, "", err
		}
		ps = append(ps, p)
		sum.Execution += s.Execution
		sum.Native += s.Native
	}
	p := ps[0]
	if len(ps) > 1 {
		if p, err = profile.Merge(ps); err != nil {
			return rundoc.ProfileFile{}, "", fmt.Errorf("merging %d recordings: %w", len(ps), err)
		}
	}
	pf := rundoc.ProfileFile{Role: rundoc.RoleClient, Kind: rundoc.KindWall, File: "client-wall.pb.gz"}
	if err := writeProfile(p, filepath.Join(outDir, pf.File)); err != nil {
		return rundoc.ProfileFile{}, "", err
	}
	note := fmt.Sprintf("JFR: %d JVM recording(s), only the two events kbench converts: %s (profile of kind wall)", len(recs), sum.SamplesNote(wall))
	return pf, note, nil
}

// collapsedProfile reads the profile the command wrote at path (collapsed
// stacks or pprof, read as an upload is) and writes it to outDir as
// client-cpu.pb.gz.
func collapsedProfile(path, outDir string) (rundoc.ProfileFile, error) {
	p, err := profiles.LoadUpload(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		return rundoc.ProfileFile{}, fmt.Errorf("%s: %w", path, err)
	}
	pf := rundoc.ProfileFile{Role: rundoc.RoleClient, Kind: rundoc.KindCPU, File: "client-cpu.pb.gz"}
	return pf, writeProfile(p, filepath.Join(outDir, pf.File))
}

func writeProfile(p *profile.Profile, path string) error {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
