package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/rundoc"

	"github.com/gin-gonic/gin"
	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/runner/kafkafmt"
	"github.com/kbench/kbench/store"
	"github.com/kbench/kbench/ui"
)

// profileMeta is a profile as the API names it.
type profileMeta struct {
	ID    uint   `json:"id"`
	RunID uint   `json:"run_id"`
	Role  string `json:"role"`
	Kind  string `json:"kind"`
	Bytes int64  `json:"bytes"`
	// Samples counts the profile's pprof sample entries: its distinct
	// stacks (with their labels), not the samples taken; the pages call
	// it "Distinct stacks".
	Samples  int64 `json:"samples"`
	Uploaded bool  `json:"uploaded,omitempty"`
}

func metaOf(p *store.Profile) profileMeta {
	return profileMeta{ID: p.ID, RunID: p.RunID, Role: string(p.Role), Kind: string(p.Kind), Bytes: p.Bytes, Samples: p.Samples, Uploaded: p.Uploaded}
}

// loadedProfile is a stored profile, parsed. prof is shared by every
// request and must only be read: even profile.Copy writes to the profile
// it copies (it encodes it first), so whoever needs to change or hand one
// over takes fresh().
type loadedProfile struct {
	meta profileMeta
	data []byte
	prof *profile.Profile
}

// fresh parses the stored bytes again: a private profile to modify.
func (lp *loadedProfile) fresh() (*profile.Profile, error) { return profiles.Load(lp.data) }

// loadProfile parses a stored profile, through a small cache: stored
// profiles never change, and parsing a large one costs far more than
// building its flame graph. Concurrent first requests for one profile
// share one parse; it outlives a request that goes away meanwhile
// (context.WithoutCancel), so the others still get it.
func (s *Server) loadProfile(ctx context.Context, id uint) (*loadedProfile, error) {
	if lp, ok := s.parsed.Get(id); ok {
		return lp, nil
	}
	v, err, _ := s.parsing.Do(strconv.FormatUint(uint64(id), 10), func() (any, error) {
		// Parsed and cached between the miss above and this flight?
		if lp, ok := s.parsed.Get(id); ok {
			return lp, nil
		}
		sp, err := s.store.GetProfile(context.WithoutCancel(ctx), id)
		if err != nil {
			return nil, err
		}
		p, err := profiles.Load(sp.Data)
		if err != nil {
			return nil, fmt.Errorf("server: stored profile %d: %w", id, err)
		}
		lp := &loadedProfile{meta: metaOf(sp), data: sp.Data, prof: p}
		s.parsed.Add(id, lp)
		return lp, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*loadedProfile), nil
}

func queryID(c *gin.Context, name string) (uint, error) {
	v := c.Query(name)
	id, err := strconv.ParseUint(v, 10, 32)
	if err != nil || id == 0 {
		return 0, badInput(name, "must be a profile id, got %q", v)
	}
	return uint(id), nil
}

// profileSample loads the profile named by the :id parameter and picks the
// sample type named by ?sample= (the profile's default when absent).
func (s *Server) profileSample(c *gin.Context) (*loadedProfile, int, error) {
	id, err := parseID(c)
	if err != nil {
		return nil, 0, err
	}
	lp, err := s.loadProfile(c.Request.Context(), id)
	if err != nil {
		return nil, 0, err
	}
	idx, err := profiles.PickSample(lp.prof, c.Query("sample"))
	if err != nil {
		return nil, 0, badInput("sample", "%v", err)
	}
	return lp, idx, nil
}

// flameGraph answers GET /api/profiles/:id/flamegraph: the tree as JSON, or
// with format=compact the flat encoding the browser draws from.
func (s *Server) flameGraph(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	format := c.DefaultQuery("format", "tree")
	if format != "tree" && format != "compact" {
		s.fail(c, badInput("format", "must be tree or compact"))
		return
	}
	// Stored profiles never change, so neither does their flame graph:
	// building and encoding a large one costs ~150 ms, compressing it
	// ~0.1 s, serving it again nothing.
	key := fmt.Sprintf("%d/%d/%s", lp.meta.ID, idx, format)
	if body, ok := s.flames.Get(key); ok {
		s.serveEncoded(c, body)
		return
	}
	tree := profiles.BuildTree(lp.prof, idx)
	st := lp.prof.SampleType[idx]
	resp := gin.H{"profile": lp.meta, "sample_types": sampleTypes(lp.prof), "sample": st.Type, "unit": st.Unit, "total": tree.Value}
	if format == "compact" {
		resp["compact"] = tree.Compact()
	} else {
		resp["tree"] = tree
	}
	body, err := json.Marshal(resp)
	if err != nil {
		s.fail(c, fmt.Errorf("server: encode flame graph: %w", err))
		return
	}
	eb := newEncodedBody("application/json; charset=utf-8", body)
	s.flames.Add(key, eb)
	s.serveEncoded(c, eb)
}

type sampleType struct {
	Type string `json:"type"`
	Unit string `json:"unit"`
}

func sampleTypes(p *profile.Profile) []sampleType {
	out := make([]sampleType, 0, len(p.SampleType))
	for _, st := range p.SampleType {
		out = append(out, sampleType{st.Type, st.Unit})
	}
	return out
}

func (s *Server) writePaths(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, profiles.WritePaths(lp.prof, idx))
}

