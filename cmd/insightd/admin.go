package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

const adminUsage = `Usage:
  insightd admin bootstrap --email E --org NAME [--project NAME]
  insightd admin create-key --email E --scopes a:b,c:d [--label L]
`

func cmdAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("%w: admin needs a subcommand", errUsage)
	}
	switch args[0] {
	case "bootstrap":
		return cmdBootstrap(ctx, args[1:], stdout, stderr)
	case "create-key":
		return cmdCreateKey(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, adminUsage)
		return nil
	default:
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("%w: unknown admin command %q", errUsage, args[0])
	}
}

func cmdBootstrap(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin bootstrap", "admin bootstrap --email E --org NAME [--project NAME]", stderr)
	sf, err := addStoreFlags(fs, false)
	if err != nil {
		return err
	}
	email := fs.String("email", "", "the owner's email (required; an existing user is reused)")
	org := fs.String("org", "", "organization name (required)")
	project := fs.String("project", "Default project", "project name")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *email == "" || *org == "" {
		return fmt.Errorf("%w: --email and --org are required", errUsage)
	}
	_, store, _, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	out, err := store.Bootstrap(ctx, *email, *org, *project)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(out)
}

func cmdCreateKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin create-key", "admin create-key --email E --scopes a:b,c:d [--label L]", stderr)
	sf, err := addStoreFlags(fs, false)
	if err != nil {
		return err
	}
	email := fs.String("email", "", "the key's user (required)")
	scopes := fs.String("scopes", "", "comma-separated scopes, e.g. insight:read,project:read, or * (required)")
	label := fs.String("label", "", "a label to tell the key apart")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *email == "" || *scopes == "" {
		return fmt.Errorf("%w: --email and --scopes are required", errUsage)
	}
	var list []string
	for _, s := range strings.Split(*scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	_, store, _, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	key, err := store.CreateKey(ctx, *email, *label, list)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]string{"personal_api_key": key.Key})
}
