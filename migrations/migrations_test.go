package migrations

import (
	"reflect"
	"testing"
)

func TestFilesLoadInVersionOrder(t *testing.T) {
	for name, load := range map[string]func() ([]Migration, error){"postgres": Postgres, "clickhouse": ClickHouse} {
		t.Run(name+" migrations load in version order", func(t *testing.T) {
			ms, err := load()
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) == 0 {
				t.Fatal("no migrations")
			}
			for i := 1; i < len(ms); i++ {
				if ms[i].Version <= ms[i-1].Version {
					t.Fatalf("version %d after %d", ms[i].Version, ms[i-1].Version)
				}
			}
			for _, m := range ms {
				if len(m.Statements()) == 0 {
					t.Errorf("migration %d_%s has no statement", m.Version, m.Name)
				}
			}
		})
	}
}

func TestStatementsSplitOutsideQuotesAndComments(t *testing.T) {
	m := Migration{SQL: "-- a; comment\nCREATE TABLE a (x String DEFAULT ';');\n/* b; */ SELECT `x;y`, \"q;\" ;\n-- trailing only\n"}
	got := m.Statements()
	want := []string{
		"-- a; comment\nCREATE TABLE a (x String DEFAULT ';')",
		"/* b; */ SELECT `x;y`, \"q;\"",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