// comparison is everything the diff endpoint and the compare page share.
type comparison struct {
	base, target    *loadedProfile
	sb, st          int
	norm            profiles.Normalization
	workAvailable   bool
	workUnavailable string
}

// compare loads two profiles and works out the normalisation asked for.
// "work" divides by the records each run moved, so runs that did
// different amounts of work compare per record.
func (s *Server) compare(ctx context.Context, baseID, targetID uint, sample, normalize string) (*comparison, error) {
	base, err := s.loadProfile(ctx, baseID)
	if err != nil {
		return nil, err
	}
	target, err := s.loadProfile(ctx, targetID)
	if err != nil {
		return nil, err
	}
	cmp := &comparison{base: base, target: target}
	if cmp.sb, err = profiles.PickSample(base.prof, sample); err != nil {
		return nil, badInput("sample", "base: %v", err)
	}
	if cmp.st, err = profiles.PickSample(target.prof, sample); err != nil {
		return nil, badInput("sample", "target: %v", err)
	}
	bw, bErr := s.runWork(ctx, base.meta.RunID)
	tw, tErr := s.runWork(ctx, target.meta.RunID)
	cmp.workAvailable = bErr == nil && tErr == nil
	if !cmp.workAvailable {
		cmp.workUnavailable = ui.Sentences(s.workReasons(base.meta.RunID, target.meta.RunID, bErr, tErr))
	}
	switch normalize {
	case "", "total":
		cmp.norm = profiles.NormalizeTotal(base.prof, target.prof, cmp.sb, cmp.st)
	case "none":
		cmp.norm = profiles.NormalizeNone()
	case "work":
		if !cmp.workAvailable {
			return nil, badInput("normalize", "work is not available: %s", cmp.workUnavailable)
		}
		if cmp.norm, err = profiles.NormalizeWork(bw, tw, "records"); err != nil {
			return nil, badInput("normalize", "%v", err)
		}
	default:
		return nil, badInput("normalize", "must be total, work or none")
	}
	return cmp, nil
}

// compareQuery is compare for the ?base=&target=&sample= of a request.
func (s *Server) compareQuery(c *gin.Context, normalize string) (*comparison, error) {
	baseID, err := queryID(c, "base")
	if err != nil {
		return nil, err
	}
	targetID, err := queryID(c, "target")
	if err != nil {
		return nil, err
	}
	return s.compare(c.Request.Context(), baseID, targetID, c.Query("sample"), normalize)
}

// errNoRecordCount: a run that records no count of the records it moved
// (an imported profile without Kafka's output, say).
var errNoRecordCount = errors.New("no record count")

