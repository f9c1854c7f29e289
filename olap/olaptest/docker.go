package olaptest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
	"go.yaml.in/yaml/v3"

	"github.com/insightd/insightd/olap"
)

// NoDocker is the reason the container tests give when they skip.
const NoDocker = "no Docker engine reachable: the ClickHouse server and cluster tests need one (docker-compose / testcontainers)"

// RequireDocker skips the test unless a Docker engine answers a ping
// within a few seconds. The check runs aside, with panics recovered,
// because testcontainers' engine discovery may block or panic when there
// is no engine at all.
func RequireDocker(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("docker client: %v", r)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		cli, err := testcontainers.NewDockerClientWithOpts(ctx)
		if err != nil {
			done <- err
			return
		}
		defer cli.Close()
		_, err = cli.Ping(ctx, client.PingOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Skipf("%s (%v)", NoDocker, err)
		}
	case <-time.After(4 * time.Second):
		t.Skip(NoDocker + " (the engine did not answer within 4s)")
	}
}

// composeFile is the part of a compose file the container tests start
// from: each service's image, environment and inline config files.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Configs     []struct {
			Source string `yaml:"source"`
			Target string `yaml:"target"`
		} `yaml:"configs"`
	} `yaml:"services"`
	Configs map[string]struct {
		Content string `yaml:"content"`
	} `yaml:"configs"`
}

// ClickHouseCluster starts the Keeper and ClickHouse services of the
// compose file at path (the repository's docker-compose.cluster.yml) on
// a network of their own, under their service names, with the file's
// images, environments and config contents, and returns the server
// backend connected to the node the file's insightd uses, configured
// with its cluster, and migrated. It skips without a Docker engine.
func ClickHouseCluster(t *testing.T, path string) *olap.Server {
	t.Helper()
	RequireDocker(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	ctx := context.Background()
	nw, err := network.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testcontainers.CleanupNetwork(t, nw)
	ports := map[string]string{}
	// Keeper first: the nodes wait for it.
	for _, kind := range []string{"clickhouse/clickhouse-keeper", "clickhouse/clickhouse-server"} {
		for name, svc := range f.Services {
			if !strings.HasPrefix(svc.Image, kind) {
				continue
			}
			var files []testcontainers.ContainerFile
			for _, c := range svc.Configs {
				files = append(files, testcontainers.ContainerFile{Reader: strings.NewReader(f.Configs[c.Source].Content),
					ContainerFilePath: c.Target, FileMode: 0o644})
			}
			opts := []testcontainers.ContainerCustomizer{network.WithNetwork([]string{name}, nw),
				testcontainers.WithEnv(svc.Environment), testcontainers.WithFiles(files...)}
			if kind == "clickhouse/clickhouse-server" {
				opts = append(opts, testcontainers.WithExposedPorts("9000/tcp", "8123/tcp"),
					testcontainers.WithWaitStrategy(wait.ForHTTP("/ping").WithPort("8123/tcp").WithStartupTimeout(3*time.Minute)))
			} else {
				opts = append(opts, testcontainers.WithWaitStrategy(wait.ForListeningPort("9181/tcp").WithStartupTimeout(time.Minute)))
			}
			ctr, err := testcontainers.Run(ctx, svc.Image, opts...)
			testcontainers.CleanupContainer(t, ctr)
			if err != nil {
				t.Fatalf("start %s (%s): %v", name, svc.Image, err)
			}
			if kind == "clickhouse/clickhouse-server" {
				if ports[name], err = ctr.PortEndpoint(ctx, "9000/tcp", ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	env := f.Services["insightd"].Environment
	url := env["CLICKHOUSE_URL"]
	for name, endpoint := range ports {
		url = strings.Replace(url, "@"+name+":9000/", "@"+endpoint+"/", 1)
	}
	return openMigrated(t, olap.Config{ClickHouseURL: url, Cluster: env["INSIGHTD_CLICKHOUSE_CLUSTER"], QueryTimeout: time.Minute})
}

// ClickHouseServer starts one ClickHouse server of the image the
// repository's docker-compose.yml names (its service "clickhouse"), and
// returns the server backend connected to it, migrated. It skips without
// a Docker engine.
func ClickHouseServer(t *testing.T, composePath string) *olap.Server {
	t.Helper()
	RequireDocker(t)
	b, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	svc := f.Services["clickhouse"]
	ctx := context.Background()
	ctr, err := testcontainers.Run(ctx, svc.Image, testcontainers.WithEnv(svc.Environment),
		testcontainers.WithExposedPorts("9000/tcp", "8123/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/ping").WithPort("8123/tcp").WithStartupTimeout(3*time.Minute)))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start %s: %v", svc.Image, err)
	}
	endpoint, err := ctr.PortEndpoint(ctx, "9000/tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("clickhouse://%s:%s@%s/%s", svc.Environment["CLICKHOUSE_USER"], svc.Environment["CLICKHOUSE_PASSWORD"],
		endpoint, svc.Environment["CLICKHOUSE_DB"])
	return openMigrated(t, olap.Config{ClickHouseURL: url, QueryTimeout: time.Minute})
}

// openMigrated opens the server backend, retrying while the server
// finishes starting, and migrates it.
func openMigrated(t *testing.T, cfg olap.Config) *olap.Server {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var s *olap.Server
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if s, err = olap.OpenServer(ctx, cfg, log); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("open the server backend: %v", err)
		}
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := olap.Migrate(ctx, s); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}
