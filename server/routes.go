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
	r.GET("/runs/:id/live-charts", s.liveCharts)
	r.POST("/runs/:id/cancel", s.cancelRunForm)
	r.POST("/runs/:id/delete", s.deleteRunForm)
	r.POST("/runs/:id/profiles", s.attachProfilesForm)
	r.GET("/import", s.importPage)
	r.POST("/import", s.importForm)
	r.POST("/import/csv", s.importCSVForm)
	r.GET("/compare", s.comparePage)
	r.POST("/reports", s.createReportForm)
	r.POST("/compare/repetitions", s.addRepetitionsForm)
	r.GET("/r/:slug", s.report)
	r.GET("/history", s.historyPage)
	r.GET("/series", s.seriesPage)
	r.GET("/regressions", s.regressionsPage)
	r.GET("/login", s.loginPage)
	r.POST("/login", s.login)
	r.POST("/logout", s.logout)
	r.GET("/writepath", s.writepathPage)
	r.POST("/writepath", s.writepathForm)
	r.GET("/writepath/:batch", s.writepathResult)
	r.GET("/sweeps", s.sweepsPage)
	r.POST("/sweeps", s.sweepForm)
	r.GET("/sweeps/:id", s.sweepPage)
	r.POST("/sweeps/:id/cancel", s.cancelSweepForm)

	// JSON API.
	api := r.Group("/api")
	api.GET("/runs", s.apiListRuns)
	api.POST("/runs", s.apiCreateRuns)
	api.GET("/runs/:id", s.apiGetRun)
	api.DELETE("/runs/:id", s.apiDeleteRun)
	api.POST("/runs/:id/cancel", s.apiCancelRun)
	api.GET("/runs/:id/events", s.runEvents)
	api.GET("/runs/:id/profiles", s.apiListProfiles)
	api.GET("/profiles/:id/download", s.downloadProfile)
	api.GET("/profiles/:id/flamegraph", s.flameGraph)
	api.GET("/profiles/:id/writepaths", s.writePaths)
	api.GET("/diff", s.diff)
	api.GET("/diff/profile.pb.gz", s.diffProfileDownload)
	api.POST("/runs/:id/profiles", s.attachProfiles)
	api.POST("/import", s.importProfiles)
	api.POST("/import/csv", s.importCSV)
	api.GET("/compare", s.apiCompare)
	api.GET("/history", s.apiHistory)
	api.GET("/regressions", s.apiRegressions)
	api.GET("/functions", s.apiFunctions)
	api.POST("/reports", s.apiCreateReport)
	api.POST("/compare/repetitions", s.apiAddRepetitions)
	api.POST("/presets/writepath", s.apiWritepathPreset)
	api.POST("/presets/sweep", s.apiCreateSweep)
	api.GET("/sweeps/:id", s.apiGetSweep)
	api.POST("/sweeps/:id/cancel", s.apiCancelSweep)

	// Profiles: flame graphs, comparisons, the full pprof UI.
	r.GET("/profiles/:id", s.profilePage)
	r.GET("/compare/profiles", s.compareProfilesPage)
	r.Any("/profiles/:id/pprof", s.pprofUI)
	r.Any("/profiles/:id/pprof/*path", s.pprofUI)
	r.Any("/diff/:base/:target/pprof", s.pprofDiffUI)
	r.Any("/diff/:base/:target/pprof/*path", s.pprofDiffUI)
	r.Any("/diff/runs/:kind/:role/:base/:target/pprof", s.pprofRunSetsDiffUI)
	r.Any("/diff/runs/:kind/:role/:base/:target/pprof/*path", s.pprofRunSetsDiffUI)

	r.GET("/static/*filepath", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		s.static.ServeHTTP(c.Writer, c.Request)
	})
	r.GET("/favicon.ico", s.favicon)
	r.GET("/healthz", func(c *gin.Context) { c.String(200, "ok\n") })
	r.NoRoute(func(c *gin.Context) { s.fail(c, errNotFound) })
}