// runWork is how many records a run moved in its measured window: its
// record-count metric (records-sent of producers, records-consumed-total
// of consumers, records of older results) or else the measured_records of
// its measurement, which every kbench run writes (a write-path run's
// measured requests × records per request) and imports of Kafka's output
// fill in.
func (s *Server) runWork(ctx context.Context, runID uint) (float64, error) {
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return 0, err
	}
	for _, name := range []string{"records-sent", "records-consumed-total", "records"} {
		for _, m := range run.Metrics {
			if m.Name == name && m.Value > 0 {
				return m.Value, nil
			}
		}
	}
	if m := run.Measurement; m != nil && m.MeasuredRecords > 0 {
		return float64(m.MeasuredRecords), nil
	}
	return 0, fmt.Errorf("run %d: %w", runID, errNoRecordCount)
}

// workReasons says why per-record normalisation is not available, one
// reason per entry: the same reason for both runs is said once.
func (s *Server) workReasons(baseRun, targetRun uint, bErr, tErr error) []string {
	if errors.Is(bErr, errNoRecordCount) && errors.Is(tErr, errNoRecordCount) {
		if baseRun == targetRun {
			return []string{fmt.Sprintf("run %d has no record count", baseRun)}
		}
		return []string{fmt.Sprintf("neither run has a record count (runs %d and %d)", baseRun, targetRun)}
	}
	var out []string
	for _, side := range []struct {
		name string
		run  uint
		err  error
	}{{"base", baseRun, bErr}, {"target", targetRun, tErr}} {
		switch {
		case side.err == nil:
		case errors.Is(side.err, errNoRecordCount):
			out = append(out, fmt.Sprintf("the %s run (run %d) has no record count", side.name, side.run))
		default:
			s.log.Error("read a run's record count", "run", side.run, "err", side.err)
			out = append(out, fmt.Sprintf("the %s run (run %d) could not be read", side.name, side.run))
		}
	}
	return out
}

// diff answers GET /api/diff: the differential tree with base and target
// values, the functions that changed most and both write-path panels.
func (s *Server) diff(c *gin.Context) {
	cmp, err := s.compareQuery(c, c.Query("normalize"))
	if err != nil {
		s.fail(c, err)
		return
	}
	tree, err := profiles.Diff(cmp.base.prof, cmp.target.prof, cmp.sb, cmp.st, cmp.norm.Scale)
	if err != nil {
		s.fail(c, badInput("base", "%v", err))
		return
	}
	st := cmp.target.prof.SampleType[cmp.st]
	body := gin.H{
		"base": cmp.base.meta, "target": cmp.target.meta, "sample": st.Type, "unit": st.Unit,
		"normalization": cmp.norm,
		"changes":       profiles.TopChanges(cmp.base.prof, cmp.target.prof, cmp.sb, cmp.st, cmp.norm.Scale, 30),
		"write_paths": gin.H{
			"base":   profiles.WritePaths(cmp.base.prof, cmp.sb),
			"target": profiles.WritePaths(cmp.target.prof, cmp.st),
		},
	}
	switch c.DefaultQuery("format", "tree") {
	case "tree":
		body["tree"] = tree
	case "compact":
		body["compact"] = tree.Compact()
	default:
		s.fail(c, badInput("format", "must be tree or compact"))
		return
	}
	c.JSON(http.StatusOK, body)
}

