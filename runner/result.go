package runner

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/kbench/kbench/internal/rundoc"
)

// CurrentEnvironment describes this process and machine.
func CurrentEnvironment() rundoc.Environment {
	env := rundoc.Environment{
		KbenchVersion: "devel",
		GoVersion:     runtime.Version(),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		Cores:         runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		CPUModel:      cpuModel(),
		KbenchBuild:   executableHash(),
		LoadAverage:   currentLoadAverage(),
	}
	env.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		env.Kernel = strings.TrimSpace(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		env.KbenchVersion, env.KafkaGoVersion = buildVersions(bi)
	}
	return env
}

// buildVersions reads kbench's and kafka-go's versions from build info.
// Test binaries and builds with -buildvcs=false (or from a git worktree,
// which the go command does not stamp) have no revision: kbench is then
// "devel", and KbenchBuild tells builds apart.
func buildVersions(bi *debug.BuildInfo) (kbench, kafkaGo string) {
	kbench = "devel"
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		kbench = v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			kbench += "+" + s.Value[:12]
		}
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.modified" && s.Value == "true" {
			kbench += "+dirty"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/segmentio/kafka-go" {
			kafkaGo = d.Version
			if d.Replace != nil {
				kafkaGo = d.Replace.Path + "@" + d.Replace.Version
			}
		}
	}
	return kbench, kafkaGo
}

// executableHash is the first 12 hex digits of the SHA-256 of this
// executable, "" when it cannot be read; computed once per process.
var executableHash = sync.OnceValue(hashExecutable)

func hashExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
