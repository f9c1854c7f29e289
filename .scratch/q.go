//go:build ignore

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder/chsql"
)

func main() {
	ctx := olap.Maintenance(context.Background())
	cfg := olap.DefaultConfig()
	cfg.ChDBLib = os.Getenv("INSIGHTD_CHDB_LIB")
	cfg.DataDir = os.Args[1]
	e, err := olap.Open(ctx, cfg, slog.Default())
	if err != nil {
		panic(err)
	}
	defer e.Close()
	for _, q := range os.Args[2:] {
		t := time.Now()
		rows, err := e.Query(ctx, chsql.Statement{SQL: q})
		if err != nil {
			fmt.Println("ERR", err)
			continue
		}
		for i, r := range rows.Data {
			if i < 30 {
				fmt.Println(r...)
			}
		}
		fmt.Println("rows", len(rows.Data), "in", time.Since(t))
	}
}