// pprofUI serves the full pprof web UI of one stored profile under
// /profiles/:id/pprof/.
func (s *Server) pprofUI(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	prefix := fmt.Sprintf("/profiles/%d/pprof", id)
	lp, err := s.loadProfile(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if lp.meta.Uploaded && readsServerFiles(c.Request.URL.Path) {
		s.fail(c, badInput("path", "the source and disassembly views are off for uploaded profiles: they would read files the profile names from this server's disk"))
		return
	}
	s.servePprof(c, prefix, "profile/"+strconv.Itoa(int(id)), func() (*profile.Profile, error) {
		return lp.fresh() // the driver keeps and changes what it is given
	})
}

// pprofDiffUI serves pprof's UI for base − target built like
// `go tool pprof -diff_base`, under /diff/:base/:target/pprof/.
func (s *Server) pprofDiffUI(c *gin.Context) {
	var ids [2]uint
	for i, name := range []string{"base", "target"} {
		id, err := strconv.ParseUint(c.Param(name), 10, 32)
		if err != nil || id == 0 {
			s.fail(c, errNotFound)
			return
		}
		ids[i] = uint(id)
	}
	prefix := fmt.Sprintf("/diff/%d/%d/pprof", ids[0], ids[1])
	if readsServerFiles(c.Request.URL.Path) {
		s.fail(c, badInput("path", "the source and disassembly views are not offered for diffs"))
		return
	}
	s.servePprof(c, prefix, fmt.Sprintf("diff/%d/%d", ids[0], ids[1]), func() (*profile.Profile, error) {
		base, err := s.loadProfile(c.Request.Context(), ids[0])
		if err != nil {
			return nil, err
		}
		target, err := s.loadProfile(c.Request.Context(), ids[1])
		if err != nil {
			return nil, err
		}
		bp, err := base.fresh()
		if err != nil {
			return nil, err
		}
		tp, err := target.fresh()
		if err != nil {
			return nil, err
		}
		return profiles.DiffProfile(bp, tp, 1)
	})
}

// readsServerFiles: pprof's source and disassembly views open the files
// and binaries a profile names.
func readsServerFiles(path string) bool {
	return strings.HasSuffix(path, "/source") || strings.HasSuffix(path, "/disasm")
}

func (s *Server) servePprof(c *gin.Context, prefix, key string, load func() (*profile.Profile, error)) {
	if c.Request.URL.Path == prefix {
		// pprof's links are relative: they need the trailing slash.
		c.Redirect(http.StatusMovedPermanently, prefix+"/")
		return
	}
	h, err := s.pprof.Handler(key, load)
	if err != nil {
		s.fail(c, err)
		return
	}
	http.StripPrefix(prefix, h).ServeHTTP(c.Writer, c.Request)
}

// --- Uploads ---

// uploaded is one profile file from a multipart request, checked and
// re-encoded. The parsed profile is not kept: a large upload's parsed form
// takes many times its encoding, and a request may hold several.
type uploaded struct {
	name    string
	data    []byte
	kind    string // profiles.Kind of the upload
	samples int64
}

// limitError is a request over one of the server's limits: 413, with the
// limit in the message users see.
type limitError struct {
	field, msg string
}

func (e *limitError) Error() string { return e.field + ": " + e.msg }

// readUploads reads every file of a multipart field and checks it is a
// profile. Each file is read by profiles.LoadUpload, from the multipart
// form's copy (memory or a temporary file), which checks a compressed
// upload as a stream before anything is decompressed into memory: a
// decompression bomb is refused having cost next to nothing (400 when its
// content shows it is no profile, 413 past profiles.MaxDecompressedBytes
// or the memory loading it would take).
func readUploads(files []*multipart.FileHeader) ([]uploaded, error) {
	if len(files) == 0 {
		return nil, badInput("profile", "no file given: attach a pprof profile or folded stacks")
	}
	var out []uploaded
	for _, fh := range files {
		p, err := profiles.LoadUpload(func() (io.ReadCloser, error) { return fh.Open() })
		switch {
		case errors.Is(err, profiles.ErrTooLarge):
			return nil, &limitError{field: "profile", msg: fh.Filename + ": " + err.Error()}
		case errors.Is(err, profiles.ErrNotProfile), errors.Is(err, profiles.ErrUnusable):
			return nil, badInput("profile", "%s: %v", fh.Filename, err)
		case err != nil:
			return nil, fmt.Errorf("server: read upload %s: %w", fh.Filename, err)
		}
		// Store the canonical form (gzipped pprof protobuf): folded stacks
		// and legacy formats become profiles every view and `go tool pprof`
		// read alike.
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			return nil, fmt.Errorf("server: encode %s: %w", fh.Filename, err)
		}
		out = append(out, uploaded{name: fh.Filename, data: buf.Bytes(), kind: profiles.Kind(p), samples: int64(len(p.Sample))})
	}
	return out, nil
}

