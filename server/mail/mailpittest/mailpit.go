// Package mailpittest runs a real mailpit (SMTP server with an HTTP API)
// per test, so tests read the mail the product really sent.
package mailpittest

import (
	"encoding/json"
	"fmt"
	"net/http"
	netmail "net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Mailpit is a running mailpit.
type Mailpit struct {
	SMTPURL string // smtp://127.0.0.1:PORT
	APIURL  string // http://127.0.0.1:PORT
}

// Start runs mailpit on free ports and stops it when the test ends. Mailpit
// binds port 0 without logging the ports it got, so they are read from the
// process's own listening sockets (its fds' inodes in /proc/PID/net/tcp):
// no port is guessed, so parallel tests never collide.
// Extra arguments go to mailpit (--smtp-allowed-recipients, --enable-chaos).
func Start(t testing.TB, args ...string) *Mailpit {
	t.Helper()
	bin, err := exec.LookPath("mailpit")
	if err != nil {
		if home, herr := os.UserHomeDir(); herr == nil {
			if _, serr := os.Stat(filepath.Join(home, "go/bin/mailpit")); serr == nil {
				bin, err = filepath.Join(home, "go/bin/mailpit"), nil
			}
		}
	}
	if err != nil {
		t.Fatalf("mailpit is not installed (scripts/services.sh installs it): %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"-s", "127.0.0.1:0", "-l", "127.0.0.1:0", "-d", filepath.Join(dir, "mp.db")}, args...)...)
	logf, _ := os.Create(filepath.Join(dir, "mailpit.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mailpit: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ports := listeningPorts(cmd.Process.Pid)
		if len(ports) >= 2 {
			m := &Mailpit{}
			for _, p := range ports {
				base := "http://127.0.0.1:" + strconv.Itoa(p)
				if resp, err := http.Get(base + "/api/v1/info"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						m.APIURL = base
						continue
					}
				}
				m.SMTPURL = "smtp://127.0.0.1:" + strconv.Itoa(p)
			}
			if m.APIURL != "" && m.SMTPURL != "" {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "mailpit.log"))
	t.Fatalf("mailpit did not listen within 30s; its log:\n%s", log)
	return nil
}

// listeningPorts are the TCP ports pid listens on.
func listeningPorts(pid int) []int {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, file := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, file))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			local := f[1]
			i := strings.LastIndex(local, ":")
			if p, err := strconv.ParseInt(local[i+1:], 16, 32); err == nil {
				ports = append(ports, int(p))
			}
		}
	}
	return ports
}

// Summary is one message in mailpit's list.
type Summary struct {
	ID      string    `json:"ID"`
	Subject string    `json:"Subject"`
	To      []Address `json:"To"`
	From    Address   `json:"From"`
}

type Address struct {
	Name    string `json:"Name"`
	Address string `json:"Address"`
}

// Message is one message with its parts.
type Message struct {
	ID      string    `json:"ID"`
	Subject string    `json:"Subject"`
	From    Address   `json:"From"`
	To      []Address `json:"To"`
	Text    string    `json:"Text"`
	HTML    string    `json:"HTML"`
	// Headers are filled by Message from mailpit's headers call.
	Headers map[string][]string `json:"-"`
}

func (m *Mailpit) getJSON(t testing.TB, path string, out any) {
	t.Helper()
	resp, err := http.Get(m.APIURL + path)
	if err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit %s: status %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}

// To lists the messages sent to addr, newest first.
func (m *Mailpit) To(t testing.TB, addr string) []Summary {
	t.Helper()
	var list struct {
		Messages []Summary `json:"messages"`
	}
	m.getJSON(t, "/api/v1/search?query="+url.QueryEscape("to:"+addr), &list)
	return list.Messages
}

// Message loads a message with its text, HTML and headers.
func (m *Mailpit) Message(t testing.TB, id string) *Message {
	t.Helper()
	msg := new(Message)
	m.getJSON(t, "/api/v1/message/"+id, msg)
	// The headers as sent, from the raw message (mailpit's headers call
	// leaves some out, List-Unsubscribe among them).
	resp, err := http.Get(m.APIURL + "/api/v1/message/" + id + "/raw")
	if err != nil {
		t.Fatalf("mailpit raw %s: %v", id, err)
	}
	defer resp.Body.Close()
	parsed, err := netmail.ReadMessage(resp.Body)
	if err != nil {
		t.Fatalf("mailpit raw %s: %v", id, err)
	}
	msg.Headers = parsed.Header
	return msg
}

// WaitFor polls until n messages to addr arrived (a generous deadline
// guards against a hang) and answers the newest, loaded.
func (m *Mailpit) WaitFor(t testing.TB, addr string, n int) *Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := m.To(t, addr)
		if len(list) >= n {
			return m.Message(t, list[0].ID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit: %d message(s) to %s, want %d", len(list), addr, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Chaos sets mailpit's SMTP failures (started with --enable-chaos): every
// recipient is refused with code at probability percent; 0, 0 stops them.
func (m *Mailpit) Chaos(t testing.TB, code, probability int) {
	t.Helper()
	body := fmt.Sprintf(`{"Recipient":{"ErrorCode":%d,"Probability":%d}}`, code, probability)
	req, _ := http.NewRequest(http.MethodPut, m.APIURL+"/api/v1/chaos", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("mailpit chaos: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit chaos: status %d", resp.StatusCode)
	}
}

// Total is how many messages mailpit holds.
func (m *Mailpit) Total(t testing.TB) int {
	t.Helper()
	var list struct {
		Total int `json:"total"`
	}
	m.getJSON(t, "/api/v1/messages?limit=1", &list)
	return list.Total
}
