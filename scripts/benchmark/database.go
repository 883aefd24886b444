package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"marquee/render"
	"marquee/store"
	"marquee/store/storetest"
)

// freshDatabase makes an empty database name on the test server
// (TEST_DATABASE_URL's), dropping one left by an earlier run, and answers
// its URL and a drop for the end of the run; BENCH_KEEP_DB keeps it.
func freshDatabase(ctx context.Context, name string) (string, func(), error) {
	admin, err := store.Open(storetest.PostgresURL())
	if err != nil {
		return "", nil, err
	}
	drop := func() {
		_, _ = admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	}
	drop()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create database %s (is PostgreSQL running at %s?): %w", name, storetest.PostgresURL(), err)
	}
	u, err := url.Parse(storetest.PostgresURL())
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		if os.Getenv("BENCH_KEEP_DB") == "" {
			drop()
		}
		admin.Close()
	}, nil
}

// builtBinary is the project's bin/marquee, which the benchmarks run as
// their own processes (so its RSS is the server's alone): make build first.
func builtBinary() (string, error) {
	root, err := render.ProjectRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin/marquee")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s missing: run make build: %w", bin, err)
	}
	return bin, nil
}