// uploadRoles are the sides of the wire a profile may be taken on.
var uploadRoles = []string{"client", "broker"}

// uploadKinds are the kinds an uploaded profile may be given: those
// profiles.Kind tells apart and "other". Kinds and roles end up in file
// names and on pages, so nothing else is accepted.
var uploadKinds = slices.Concat(profiles.Kinds, []string{profiles.KindOther})

func uploadRole(c *gin.Context) (string, error) {
	role := c.DefaultPostForm("role", "client")
	if !slices.Contains(uploadRoles, role) {
		return "", badInput("role", "must be client or broker")
	}
	return role, nil
}

// uploadKind is the "kind" form field: empty (kbench tells the kind from
// the profile) or one of uploadKinds.
func uploadKind(c *gin.Context) (string, error) {
	kind := c.PostForm("kind")
	if kind != "" && !slices.Contains(uploadKinds, kind) {
		return "", badInput("kind", "must be one of %s, or empty to tell it from the profile", strings.Join(uploadKinds, ", "))
	}
	return kind, nil
}

// profileFileName is the name a profile downloads as, built from known
// values only: a role or kind outside the lists (a row stored before they
// were checked) is named "profile" or "other".
func profileFileName(p *store.Profile) string {
	role, kind := string(p.Role), string(p.Kind)
	if !slices.Contains(uploadRoles, role) {
		role = "profile"
	}
	if !slices.Contains(uploadKinds, kind) {
		kind = profiles.KindOther
	}
	return ui.ProfileFileName(p.RunID, role, kind)
}

func storedProfiles(ups []uploaded, role, kind string) []store.Profile {
	var out []store.Profile
	for _, u := range ups {
		k := kind
		if k == "" {
			k = u.kind
		}
		if k == "" {
			k = profiles.KindOther
		}
		out = append(out, store.Profile{Role: rundoc.ProfileRole(role), Kind: rundoc.ProfileKind(k), Data: u.data, Samples: u.samples, Uploaded: true})
	}
	return out
}

// attach stores the uploaded profiles of a multipart request on run id,
// all or none. Shared by the API and the run page's form.
func (s *Server) attach(c *gin.Context, id uint) ([]rundoc.Profile, error) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		return nil, uploadErr(err)
	}
	role, err := uploadRole(c)
	if err != nil {
		return nil, err
	}
	kind, err := uploadKind(c)
	if err != nil {
		return nil, err
	}
	ups, err := readUploads(c.Request.MultipartForm.File["profile"])
	if err != nil {
		return nil, err
	}
	return s.store.AddProfiles(c.Request.Context(), id, storedProfiles(ups, role, kind))
}

// attachProfiles handles POST /api/runs/:id/profiles (multipart field
// "profile", optional "role" and "kind").
func (s *Server) attachProfiles(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	added, err := s.attach(c, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"profiles": toAPIProfiles(added)})
}

// attachProfilesForm is the run page's upload form.
func (s *Server) attachProfilesForm(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		s.fail(c, uploadErr(err))
		return
	}
	if !s.checkCSRF(c) {
		return
	}
	if _, err := s.attach(c, id); err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
}

