// Reading ids from paths and queries.

package server

import (
	"strconv"

	"github.com/gin-gonic/gin"
)

func parseID(c *gin.Context) (uint, error) {
	id, err := strconv.ParseUint(c.Param("id"), 10, 32)
	if err != nil || id == 0 {
		return 0, errNotFound
	}
	return uint(id), nil
}

func queryID(c *gin.Context, name string) (uint, error) {
	v := c.Query(name)
	id, err := strconv.ParseUint(v, 10, 32)
	if err != nil || id == 0 {
		return 0, badInput(name, "must be a profile id, got %q", v)
	}
	return uint(id), nil
}
