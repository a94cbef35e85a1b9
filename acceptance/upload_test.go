package acceptance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/testutil/gzbomb"
)

// e2eMemoryBound is how much memory above idle the server may take while
// refusing any decompression bomb that fits the 64 MiB upload limit.
const e2eMemoryBound = 150 << 20

// procStatus reads a field of /proc/PID/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", field, rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// resetPeak sets the process's peak resident set (VmHWM) back to its
// current one, so the next reading is the peak since now.
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak resident set: %v", err)
	}
}

// e2eUpload posts one file as "profile" to path, with the CSRF cookie and
// field when token is set (the forms), and returns the status and body.
func (s *e2eServer) e2eUpload(t *testing.T, path, token string, file []byte, fields map[string]string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if token != "" {
		mw.WriteField("_csrf", token)
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	w, _ := mw.CreateFormFile("profile", "upload.pb.gz")
	w.Write(file)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Cookie", "kbench_csrf="+token)
	}
	// Forms answer 303 on success: show it rather than follow it.
	client := &http.Client{Timeout: s.http.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestE2EUploadBombMemory sends decompression bombs through every upload
// path of the real server (the binary users run, built without the race
// detector) and checks each is refused, stores nothing, and that refusing
// them takes less than 150 MB of memory above idle: the peak resident set
// (VmHWM) against the resident set before. This is a bound on memory, not
// a timing. Before LoadUpload, the first bomb alone took the server to
// 3.4–5.6 GB.
func TestE2EUploadBombMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds kbench and sends it 300 MB of bombs")
	}
	t.Parallel() // waits on its processes most of the time: see test.sh
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's memory from /proc")
	}
	srv := startE2EServer(t)
	pid := srv.cmd.Process.Pid

	fn := &profile.Function{ID: 1, Name: "main.main"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	valid := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1, 10_000_000}}}}
	var raw, gz bytes.Buffer
	valid.WriteUncompressed(&raw)
	valid.Write(&gz)

	// A run to attach to, and a CSRF token for the forms.
	code, body := srv.e2eUpload(t, "/api/import", "", gz.Bytes(), map[string]string{"label": "target"})
	var run client.Run
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &run) != nil {
		t.Fatalf("import: %d %s", code, body)
	}
	resp, err := srv.http.Get(srv.URL + "/import")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var token string
	for _, c := range resp.Cookies() {
		if c.Name == "kbench_csrf" {
			token = c.Value
		}
	}
	paths := []struct{ name, path, token string }{
		{"API attach", fmt.Sprintf("/api/runs/%d/profiles", run.ID), ""},
		{"API import", "/api/import", ""},
		{"import form", "/import", token},
		{"attach form", fmt.Sprintf("/runs/%d/profiles", run.ID), token},
	}
	// Warm every path up with a valid upload: idle is the server having
	// served each once.
	for _, p := range paths {
		if code, body := srv.e2eUpload(t, p.path, p.token, gz.Bytes(), nil); code != http.StatusCreated && code != http.StatusSeeOther {
			t.Fatalf("%s, a valid profile: %d %.300s", p.name, code, body)
		}
	}
	var before client.RunList
	srv.api(t, http.MethodGet, "/api/runs?limit=1", nil, http.StatusOK, &before)
	var profilesBefore client.Profiles
	srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d/profiles", run.ID), nil, http.StatusOK, &profilesBefore)

	unknownField := append(append([]byte{}, raw.Bytes()...), 0xa2, 0x06) // field 100, length-delimited…
	unknownField = append(unknownField, 0x80, 0x80, 0x80, 0x80, 0x10)    // …of 4 GiB
	// As large a bomb as the 64 MiB upload limit lets through: folded
	// stacks that stay valid all the way, sized to 60 MiB of gzip.
	stack := []byte("main;net.(*conn).Write;syscall.Syscall 1\n")
	perGiB := int64(len(gzbomb.Repeat(nil, stack, 1<<30)))
	bigN := (60 << 20) * (1 << 30) / perGiB
	// The most a legacy text profile can make pprof build before it is
	// refused: as many distinct stacks as the legacy budget lets through,
	// then a line pprof rejects.
	var legacy bytes.Buffer
	legacy.WriteString("--- mutex:\ncycles/second=1000\nsampling period=1\n")
	for i := 0; i < 20_000; i++ {
		fmt.Fprintf(&legacy, "10 2 @ 0x%x 0x%x\n", 2*i+1, 2*i+2)
	}
	legacy.WriteString("not a sample\n")
	bombs := []struct {
		name string
		data []byte
		code int
		msg  string
	}{
		{"1 GiB of zeros", gzbomb.Zeros(nil, 1<<30), http.StatusBadRequest, "not a profile"},
		{fmt.Sprintf("%d GiB of folded stacks", bigN>>30), gzbomb.Repeat(nil, stack, bigN), http.StatusRequestEntityTooLarge, "512 MiB of memory"},
		{"200 MiB of zeros, under the cap", gzbomb.Zeros(nil, 200<<20), http.StatusBadRequest, "not a profile"},
		{"a valid profile, then 1 GiB of zeros", gzbomb.Zeros(raw.Bytes(), 1<<30), http.StatusBadRequest, "not a profile"},
		{"a valid profile, then a 4 GiB unknown field", gzbomb.Zeros(unknownField, 4<<30), http.StatusRequestEntityTooLarge, "more than 256 MiB"},
		{"ten million samples", gzbomb.Repeat(raw.Bytes(), []byte{0x12, 0x04, 0x10, 0x01, 0x10, 0x01}, 60_000_000), http.StatusRequestEntityTooLarge, "512 MiB of memory"},
		{"a legacy profile of 20,000 stacks, then a bad line", gzbomb.Repeat(legacy.Bytes()[:legacy.Len()-1], []byte("\n"), 1), http.StatusBadRequest, "not a profile"},
	}
	idle := procStatus(t, pid, "VmRSS")
	var worst int64
	for _, b := range bombs {
		var peak int64
		for _, p := range paths {
			resetPeak(t, pid)
			code, body := srv.e2eUpload(t, p.path, p.token, b.data, map[string]string{"label": "bomb"})
			if code != b.code || !strings.Contains(body, b.msg) {
				t.Errorf("%s, %s: %d %.300s, want %d mentioning %q", p.name, b.name, code, body, b.code, b.msg)
			}
			peak = max(peak, procStatus(t, pid, "VmHWM"))
		}
		t.Logf("%-44s %5.1f MB of gzip: peak %6.1f MB, %+6.1f MB over idle", b.name, float64(len(b.data))/1e6, float64(peak)/1e6, float64(peak-idle)/1e6)
		worst = max(worst, peak-idle)
	}
	t.Logf("idle %.1f MB; worst peak over idle %.1f MB (bound %d MB)", float64(idle)/1e6, float64(worst)/1e6, e2eMemoryBound>>20)
	if worst > e2eMemoryBound {
		t.Errorf("refusing the bombs took the server %.1f MB over idle, more than %d MB", float64(worst)/1e6, e2eMemoryBound>>20)
	}
	var after client.RunList
	srv.api(t, http.MethodGet, "/api/runs?limit=1", nil, http.StatusOK, &after)
	var profilesAfter client.Profiles
	srv.api(t, http.MethodGet, fmt.Sprintf("/api/runs/%d/profiles", run.ID), nil, http.StatusOK, &profilesAfter)
	if after.Total != before.Total || len(profilesAfter.Profiles) != len(profilesBefore.Profiles) {
		t.Errorf("the bombs stored something: %d → %d runs, %d → %d profiles", before.Total, after.Total, len(profilesBefore.Profiles), len(profilesAfter.Profiles))
	}
}