// importRun creates an imported run from a multipart request: the text
// output of kafka-producer-perf-test or kafka-consumer-perf-test (field
// "output", a file or pasted text) and/or uploaded profiles (field
// "profile"). Everything is checked before anything is stored, and the run
// with its metrics, series and profiles is stored in one CreateRuns call:
// nothing is ever half imported. Shared by the API and the import page.
func (s *Server) importRun(c *gin.Context) (*rundoc.Run, error) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		return nil, uploadErr(err)
	}
	label := strings.TrimSpace(c.PostForm("label"))
	if len(label) > maxLabel {
		return nil, badInput("label", "must be at most %d characters", maxLabel)
	}
	role, err := uploadRole(c)
	if err != nil {
		return nil, err
	}
	kind, err := uploadKind(c)
	if err != nil {
		return nil, err
	}
	out, err := readOutput(c.Request.MultipartForm)
	if err != nil {
		return nil, err
	}
	files := c.Request.MultipartForm.File["profile"]
	if out == nil && len(files) == 0 {
		return nil, badInput("profile", "no file given: attach the output of kafka-producer-perf-test or kafka-consumer-perf-test (\"output\"), a pprof profile or folded stacks (\"profile\")")
	}
	var ups []uploaded
	if len(files) > 0 {
		if ups, err = readUploads(files); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(ups)+1)
	if out != nil {
		names = append(names, out.name)
	}
	for _, u := range ups {
		names = append(names, u.name)
	}
	spec := rundoc.ImportSpec{Workload: rundoc.Imported, Files: names}
	outcome := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Profiles: storedProfiles(ups, role, kind)}
	workload := rundoc.Imported
	if out != nil {
		spec.Tool = out.imp.Tool
		workload = importedOutcome(&outcome, out)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("server: encode import spec: %w", err)
	}
	run := &store.Run{Label: label, Workload: workload, Source: rundoc.SourceImported, Spec: string(specJSON)}
	if err := run.Record(outcome); err != nil {
		return nil, err
	}
	if err := s.store.CreateRuns(c.Request.Context(), []*store.Run{run}); err != nil {
		return nil, err
	}
	return s.store.GetRun(c.Request.Context(), run.ID)
}

// importedOutput is the parsed "output" field of an import.
type importedOutput struct {
	name string // the file's name, or "pasted output"
	text string
	imp  *kafkafmt.Imported
}

// outputParseError is a line of an uploaded output the parser refused: a
// 400 on the "output" field (through its inputError) that also carries the
// *kafkafmt.ParseError, so the API can name the line.
type outputParseError struct {
	input error
	parse *kafkafmt.ParseError
}

func (e *outputParseError) Error() string   { return e.input.Error() }
func (e *outputParseError) Unwrap() []error { return []error{e.input, e.parse} }

// readOutput reads and parses the "output" field: an uploaded file or
// pasted text, not both. It returns nil when the request has neither.
func readOutput(form *multipart.Form) (*importedOutput, error) {
	fhs := form.File["output"]
	var pasted string
	for _, v := range form.Value["output"] {
		if strings.TrimSpace(v) != "" {
			pasted = v
		}
	}
	var out importedOutput
	switch {
	case len(fhs) > 1:
		return nil, badInput("output", "give one output file, not %d", len(fhs))
	case len(fhs) == 1 && pasted != "":
		return nil, badInput("output", "give the output as a file or pasted, not both")
	case len(fhs) == 1:
		f, err := fhs[0].Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(f, kafkafmt.MaxImportBytes+1))
		f.Close()
		if err != nil {
			return nil, err
		}
		out.name, out.text = fhs[0].Filename, string(data)
	case pasted != "":
		out.name, out.text = "pasted output", pasted
	default:
		return nil, nil
	}
	imp, err := kafkafmt.ParseOutput(strings.NewReader(out.text))
	if err != nil {
		var pe *kafkafmt.ParseError
		switch {
		case errors.As(err, &pe):
			return nil, &outputParseError{input: badInput("output", "%v", pe), parse: pe}
		case errors.Is(err, kafkafmt.ErrImportTooLarge):
			return nil, fmt.Errorf("output: %w: %w", errTooLarge, err)
		}
		return nil, fmt.Errorf("server: parse output: %w", err)
	}
	out.imp = imp
	return &out, nil
}

// pastedOutput is the pasted text of the "output" field, kept when the
// import page is shown again; an uploaded file cannot be kept.
func pastedOutput(form *multipart.Form) string {
	if form == nil {
		return ""
	}
	for _, v := range form.Value["output"] {
		if strings.TrimSpace(v) != "" && len(v) <= 1<<20 {
			return v
		}
	}
	return ""
}

