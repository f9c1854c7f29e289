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
