package analysistest

import (
	"testing"

	"github.com/insightd/insightd/querybuilder/reference"
)

// PathsProjectCleaning are the path_cleaning_filters of the projects the
// random paths tests run in: query strings go, then item ids (which the
// requests' own rules, applied after, may then rewrite again).
var PathsProjectCleaning = [][2]string{{`\?.*$`, ``}, {`/item/\d+`, `/item/N`}}

// SetPathsSettings gives p PathsProjectCleaning as its
// path_cleaning_filters and reference.PathsTestAccounts as its
// test-account filters.
func SetPathsSettings(t testing.TB, p Project) {
	t.Helper()
	var rules []map[string]string
	for _, c := range PathsProjectCleaning {
		rules = append(rules, map[string]string{"regex": c[0], "alias": c[1]})
	}
	p.Set(t, map[string]any{"path_cleaning_filters": rules, "test_account_filters": reference.PathsTestAccounts})
}