// toolCommand is the name users know a Kafka tool by.
func toolCommand(tool string) string {
	if tool == kafkafmt.ToolConsumer {
		return "kafka-consumer-perf-test"
	}
	return "kafka-producer-perf-test"
}

// importedOutcome makes o the result of the parsed output and returns
// the run's workload: the tool's (producer or consumer, so the runs list
// and comparisons put it next to kbench's own runs; the run's Source says
// it was imported). o gets the metrics under kbench's names, the
// intervals as the series, the text itself as the output, and the same
// Measurement and Environment documents a launched run has, saying where
// the figures came from.
func importedOutcome(o *store.Outcome, out *importedOutput) rundoc.Workload {
	imp := out.imp
	cmd := toolCommand(imp.Tool)
	o.Output = out.text
	notes := []string{"imported from Kafka's " + cmd + " output"}
	notes = append(notes, imp.Notes...)
	values := map[string]float64{}
	for _, m := range imp.Metrics {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			// SQLite and JSON hold no NaN or infinity.
			notes = append(notes, fmt.Sprintf("%s was %v in the output: left out", m.Name, m.Value))
			continue
		}
		values[m.Name] = m.Value
		o.Metrics = append(o.Metrics, rundoc.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: rundoc.Better(m.Better)})
	}
	for _, iv := range imp.Intervals {
		o.Series = append(o.Series, rundoc.SeriesPoint{T: iv.T, Records: iv.Records, RecordsPerSec: iv.RecordsPerSec,
			MBPerSec: iv.MBPerSec, LatencyAvgMs: iv.LatencyAvgMs, LatencyMaxMs: iv.LatencyMaxMs})
	}
	records, rate := values["records-sent"], values["record-send-rate"]
	if imp.Tool == kafkafmt.ToolConsumer {
		records, rate = values["records-consumed-total"], values["records-consumed-rate"]
	}
	window := 0.0
	if rate > 0 {
		window = records / rate
	}
	o.Measurement = &rundoc.Measurement{Source: rundoc.SourceImported, Tool: cmd, MeasuredRecords: int64(records),
		WindowSeconds: window, Lines: imp.Lines, Notes: notes}
	o.Environment = &rundoc.Environment{Source: rundoc.SourceImported, Tool: cmd,
		Broker: "imported: " + cmd + " does not print its environment"}
	return rundoc.Workload(imp.Tool)
}

// importProfiles handles POST /api/import with profiles: a new imported
// run holding them.
func (s *Server) importProfiles(c *gin.Context) {
	run, err := s.importRun(c)
	if err != nil {
		var pe *kafkafmt.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			// As fail answers, plus the line, for clients to point at.
			_, field, msg := classify(err)
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": msg, "field": field, "line": pe.Line})
			return
		}
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, toAPIRun(run, true))
}

func (s *Server) importPage(c *gin.Context) {
	v := ui.ImportView{}
	v.Page = s.page(c, "Import")
	s.render(c, http.StatusOK, "import", v)
}

// importForm handles the import page; bad input re-renders it with the
// message and the label kept.
func (s *Server) importForm(c *gin.Context) {
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		s.fail(c, uploadErr(err))
		return
	}
	if !s.checkCSRF(c) {
		return
	}
	run, err := s.importRun(c)
	if err != nil {
		status, field, msg := classify(err)
		if status != http.StatusBadRequest {
			s.fail(c, err)
			return
		}
		v := ui.ImportView{Label: c.PostForm("label"), Output: pastedOutput(c.Request.MultipartForm), Error: msg, ErrorField: field}
		v.Page = s.page(c, "Import")
		s.render(c, status, "import", v)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", run.ID))
}

// uploadErr maps multipart failures: too large is 413, anything else 400.
func uploadErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	if errors.Is(err, http.ErrNotMultipart) || errors.Is(err, multipart.ErrMessageTooLarge) {
		return badInput("body", "must be multipart/form-data with an \"output\" or \"profile\" file: %v", err)
	}
	return badInput("body", "unreadable upload: %v", err)
}

