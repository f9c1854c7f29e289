package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
)

const adminUsage = `Usage:
  insightd admin bootstrap --email E --org NAME [--project NAME]
  insightd admin create-key --email E --scopes a:b,c:d [--label L]
                             [--scoped-organizations UUID,...] [--scoped-teams ID,...]
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
	sf, err := addStoreFlags(fs, usePostgres)
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
	fs := newFlagSet("admin create-key", "admin create-key --email E --scopes a:b,c:d [--label L] [--scoped-organizations UUID,...] [--scoped-teams ID,...]", stderr)
	sf, err := addStoreFlags(fs, usePostgres)
	if err != nil {
		return err
	}
	email := fs.String("email", "", "the key's user (required)")
	scopes := fs.String("scopes", "", "comma-separated scopes, e.g. insight:read,project:read, or * (required)")
	label := fs.String("label", "", "a label to tell the key apart (at most 40 characters)")
	orgs := fs.String("scoped-organizations", "", "comma-separated organization ids: the key opens only these (default: all of the user's)")
	teams := fs.String("scoped-teams", "", "comma-separated project ids: the key opens only these (default: all of the user's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *email == "" || *scopes == "" {
		return fmt.Errorf("%w: --email and --scopes are required", errUsage)
	}
	list := splitList(*scopes)
	var limit metadata.KeyScope
	for _, o := range splitList(*orgs) {
		id, err := uuid.Parse(o)
		if err != nil {
			return fmt.Errorf("%w: --scoped-organizations: %q is not an organization id", errUsage, o)
		}
		limit.Organizations = append(limit.Organizations, id)
	}
	for _, t := range splitList(*teams) {
		id, err := strconv.ParseInt(t, 10, 64)
		if err != nil || id < 1 {
			return fmt.Errorf("%w: --scoped-teams: %q is not a project id", errUsage, t)
		}
		limit.Teams = append(limit.Teams, id)
	}
	_, store, _, err := sf.start(ctx, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	key, err := store.CreateKey(ctx, *email, *label, list, limit)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]string{"personal_api_key": key.Key})
}

// splitList reads a comma-separated flag value, blanks dropped.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
