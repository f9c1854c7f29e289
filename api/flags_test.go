package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// The browser SDK's start-up calls answer an empty flag set in every
// shape a version of the SDKs reads, with the project's capture settings.
func TestFlagsAnswerAnEmptyFlagSet(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	if _, err := f.s.store.DB().Exec("UPDATE projects SET autocapture_opt_out = true, heatmaps_opt_in = true WHERE id = $1", f.team); err != nil {
		t.Fatal(err)
	}
	body := `{"token": "` + f.token + `", "distinct_id": "visitor", "groups": {}}`
	cases := []struct {
		name, method, target, body string
		header                     map[string]string
		featureFlags               any
	}{
		{"POST /flags/?v=2 with the token in the body", "POST", "/flags/?v=2&config=true", body, nil, map[string]any{}},
		{"POST /flags/ with api_key", "POST", "/flags/", `{"api_key": "` + f.token + `", "distinct_id": "d"}`, nil, map[string]any{}},
		{"POST /decide/?v=3 maps flags", "POST", "/decide/?v=3", body, nil, map[string]any{}},
		{"POST /decide/?v=4", "POST", "/decide/?v=4", body, nil, map[string]any{}},
		{"POST /decide/ without a version lists flags", "POST", "/decide/", body, nil, []any{}},
		{"GET /decide/ with the token in the query", "GET", "/decide/?v=3&token=" + f.token, "", nil, map[string]any{}},
		{"a gzip body, as posthog-js sends it", "POST", "/flags/?v=2&compression=gzip-js", string(gz(t, []byte(body))), nil, map[string]any{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			f.h.ServeHTTP(w, r)
			var out map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			want := map[string]any{"flags": map[string]any{}, "featureFlags": tc.featureFlags, "featureFlagPayloads": map[string]any{},
				"errorsWhileComputingFlags": false, "hasFeatureFlags": false, "autocapture_opt_out": true, "heatmaps": true,
				"sessionRecording": false, "supportedCompression": []any{"gzip", "gzip-js"}, "quotaLimited": []any{}}
			for k, v := range want {
				if !reflect.DeepEqual(out[k], v) {
					t.Errorf("%s = %#v, want %#v", k, out[k], v)
				}
			}
			if id, _ := out["requestId"].(string); len(id) != 36 {
				t.Errorf("requestId %v", out["requestId"])
			}
		})
	}
	t.Run("a form whose data field is base64 JSON", func(t *testing.T) {
		data := "data=" + url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(`{"token": "`+f.token+`", "distinct_id": "d"}`)))
		r := httptest.NewRequest("POST", "/flags/?v=2", strings.NewReader(data))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	for _, bad := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"no token", `{"distinct_id": "d"}`, 401, "missing_api_key"},
		{"an unknown token", `{"token": "phc_unknown"}`, 401, "invalid_api_key"},
		{"a NUL token", `{"token": "\u0000"}`, 401, "invalid_api_key"},
		{"a body that is not a JSON object", `[1, 2]`, 400, "parse_error"},
		{"a body that is not JSON", `{"token": `, 400, "parse_error"},
	} {
		t.Run(bad.name+" is "+http.StatusText(bad.status), func(t *testing.T) {
			w, body := do(t, f.h, httptest.NewRequest("POST", "/flags/?v=2", strings.NewReader(bad.body)))
			wantError(t, w, body, bad.status, bad.code)
		})
	}
}

func TestRemoteConfigIsTheProjectsCaptureSettings(t *testing.T) {
	f := newCaptureFixture(t, testConfig())
	t.Run("config is JSON naming the token and the capture endpoint", func(t *testing.T) {
		w, out := do(t, f.h, httptest.NewRequest("GET", "/array/"+f.token+"/config", nil))
		if w.Code != 200 || out["token"] != f.token || out["hasFeatureFlags"] != false ||
			!reflect.DeepEqual(out["analytics"], map[string]any{"endpoint": "/i/v0/e/"}) {
			t.Fatalf("%d %v", w.Code, out)
		}
	})
	t.Run("config.js hands the same configuration to the page", func(t *testing.T) {
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, httptest.NewRequest("GET", "/array/"+f.token+"/config.js", nil))
		js := w.Body.String()
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/javascript") {
			t.Fatalf("%d %v", w.Code, w.Header())
		}
		prefix := `window._POSTHOG_REMOTE_CONFIG["` + f.token + `"] = `
		i := strings.Index(js, prefix)
		if i < 0 {
			t.Fatalf("no assignment in %s", js)
		}
		var conf map[string]any
		rest := js[i+len(prefix):]
		if err := json.NewDecoder(strings.NewReader(rest)).Decode(&conf); err != nil {
			t.Fatalf("%v in %s", err, js)
		}
		if cfg, _ := conf["config"].(map[string]any); cfg["token"] != f.token || cfg["sessionRecording"] != false {
			t.Fatalf("%v", conf)
		}
	})
	for _, path := range []string{"/array/phc_unknown/config", "/array/phc_unknown/config.js", "/array/%00/config", "/array/" + strings.Repeat("x", 300) + "/config"} {
		t.Run(path[:min(len(path), 40)]+" is 404", func(t *testing.T) {
			w, body := do(t, f.h, httptest.NewRequest("GET", path, nil))
			wantError(t, w, body, http.StatusNotFound, "not_found")
		})
	}
}
