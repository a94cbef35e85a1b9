// A run's profiles: GET /api/runs/:id/profiles and
// GET /api/profiles/:id/download.

package server

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/ui"
)

func (s *Server) apiListProfiles(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ps, err := s.store.ListProfiles(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, client.Profiles{Profiles: toAPIProfiles(ps)})
}

func (s *Server) downloadProfile(c *gin.Context) {
	id, err := parseID(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.store.GetProfile(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Content-Disposition", `attachment; filename="`+profileFileName(p)+`"`)
	c.Data(http.StatusOK, "application/octet-stream", p.Data)
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
