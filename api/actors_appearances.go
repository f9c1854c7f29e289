package api

import "github.com/gin-gonic/gin"

// withAppearances adds to each listed actor its appearances.
func withAppearances(people []any, appearances [][]int) {
	for i, a := range people {
		switch a := a.(type) {
		case personJSON:
			people[i] = struct {
				personJSON
				Appearances []int `json:"appearances"`
			}{a, appearances[i]}
		case gin.H:
			a["appearances"] = appearances[i]
		}
	}
}

// intList reads an engine array of unsigned integers.
func intList(v any) []int {
	list, _ := v.([]any)
	out := make([]int, 0, len(list))
	for _, x := range list {
		n, _ := x.(uint64)
		out = append(out, int(n))
	}
	return out
}
