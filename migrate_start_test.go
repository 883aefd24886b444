package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/store"
	"marquee/store/storetest"
)

// Three instances and five CLI commands start at once on an empty
// PostgreSQL database: every one succeeds (the first to take the
// migration lock migrates, the others wait for it), and each instance
// serves. Then, with the database migrated and the migration lock held
// by someone else, CLI commands still run at once: they take no lock.
func TestStartTogetherOnEmptyDatabase(t *testing.T) {
	t.Parallel()
	bin := testBinary(t)
	// Each instance: DB_MAX_CONNS 2, its job queue's 2, while migrating
	// one more; each CLI command one or two.
	dsn := storetest.EmptyPostgresConns(t, 13)
	env := append(os.Environ(), "DATABASE_URL="+dsn, "DB_MAX_CONNS=2", "REDIS_URL=", "S3_ENDPOINT=", "MEDIA_DIR="+t.TempDir(),
		"PORT=0", "AUTH_PORT=0", "PUBLIC_URL=", "AUTH_URL=", "SHUTDOWN_DELAY=0s", "MIGRATION_LOCK_TIMEOUT=3m")

	type served struct {
		addr   string
		exited chan error
	}
	servers := make([]served, 3)
	var wg sync.WaitGroup
	cliErrs := make([]string, 5)
	for i := range cliErrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "migrate")
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				cliErrs[i] = err.Error() + ": " + string(out)
			}
		}()
	}
	logs := make([]*syncWriter, 3)
	for i := range servers {
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		logs[i] = &syncWriter{w: &strings.Builder{}}
		addr, exited := startServe(t, cmd, logs[i])
		servers[i] = served{addr, exited}
	}
	wg.Wait()
	for i, e := range cliErrs {
		if e != "" {
			t.Errorf("CLI command %d failed: %s", i, e)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for i, s := range servers {
		res, err := client.Get("http://" + s.addr + "/healthz")
		if err != nil {
			t.Fatalf("instance %d: %v\n%s", i, err, logs[i])
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("instance %d /healthz: %d", i, res.StatusCode)
		}
		if strings.Contains(logs[i].String(), "level=ERROR") {
			t.Errorf("instance %d logged an error:\n%s", i, logs[i])
		}
	}

	// Migrated: hold the lock and run CLI commands; none waits for it.
	ctx := context.Background()
	holder, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(1835102833, 1)"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range cliErrs {
		cliErrs[i] = ""
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "migrate")
			cmd.Env = append(env, "MIGRATION_LOCK_TIMEOUT=1m")
			if out, err := cmd.CombinedOutput(); err != nil {
				cliErrs[i] = err.Error() + ": " + string(out)
			}
		}()
	}
	wg.Wait()
	for i, e := range cliErrs {
		if e != "" {
			t.Errorf("CLI command %d on a migrated database: %s", i, e)
		}
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("CLI commands on a migrated database took %s: they waited for the lock", d)
	}
}