// --- Pages ---

func (s *Server) uiMeta(ctx context.Context, m profileMeta) ui.ProfileMeta {
	label := ""
	if runs, _, err := s.store.ListRuns(ctx, store.RunFilter{IDs: []uint{m.RunID}, Limit: 1}); err == nil && len(runs) == 1 {
		label = runs[0].Label
	}
	return ui.ProfileMeta{ID: m.ID, RunID: m.RunID, RunLabel: label, Role: m.Role, Kind: m.Kind, Bytes: m.Bytes, Samples: m.Samples}
}

func uiWritePaths(r profiles.WritePathReport) *ui.WritePaths {
	w := &ui.WritePaths{Total: float64(r.Total), Unit: r.Unit}
	for _, row := range r.Rows {
		w.Rows = append(w.Rows, ui.WritePathRow{Direction: row.Direction, Path: row.Path, Value: float64(row.Value),
			Samples: row.Samples, Percent: row.Percent, Frames: row.Frames})
	}
	return w
}

func sampleNames(p *profile.Profile) []string {
	out := make([]string, 0, len(p.SampleType))
	for _, st := range p.SampleType {
		out = append(out, st.Type+"/"+st.Unit)
	}
	return out
}

// profilePage is /profiles/:id: the flame graph with its sample-type
// picker, search and zoom kept in the URL, and the write-path panel.
func (s *Server) profilePage(c *gin.Context) {
	lp, idx, err := s.profileSample(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	st := lp.prof.SampleType[idx]
	wp := uiWritePaths(profiles.WritePaths(lp.prof, idx))
	v := ui.NewProfileView(s.uiMeta(c.Request.Context(), lp.meta), sampleNames(lp.prof), st.Type+"/"+st.Unit, c.Query("focus"), c.Query("search"), wp)
	title := v.Page.Title
	v.Page = s.page(c, title)
	s.render(c, http.StatusOK, "profile", v)
}

// compareProfilesPage is /compare/profiles: both flame graphs, the
// differential one, the normalisation, the biggest changes and the write
// paths side by side.
func (s *Server) compareProfilesPage(c *gin.Context) {
	normalize := c.DefaultQuery("normalize", "total")
	cmp, err := s.compareQuery(c, normalize)
	if err != nil {
		s.fail(c, err)
		return
	}
	var changes []ui.Change
	for _, ch := range profiles.TopChanges(cmp.base.prof, cmp.target.prof, cmp.sb, cmp.st, cmp.norm.Scale, 50) {
		changes = append(changes, ui.Change{Name: ch.Name, BaseFlat: float64(ch.BaseFlat), TargetFlat: float64(ch.TargetFlat),
			BaseCum: float64(ch.BaseCum), TargetCum: float64(ch.TargetCum), DeltaFlat: float64(ch.DeltaFlat), DeltaCum: float64(ch.DeltaCum),
			DeltaFlatPct: ch.DeltaFlatPct, DeltaCumPct: ch.DeltaCumPct})
	}
	st := cmp.target.prof.SampleType[cmp.st]
	norm := ui.Normalization{Mode: cmp.norm.Mode, Scale: cmp.norm.Scale, Explain: cmp.norm.Explain}
	v := ui.NewCompareProfilesView(s.uiMeta(c.Request.Context(), cmp.base.meta), s.uiMeta(c.Request.Context(), cmp.target.meta), st.Type+"/"+st.Unit, normalize, norm,
		cmp.workAvailable, cmp.workUnavailable, changes,
		uiWritePaths(profiles.WritePaths(cmp.base.prof, cmp.sb)), uiWritePaths(profiles.WritePaths(cmp.target.prof, cmp.st)))
	title := v.Page.Title
	v.Page = s.page(c, title)
	s.render(c, http.StatusOK, "compare_profiles", v)
}
