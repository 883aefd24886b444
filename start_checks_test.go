package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/server"
)

// serve checks at start that it can write its mail and media folders
// (issue 41 item 11): with MAIL_DIR where no folder can be made, it exits
// with a line naming MAIL_DIR instead of serving and failing every mail.
func TestServeRefusesUnwritableMailFolder(t *testing.T) {
	t.Parallel()
	bin := testBinary(t)
	dir := t.TempDir()
	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+filepath.Join(dir, "m.db"), "REDIS_URL=", "S3_ENDPOINT=", "SMTP_URL=",
		"MEDIA_DIR="+filepath.Join(dir, "media"), "MAIL_DIR="+filepath.Join(blocker, "mail"),
		"PORT=0", "AUTH_PORT=0", "PUBLIC_URL=", "AUTH_URL=", "SHUTDOWN_DELAY=0s", "APP_ENV=")
	out := make(chan string, 1)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	go func() {
		var log strings.Builder
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			log.WriteString(lines.Text() + "\n")
		}
		_ = cmd.Wait()
		out <- log.String()
	}()
	select {
	case log := <-out:
		if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(log, "MAIL_DIR") || strings.Contains(log, "msg=serving") {
			t.Errorf("exit %d, log:\n%s", cmd.ProcessState.ExitCode(), log)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve started with an unwritable MAIL_DIR")
	}
}

// The example settings (deploy/marquee.env.example) pass APP_ENV=production's
// checks, and with the systemd unit the folders they write are ones the unit
// lets the service write (with them, every mail failed: mkdir data).
func TestExampleSettingsAreProductionReady(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("deploy/marquee.env.example")
	if err != nil {
		t.Fatal(err)
	}
	unit, err := os.ReadFile("deploy/marquee.service")
	if err != nil {
		t.Fatal(err)
	}
	var writable []string
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "ReadWritePaths="); ok {
			writable = append(writable, strings.Fields(v)...)
		}
	}
	env := map[string]string{}
	secrets := t.TempDir()
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if strings.HasSuffix(k, "_FILE") {
			// A stand-in secret of the kind the README asks for.
			content := strings.Repeat("s", 64)
			if k == "DATABASE_URL_FILE" {
				content = "postgres://marquee:pw@127.0.0.1:5432/marquee"
			}
			v = filepath.Join(secrets, k)
			if err := os.WriteFile(v, []byte(content+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env[k] = v
	}
	if env["APP_ENV"] != "production" {
		t.Errorf("the example does not set APP_ENV=production: %v", env)
	}
	cfg, err := server.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("example settings refused: %v", err)
	}
	under := func(path string) bool {
		for _, w := range writable {
			if strings.HasPrefix(path, strings.TrimSuffix(w, "/")+"/") {
				return true
			}
		}
		return false
	}
	if !under(cfg.MailDir) || !under(cfg.MediaDir) {
		t.Errorf("MAIL_DIR %q and MEDIA_DIR %q must be under the unit's ReadWritePaths %v", cfg.MailDir, cfg.MediaDir, writable)
	}
}
