package server

import (
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

// favicon answers GET /favicon.ico with kbench's icon (static/favicon.ico).
// Browsers ask for it on every page that names no icon, the embedded
// pprof UI's among them; kbench's own pages link the same file under
// /static/.
func (s *Server) favicon(c *gin.Context) {
	data, err := fs.ReadFile(staticFS(), "favicon.ico")
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "public, max-age=86400")
	c.Data(http.StatusOK, "image/x-icon", data)
}
