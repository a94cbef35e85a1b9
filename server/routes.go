package server

import "github.com/gin-gonic/gin"

// routes is the one route table of the application.
func (s *Server) routes() {
	r := s.engine

	// Pages.
	r.GET("/", s.runsPage)
	r.GET("/runs/new", s.newRunPage)
	r.POST("/runs", s.createRunForm)
	r.GET("/runs/:id", s.runPage)
	r.POST("/runs/:id/cancel", s.cancelRunForm)
	r.GET("/login", s.loginPage)
	r.POST("/login", s.login)

	// JSON API.
	api := r.Group("/api")
	api.GET("/runs", s.apiListRuns)
	api.POST("/runs", s.apiCreateRuns)
	api.GET("/runs/:id", s.apiGetRun)
	api.POST("/runs/:id/cancel", s.apiCancelRun)
	api.GET("/runs/:id/events", s.runEvents)
	api.GET("/runs/:id/profiles", s.apiListProfiles)
	api.GET("/profiles/:id/download", s.downloadProfile)

	r.GET("/static/*filepath", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		s.static.ServeHTTP(c.Writer, c.Request)
	})
	r.GET("/healthz", func(c *gin.Context) { c.String(200, "ok\n") })
	r.NoRoute(func(c *gin.Context) { s.fail(c, errNotFound) })
}
