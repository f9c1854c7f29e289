package main

import (
	"encoding/xml"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The compose files are how most people will first run insightd on a
// server: these tests read them as Docker Compose would and check them
// against the configuration the binary reads (envNames, the store flags'
// validation), so a renamed variable, a wrong credential or a missing
// health check fails here rather than on someone's machine.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Configs  map[string]struct {
		Content string `yaml:"content"`
	} `yaml:"configs"`
	Volumes map[string]any `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Configs []struct {
		Source string `yaml:"source"`
		Target string `yaml:"target"`
	} `yaml:"configs"`
	Volumes []string `yaml:"volumes"`
}

func readCompose(t *testing.T, name string) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../" + name)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// servicesOf are the names of the services whose image starts with image.
func (f composeFile) servicesOf(image string) []string {
	var out []string
	for name, s := range f.Services {
		if strings.HasPrefix(s.Image, image) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func TestComposeFilesMatchTheConfigurationTheBinaryReads(t *testing.T) {
	for _, c := range []struct {
		file    string
		cluster bool
	}{{"docker-compose.yml", false}, {"docker-compose.cluster.yml", true}} {
		f := readCompose(t, c.file)
		t.Run(c.file+" configures insightd with variables the binary reads and accepts", func(t *testing.T) {
			serve, migrate := f.Services["insightd"], f.Services["migrate"]
			if !slices.Equal(serve.Command, []string{"serve"}) || !slices.Equal(migrate.Command, []string{"migrate"}) {
				t.Fatalf("commands: insightd %v, migrate %v", serve.Command, migrate.Command)
			}
			if !maps(serve.Environment, migrate.Environment) {
				t.Fatalf("migrate and serve see different settings:\n%v\n%v", serve.Environment, migrate.Environment)
			}
			known := map[string]bool{}
			for _, v := range envNames {
				known[v] = true
			}
			for k := range serve.Environment {
				if !known[k] {
					t.Errorf("%s sets %s, which the binary does not read (cmd/insightd/config.go)", c.file, k)
				}
			}
			for _, v := range envNames {
				t.Setenv(v, "") // blank reads as unset (applyEnv)
			}
			for k, v := range serve.Environment {
				t.Setenv(k, v)
			}
			fs := newFlagSet("serve", "serve", io.Discard)
			sf, err := addStoreFlags(fs, useBoth)
			if err != nil {
				t.Fatal(err)
			}
			if err := parse(fs, nil); err != nil {
				t.Fatal(err)
			}
			if err := sf.finish(); err != nil {
				t.Fatalf("the binary refuses the file's settings: %v", err)
			}
			if (sf.olap.Cluster != "") != c.cluster {
				t.Fatalf("cluster %q in %s", sf.olap.Cluster, c.file)
			}
			checkClickHouseURL(t, f, sf.olap.ClickHouseURL)
			checkDatabaseURL(t, f, sf.meta.DatabaseURL)
		})
		t.Run(c.file+" starts insightd after healthy stores, on the port the image listens on", func(t *testing.T) {
			stores := append(f.servicesOf("clickhouse/clickhouse-server"), f.servicesOf("postgres")...)
			if len(stores) < 2 {
				t.Fatalf("stores %v", stores)
			}
			for _, svc := range []string{"insightd", "migrate"} {
				for _, store := range stores {
					if got := f.Services[svc].DependsOn[store].Condition; got != "service_healthy" {
						t.Errorf("%s waits for %s with %q, want service_healthy", svc, store, got)
					}
				}
			}
			if got := f.Services["insightd"].DependsOn["migrate"].Condition; got != "service_completed_successfully" {
				t.Errorf("insightd waits for migrate with %q", got)
			}
			for name, s := range f.Services {
				for dep, d := range s.DependsOn {
					if d.Condition == "service_healthy" && (f.Services[dep].Healthcheck == nil || len(f.Services[dep].Healthcheck.Test) < 2) {
						t.Errorf("%s waits for %s to be healthy, which has no health check", name, dep)
					}
				}
			}
			for _, name := range f.servicesOf("clickhouse/clickhouse-server") {
				test := strings.Join(f.Services[name].Healthcheck.Test, " ")
				if !strings.Contains(test, `--user "$$CLICKHOUSE_USER"`) || !strings.Contains(test, "SELECT 1") || strings.Contains(test, "localhost") {
					t.Errorf("%s's health check %q must query the real server as the configured user", name, test)
				}
			}
			for _, name := range f.servicesOf("postgres") {
				env := f.Services[name].Environment
				want := "pg_isready -U " + env["POSTGRES_USER"] + " -d " + env["POSTGRES_DB"]
				if test := strings.Join(f.Services[name].Healthcheck.Test, " "); !strings.Contains(test, want) {
					t.Errorf("%s's health check %q, want %q", name, test, want)
				}
			}
			dockerfile, err := os.ReadFile("../../Dockerfile")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`INSIGHTD_ADDR=[0-9.]*:(\d+)`).FindSubmatch(dockerfile)
			if m == nil {
				t.Fatal("the Dockerfile sets no INSIGHTD_ADDR")
			}
			if ports := f.Services["insightd"].Ports; len(ports) != 1 || !strings.HasSuffix(ports[0], ":"+string(m[1])) {
				t.Fatalf("insightd publishes %v, the image listens on %s", ports, m[1])
			}
			for _, s := range f.Services {
				for _, v := range s.Volumes {
					if name, _, ok := strings.Cut(v, ":"); ok && !strings.HasPrefix(name, ".") {
						if _, ok := f.Volumes[name]; !ok {
							t.Errorf("volume %s is not declared", name)
						}
					}
				}
			}
		})
	}
	t.Run("the cluster file's nodes form the cluster insightd names", func(t *testing.T) {
		f := readCompose(t, "docker-compose.cluster.yml")
		cluster := f.Services["insightd"].Environment["INSIGHTD_CLICKHOUSE_CLUSTER"]
		nodes := f.servicesOf("clickhouse/clickhouse-server")
		if len(nodes) != 2 {
			t.Fatalf("ClickHouse nodes %v, want two shards", nodes)
		}
		var cfg xmlNode
		if err := xml.Unmarshal([]byte(f.Configs["clickhouse-cluster"].Content), &cfg); err != nil {
			t.Fatal(err)
		}
		def := cfg.child("remote_servers").child(cluster)
		if def == nil {
			t.Fatalf("no remote_servers entry %q", cluster)
		}
		var hosts []string
		for _, shard := range def.Nodes {
			if shard.XMLName.Local != "shard" || shard.child("internal_replication").text() != "true" {
				t.Fatalf("shard %+v: want <shard> with internal_replication (replicated tables copy themselves)", shard.XMLName)
			}
			for _, r := range shard.Nodes {
				if r.XMLName.Local == "replica" {
					hosts = append(hosts, r.child("host").text())
					env := f.Services[r.child("host").text()].Environment
					if r.child("user").text() != env["CLICKHOUSE_USER"] || r.child("password").text() != env["CLICKHOUSE_PASSWORD"] {
						t.Errorf("replica %s: credentials differ from the node's", r.child("host").text())
					}
				}
			}
		}
		slices.Sort(hosts)
		if !slices.Equal(hosts, nodes) {
			t.Fatalf("cluster hosts %v, ClickHouse services %v", hosts, nodes)
		}
		keeper := cfg.child("zookeeper").child("node").child("host").text()
		if ks := f.Services[keeper]; !strings.HasPrefix(ks.Image, "clickhouse/clickhouse-keeper") || len(ks.Configs) != 1 {
			t.Fatalf("Keeper %q is not a clickhouse-keeper service with its config", keeper)
		}
		if cfg.child("distributed_ddl").child("path").text() == "" {
			t.Fatal("no distributed_ddl path: ON CLUSTER migrations need one")
		}
		seen := map[string]bool{}
		for _, n := range nodes {
			s := f.Services[n]
			env := s.Environment
			if env["CLICKHOUSE_SHARD"] == "" || env["CLICKHOUSE_REPLICA"] != n {
				t.Errorf("%s: shard %q replica %q (the replica must be the node's name, unique in the cluster)", n, env["CLICKHOUSE_SHARD"], env["CLICKHOUSE_REPLICA"])
			}
			if seen[env["CLICKHOUSE_SHARD"]] {
				t.Errorf("%s repeats shard %s: each node is its own shard", n, env["CLICKHOUSE_SHARD"])
			}
			seen[env["CLICKHOUSE_SHARD"]] = true
			if len(s.Configs) != 1 || s.Configs[0].Source != "clickhouse-cluster" || !strings.HasPrefix(s.Configs[0].Target, "/etc/clickhouse-server/config.d/") {
				t.Errorf("%s does not mount the cluster config: %+v", n, s.Configs)
			}
			if env["CLICKHOUSE_DB"] != "insightd" {
				t.Errorf("%s creates database %q: ON CLUSTER DDL runs in the same database on every node", n, env["CLICKHOUSE_DB"])
			}
		}
		macros := cfg.child("macros")
		if macros.child("shard") == nil || macros.child("replica") == nil {
			t.Fatal("no shard and replica macros: the replicated tables' paths need them")
		}
	})
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkClickHouseURL: the URL names a ClickHouse service of the file on
// its native port, with that service's user, password and database.
func checkClickHouseURL(t *testing.T, f composeFile, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "clickhouse" {
		t.Fatalf("CLICKHOUSE_URL %q: %v", raw, err)
	}
	host, port, _ := net.SplitHostPort(u.Host)
	s, ok := f.Services[host]
	if !ok || !strings.HasPrefix(s.Image, "clickhouse/clickhouse-server") || port != "9000" {
		t.Fatalf("CLICKHOUSE_URL points at %s, not a ClickHouse service's native port", u.Host)
	}
	pass, _ := u.User.Password()
	if u.User.Username() != s.Environment["CLICKHOUSE_USER"] || pass != s.Environment["CLICKHOUSE_PASSWORD"] ||
		strings.TrimPrefix(u.Path, "/") != s.Environment["CLICKHOUSE_DB"] {
		t.Fatalf("CLICKHOUSE_URL's user, password or database differ from %s's", host)
	}
}

// checkDatabaseURL: the same for PostgreSQL.
func checkDatabaseURL(t *testing.T, f composeFile, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(u.Host)
	s, ok := f.Services[host]
	if !ok || !strings.HasPrefix(s.Image, "postgres") || port != "5432" {
		t.Fatalf("DATABASE_URL points at %s, not a PostgreSQL service", u.Host)
	}
	pass, _ := u.User.Password()
	if u.User.Username() != s.Environment["POSTGRES_USER"] || pass != s.Environment["POSTGRES_PASSWORD"] ||
		strings.TrimPrefix(u.Path, "/") != s.Environment["POSTGRES_DB"] {
		t.Fatalf("DATABASE_URL's user, password or database differ from %s's", host)
	}
}

// xmlNode is any element of a ClickHouse config file.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []xmlNode  `xml:",any"`
	Content string     `xml:",chardata"`
}

func (n *xmlNode) child(name string) *xmlNode {
	if n == nil {
		return nil
	}
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			return &n.Nodes[i]
		}
	}
	return nil
}

func (n *xmlNode) text() string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(n.Content)
}
