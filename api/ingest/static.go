package ingest

import (
	"fmt"
	"net/http"
	"regexp"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
)

// The browser SDK's lazily loaded extensions. posthog-js asks for
// /static/<extension>.js?v=<version> (and /static/<version>/<extension>.js)
// when remote config names a product, and for some (surveys) even when
// remote config turns the product off: it loads the bundle to learn
// there is nothing to show. insightd has none of these products
// (surveys, session recording, the toolbar, web vitals, dead clicks,
// conversations...), so each extension is answered with a script that
// defines nothing: the SDK finds no extension and keeps the product off,
// where a 404 would log a console error on every page of the site.

// extensionScript is an extension's file name as posthog-js writes it.
var extensionScript = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}\.js$`)

// version is a posthog-js version as its versioned paths carry it.
var version = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]{1,32})?$`)

func staticRoutes(r *gin.Engine) {
	r.GET("/static/:file", extension)
	r.GET("/static/:file/:name", versionedExtension)
}

func extension(c *gin.Context) { writeExtension(c, c.Param("file")) }

func versionedExtension(c *gin.Context) {
	if !version.MatchString(c.Param("file")) {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	writeExtension(c, c.Param("name"))
}

func writeExtension(c *gin.Context, name string) {
	if !extensionScript.MatchString(name) {
		httpx.WriteError(c, httpx.NotFound())
		return
	}
	// The answer never changes: let browsers and CDNs keep it a day.
	c.Header("Cache-Control", "public, max-age=86400")
	c.Data(http.StatusOK, "application/javascript; charset=utf-8",
		fmt.Appendf(nil, "/* insightd: %s is not a product insightd has; remote config keeps it off. */\n", name))
}
