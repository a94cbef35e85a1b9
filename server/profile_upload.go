// Uploading profiles to a run: POST /runs/:id/profiles and
// POST /api/runs/:id/profiles.

package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
)

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
	c.JSON(http.StatusCreated, client.Profiles{Profiles: toAPIProfiles(added)})
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

// uploadRoles are the sides of the wire a profile may be taken on.
var uploadRoles = []string{"client", "broker"}

// uploadKinds are the kinds an uploaded profile may be given: those
// profiles.Kind tells apart ("wall": thread samples by state, as kbench
// converts Java Flight Recorder recordings) and "other". Kinds and roles
// end up in file names and on pages, so nothing else is accepted.
var uploadKinds = func() []string {
	var kinds []string
	for _, k := range append(rundoc.ProfileKinds(), rundoc.KindWall, rundoc.KindOther) {
		kinds = append(kinds, string(k))
	}
	return kinds
}()
