package ingest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata"
)

// The browser SDK's start-up calls. insightd has no feature flags, so
// these answer an empty flag set in the shape the SDKs read, plus the
// project's capture settings: the SDKs then capture as usual instead of
// logging errors or retrying. Like capture, they authenticate by the
// project's token.

func (s *Service) flagRoutes(r *gin.Engine) {
	for _, p := range []string{"/flags", "/decide"} {
		r.GET(p, s.flags)
		r.POST(p, s.flags)
	}
	r.GET("/array/:token/config", s.remoteConfig)
	r.GET("/array/:token/config.js", s.remoteConfigJS)
}

// flags answers /flags/ and the older /decide/. v picks the shape: /decide
// before v3 lists flags (featureFlags: []), later versions map them; v2 of
// /flags and v4 of /decide add flags, the detailed form. Every key of
// every version is sent, as empty as the flag set is: a client reads the
// ones it knows.
func (s *Service) flags(c *gin.Context) {
	token, err := flagsToken(c, s.cfg.BodyLimit)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	proj, err := s.tokenProject(c.Request.Context(), token)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	var featureFlags any = map[string]any{}
	if c.FullPath() == "/decide" {
		if v, err := strconv.Atoi(c.Query("v")); err != nil || v < 3 {
			featureFlags = []string{}
		}
	}
	out := map[string]any{
		"flags":                     map[string]any{},
		"featureFlags":              featureFlags,
		"featureFlagPayloads":       map[string]any{},
		"errorsWhileComputingFlags": false,
		"quotaLimited":              []string{},
		"requestId":                 uuid.NewString(),
		"config":                    map[string]any{"enable_collect_everything": true},
		"toolbarParams":             map[string]any{},
		"isAuthenticated":           false,
	}
	for k, v := range clientConfig(&proj) {
		out[k] = v
	}
	c.JSON(http.StatusOK, out)
}

// flagsToken reads the project token of a flags request: in the body
// (JSON, gzip or a form, as capture takes them) as token, api_key or
// $token, else the token query parameter.
func flagsToken(c *gin.Context, limit int64) (string, error) {
	body, err := captureBody(c, limit)
	if err != nil {
		return "", err
	}
	if t := bytes.TrimSpace(CleanJSONText(body)); len(t) > 0 {
		var holder struct {
			Token       json.RawMessage `json:"token"`
			APIKey      json.RawMessage `json:"api_key"`
			DollarToken json.RawMessage `json:"$token"`
		}
		if t[0] != '{' || json.Unmarshal(t, &holder) != nil {
			return "", &httpx.Error{Kind: httpx.KindInvalid, Code: "parse_error", Detail: "The body must be a JSON object."}
		}
		if token := firstString(holder.Token, holder.APIKey, holder.DollarToken); token != "" {
			return token, nil
		}
	}
	return c.Query("token"), nil
}

// clientConfig is what the browser SDK is told about capturing in the
// project: no recordings, surveys, site apps or flags exist here; the
// project's own switches are passed on.
func clientConfig(p *metadata.TokenProject) map[string]any {
	return map[string]any{
		"supportedCompression":  []string{"gzip", "gzip-js"},
		"hasFeatureFlags":       false,
		"captureDeadClicks":     false,
		"capturePerformance":    p.CapturePerformanceOptIn,
		"autocapture_opt_out":   p.AutocaptureOptOut,
		"autocaptureExceptions": p.AutocaptureExceptionsOptIn,
		"analytics":             map[string]any{"endpoint": "/i/v0/e/"},
		"elementsChainAsString": true,
		"sessionRecording":      false,
		"heatmaps":              p.HeatmapsOptIn,
		"surveys":               false,
		"defaultIdentifiedOnly": true,
		"siteApps":              []string{},
	}
}

// remoteProject is the project of the path's token; 404 otherwise, as
// for any file that is not there.
func (s *Service) remoteProject(c *gin.Context) (string, map[string]any, bool) {
	token := c.Param("token")
	proj, err := s.tokenProject(c.Request.Context(), token)
	if err != nil {
		if e := httpx.ToError(err); e.Kind == httpx.KindUnauthenticated {
			err = httpx.NotFound()
		}
		httpx.WriteError(c, err)
		return "", nil, false
	}
	cfg := clientConfig(&proj)
	cfg["token"] = token
	return token, cfg, true
}

func (s *Service) remoteConfig(c *gin.Context) {
	if _, cfg, ok := s.remoteProject(c); ok {
		c.JSON(http.StatusOK, cfg)
	}
}

// remoteConfigJS is the same configuration as a script that the SDK loads
// with a script tag, which hands it over in a global.
func (s *Service) remoteConfigJS(c *gin.Context) {
	token, cfg, ok := s.remoteProject(c)
	if !ok {
		return
	}
	// json.Marshal escapes <, > and &, so no value can close the script.
	conf, err := json.Marshal(map[string]any{"config": cfg, "siteApps": []string{}})
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	key, err := json.Marshal(token)
	if err != nil {
		httpx.WriteError(c, err)
		return
	}
	js := "(function() {\n  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};\n" +
		"  window._POSTHOG_REMOTE_CONFIG[" + string(key) + "] = " + string(conf) + ";\n})();\n"
	c.Data(http.StatusOK, "application/javascript; charset=utf-8", []byte(js))
}
