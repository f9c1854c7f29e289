package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
)

// The bodies PostHog's SDKs send, as PostHog's capture reads them
// (capture-rs's payload extraction and the older posthog/api/capture.py):
//
//   - JSON, possibly gzip (Content-Encoding: gzip, compression=gzip or
//     gzip-js, or just gzip bytes), lz64 (lz-string's base64 form, when
//     compression=lz64 says so) or base64;
//   - a form (application/x-www-form-urlencoded) whose data field holds
//     that, with a compression field of its own and others (ver, _) that
//     say nothing of the events.
//
// The compression hint comes from the query, then the form, then the
// Content-Encoding header. A form without a data field is refused: a
// JSON body sent as a form (what curl -d does) is what PostHog refuses
// too, and guessing would make a form that merely lacks its field look
// like broken JSON.

// compression is how a body or a form's data says it is encoded.
type compression int

const (
	compressNone compression = iota
	compressGzip
	compressLZ64
	compressBase64
)

// compressionOf reads a compression hint; an unknown one is none, as
// PostHog reads it.
func compressionOf(v string) compression {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "gzip", "gzip-js":
		return compressGzip
	case "lz64", "lz-string":
		return compressLZ64
	case "base64", "b64":
		return compressBase64
	}
	return compressNone
}

const formType = "application/x-www-form-urlencoded"

// captureBody reads a capture or flags request's body into the JSON text
// of its events, in any of the forms above.
func captureBody(c *gin.Context, limit int64) ([]byte, error) {
	body, err := readBody(c.Request)
	if err != nil {
		return nil, err
	}
	hint := compressionOf(c.Query("compression"))
	attr := ""
	if ct, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type")); ct == formType {
		data, formHint, err := formData(body)
		if err != nil {
			return nil, err
		}
		if hint == compressNone {
			hint = formHint
		}
		body, attr = data, "data"
	}
	if hint == compressNone {
		// LimitBody has already undone (and removed) Content-Encoding: gzip.
		hint = compressionOf(c.GetHeader("Content-Encoding"))
	}
	return decodeEvents(body, hint, limit, attr)
}

// formData is a form body's data field and compression hint. An empty
// body is an empty data field (the payload parser names it).
func formData(body []byte) ([]byte, compression, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, compressNone, nil
	}
	form, perr := url.ParseQuery(string(body))
	data, ok := form["data"]
	if !ok || len(data) == 0 {
		switch {
		case trimmed[0] == '{' || trimmed[0] == '[':
			return nil, 0, &httpx.Error{Kind: httpx.KindInvalid, Code: "invalid_input", Attr: "data",
				Detail: "The body is JSON but its Content-Type says a form (application/x-www-form-urlencoded, what curl -d sends): " +
					"send it with Content-Type: application/json, or put it in the form's data field."}
		case perr != nil:
			return nil, 0, &httpx.Error{Kind: httpx.KindInvalid, Code: "parse_error", Attr: "data",
				Detail: "The form body could not be parsed (" + perr.Error() + "); a form carries the events in its data field."}
		}
		return nil, 0, httpx.Invalid("data", "The form has no data field: a form body carries the events in data, as JSON, base64 or lz64.")
	}
	v := strings.TrimSpace(data[0])
	if !looksJSON([]byte(v)) {
		// A '+' of base64 (or lz64) that the client left unescaped
		// arrives as a space, the form's encoding of one; PostHog's
		// capture reads it back too. JSON keeps its spaces.
		v = strings.ReplaceAll(v, " ", "+")
	}
	return []byte(v), compressionOf(form.Get("compression")), nil
}

// decodeEvents undoes the body's encoding: gzip by its magic bytes, lz64
// when the hint says so, base64 when the hint says so or when it decodes
// to JSON. What is left is handed to the JSON parser, which says what is
// wrong with it; attr names the field that held it ("data" for a form).
func decodeEvents(b []byte, hint compression, limit int64, attr string) ([]byte, error) {
	if isGzip(b) {
		return gunzip(b, limit, attr)
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 || looksJSON(t) {
		// A gzip hint on a body already JSON: a proxy or the server's
		// Content-Encoding handling undid it.
		return t, nil
	}
	switch hint {
	case compressGzip:
		return nil, badEncoding(attr, "gzip (as its compression says)")
	case compressLZ64:
		out, err := lz64Decompress(string(t), limit)
		if err != nil {
			if err == httpx.ErrBodyTooLarge {
				return nil, err
			}
			return nil, badEncoding(attr, "lz64 (as its compression says)")
		}
		return out, nil
	}
	if d, ok := decodeBase64(t); ok {
		if isGzip(d) {
			return gunzip(d, limit, attr)
		}
		if hint == compressBase64 || looksJSON(bytes.TrimSpace(d)) {
			return d, nil
		}
	}
	switch {
	case hint == compressBase64:
		return nil, badEncoding(attr, "base64 (as its compression says)")
	case attr != "":
		return nil, httpx.Invalid(attr, "The form's data field is neither JSON, base64 JSON, gzip nor (with compression=lz64) lz64.")
	}
	return t, nil
}

func badEncoding(attr, what string) error {
	where := "The body"
	if attr != "" {
		where = "The form's " + attr + " field"
	}
	return &httpx.Error{Kind: httpx.KindInvalid, Code: "parse_error", Attr: attr, Detail: where + " is not valid " + what + "."}
}

func looksJSON(t []byte) bool { return len(t) > 0 && (t[0] == '{' || t[0] == '[') }

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// decodeBase64 reads base64 in the alphabets and paddings clients use.
func decodeBase64(t []byte) ([]byte, bool) {
	s := strings.Trim(string(t), "\r\n\t ")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// readBody reads a request's body into one buffer of the size it
// announces (limitBody has bounded that), rather than growing one by
// doubling: batches are hundreds of kilobytes.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		return io.ReadAll(r.Body)
	}
	// MinRead spare bytes let ReadFrom see the end without growing.
	buf := bytes.NewBuffer(make([]byte, 0, r.ContentLength+bytes.MinRead))
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}

// gunzip decompresses at most limit bytes: more is a 413.
func gunzip(body []byte, limit int64, attr string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, badEncoding(attr, "gzip")
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, badEncoding(attr, "gzip")
	}
	if int64(len(out)) > limit {
		return nil, httpx.ErrBodyTooLarge
	}
	return out, nil
}
