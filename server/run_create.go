// Creating runs: GET /runs/new, POST /runs and POST /api/runs. The
// request is checked into a spec and its runs queued by launch.

package server

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

func (s *Server) newRunPage(c *gin.Context) {
	v := s.newRunForm(c.Request.Context(), url.Values{}, nil)
	v.Page = s.page(c, "New run")
	s.render(c, http.StatusOK, "new_run", v)
}

// createRunForm handles the new-run form: invalid input re-renders the form
// with the bad field named and every value kept (but the password).
func (s *Server) createRunForm(c *gin.Context) {
	form, ok := s.postedForm(c)
	if !ok {
		return
	}
	// "Add a configuration" and "Remove" buttons (without JavaScript):
	// the form again, changed, with nothing started.
	if form.Has(ui.FieldAddConfig) || form.Has(ui.FieldRemoveConfig) {
		v := s.newRunForm(c.Request.Context(), form, nil)
		v.Page = s.page(c, "New run")
		s.render(c, http.StatusOK, "new_run", v)
		return
	}
	for _, fc := range ui.FormConfigs(form) {
		if !fc.Blank() {
			s.createABForm(c, form, ui.FormConfigs(form))
			return
		}
	}
	// The form's own fields and the request's are checked alike, and
	// every bad field is shown beside itself.
	var errs rundoc.FieldErrors
	req, err := requestFromForm(form)
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	spec, err := s.launcher.Prepare(&req)
	if err := errs.Append(err); err != nil {
		s.fail(c, err)
		return
	}
	if len(errs) > 0 {
		fe := formErrors(errs)
		v := s.newRunForm(c.Request.Context(), form, fe)
		v.Page = s.page(c, "New run")
		s.render(c, http.StatusBadRequest, "new_run", v)
		return
	}
	if form.Has(ui.FieldPreviewFleet) {
		// The division of the fleet the form asks for; nothing starts.
		v := s.newRunForm(c.Request.Context(), form, nil)
		v.Page = s.page(c, "New run")
		if spec.Workers > 1 {
			shards, err := rundoc.DivideFleet(&spec, spec.Workers)
			if err != nil {
				s.fail(c, err) // Prepare divided it already: a bug
				return
			}
			v.Fleet = ui.NewFleetPreview(shards)
		}
		s.render(c, http.StatusOK, "new_run", v)
		return
	}
	runs, err := s.launcher.CreateRuns(c.Request.Context(), req, spec)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", runs[0].ID))
}

func (s *Server) apiCreateRuns(c *gin.Context) {
	var req launch.Request
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Configs != nil {
		s.apiCreateAB(c, &req)
		return
	}
	spec, err := s.launcher.Prepare(&req)
	if err != nil {
		s.fail(c, err)
		return
	}
	runs, err := s.launcher.CreateRuns(c.Request.Context(), req, spec)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiRun, 0, len(runs))
	for _, r := range runs {
		d := r.Doc()
		out = append(out, toAPIRun(&d, false))
	}
	body := client.Created{Runs: out}
	if len(out) == 1 {
		body.ID, body.Status, body.URL = out[0].ID, out[0].Status, out[0].URL
	} else {
		body.GroupID = runs[0].GroupID
	}
	c.JSON(http.StatusCreated, body)
}
