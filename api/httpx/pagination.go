package httpx

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/olap"
)

const (
	defaultLimit = 100
	MaxLimit     = 1000
)

// Page reads limit and offset: integers, limit >= 1 (clamped to 1000, as
// Django REST framework clamps to max_limit), offset >= 0.
func Page(c *gin.Context) (limit, offset int, err error) {
	limit, offset = defaultLimit, 0
	if v, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, Invalid("limit", "limit must be a positive integer.")
		}
		limit = min(n, MaxLimit)
	}
	if v, ok := c.GetQuery("offset"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, Invalid("offset", "offset must be a non-negative integer.")
		}
		offset = n
	}
	return limit, offset, nil
}

// PageTotal is the total a page's rows carry in column col (their
// count() OVER ()), 0 for no rows.
func PageTotal(rows *olap.Rows, col int) int {
	if len(rows.Data) == 0 {
		return 0
	}
	n, _ := rows.Data[0][col].(uint64)
	return int(n)
}

// Paginated writes the list envelope with absolute next/previous URLs.
func Paginated(c *gin.Context, total, limit, offset int, results any) {
	var next, prev *string
	if total-offset > limit { // not offset+limit < total: that overflows for the largest offsets
		u := pageURL(c, limit, offset+limit)
		next = &u
	}
	if offset > 0 {
		u := pageURL(c, limit, max(offset-limit, 0))
		prev = &u
	}
	c.JSON(http.StatusOK, gin.H{"count": total, "next": next, "previous": prev, "results": results})
}

func pageURL(c *gin.Context, limit, offset int) string {
	return LinkWith(c, map[string]string{"limit": strconv.Itoa(limit), "offset": strconv.Itoa(offset)})
}

// LinkWith is the request's absolute URL with the query parameters in
// set replaced, the others kept.
func LinkWith(c *gin.Context, set map[string]string) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	if p := c.GetHeader("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	q := c.Request.URL.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	// A credential sent as a parameter (auth.go) is not copied into a
	// link: the client follows it with its key as it sends it.
	q.Del("personal_api_key")
	// The client's own form of the path, trailing slash and all: some
	// follow next links verbatim against routers that tell them apart.
	u := url.URL{Scheme: scheme, Host: c.Request.Host, Path: SentPath(c.Request), RawQuery: q.Encode()}
	return u.String()
}
