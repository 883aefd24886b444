package main

// The deployed shape of issue 22: PostgreSQL + Redis, BENCH_CLUSTER_INSTANCES (3) `bin/marquee
// serve` processes behind nginx (a generated config, round robin, keepalive
// upstreams). Visitor pages are read through nginx with wrk, with no writes
// and then while 20 members like, reply and follow at BENCH_WRITES/s through
// the same nginx; a member's API calls (landing data and the community feed)
// are sent at a constant rate in both phases and timed from their due time
// (api.go's constantRate). Targets: read throughput at the write rate >=
// 0.8x of the no-write figure, member API p99 < 20 ms under the writes.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"marquee/assemble"
	"marquee/scripts/seed"
	"marquee/server"
)

var (
	clusterDatabase = envOr("BENCH_CLUSTER_DATABASE", "marquee_bench_cluster")
	// Redis database 5 (helper 5's index): the keys carry the database's
	// namespace as well, so a shared index would not mix entries either.
	clusterRedis   = envOr("BENCH_CLUSTER_REDIS_URL", "redis://127.0.0.1:6379/5")
	clusterAPIRate = envOr("BENCH_CLUSTER_API_RATE", "100")
	clusterAPIFor  = envOr("BENCH_CLUSTER_API_DURATION", "5s")
	// BENCH_CLUSTER_INSTANCES: how many `bin/marquee serve` behind nginx
	// (issue 45 measures three).
	clusterInstances = envOr("BENCH_CLUSTER_INSTANCES", "3")
)

func clusterBench(ctx context.Context) error {
	apiRate, err := strconv.Atoi(clusterAPIRate)
	if err != nil || apiRate <= 0 {
		return fmt.Errorf("BENCH_CLUSTER_API_RATE: %q", clusterAPIRate)
	}
	instances, err := strconv.Atoi(clusterInstances)
	if err != nil || instances < 1 {
		return fmt.Errorf("BENCH_CLUSTER_INSTANCES: %q", clusterInstances)
	}
	apiDur, err := time.ParseDuration(clusterAPIFor)
	if err != nil {
		return fmt.Errorf("BENCH_CLUSTER_API_DURATION: %w", err)
	}
	bin, err := builtBinary()
	if err != nil {
		return err
	}

	dsn, drop, err := freshDatabase(ctx, clusterDatabase)
	if err != nil {
		return err
	}
	defer drop()

	tmp, err := os.MkdirTemp("", "marquee-bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": clusterRedis, "MEDIA_DIR": filepath.Join(tmp, "media"),
		"SECRET_KEY": "bench-cluster", "S3_ENDPOINT": "", "TRUSTED_PROXIES": "127.0.0.1", "MAIL_DIR": filepath.Join(tmp, "mail")}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := server.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		return err
	}
	// Migrated and seeded here, with the store wired as the servers wire
	// theirs (same Redis namespace), so the members' sessions and follows
	// made below are the servers' too.
	a, err := assemble.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := seed.Demo(ctx, a.DB, a.Files); err != nil {
		return err
	}
	settle(ctx, a.DB)
	a.Storage.InvalidateLanding(ctx, "demo")
	st := a.Storage
	demo, err := st.AppByIDOrName(ctx, "demo")
	if err != nil {
		return err
	}
	community, err := st.CommunityOfApp(ctx, demo.ID)
	if err != nil {
		return err
	}
	follower, err := st.UserByLogin(ctx, "follower@demo.test")
	if err != nil {
		return err
	}
	token, err := st.CreateSession(ctx, follower.ID, "bench")
	if err != nil {
		return err
	}
	cookie := "marquee_session=" + token

	var upstreams []string
	var pids []int
	for i := 0; i < instances; i++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		authPort, err := freePort()
		if err != nil {
			return err
		}
		env := os.Environ()
		for k, v := range vars {
			env = append(env, k+"="+v)
		}
		env = append(env, fmt.Sprintf("PORT=%d", port), fmt.Sprintf("AUTH_PORT=%d", authPort))
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		cmd.Stderr = io.Discard
		// BENCH_CLUSTER_LOGS names a folder for the instances' logs.
		if dir := os.Getenv("BENCH_CLUSTER_LOGS"); dir != "" {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("instance-%d.log", i+1)))
			if err != nil {
				return err
			}
			defer f.Close()
			cmd.Stdout, cmd.Stderr = f, f
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start instance %d: %w", i+1, err)
		}
		defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
		base := fmt.Sprintf("127.0.0.1:%d", port)
		if err := waitForURL("http://"+base+"/healthz", 30*time.Second); err != nil {
			return fmt.Errorf("instance %d: %w", i+1, err)
		}
		upstreams = append(upstreams, base)
		pids = append(pids, cmd.Process.Pid)
	}
	front, stopNginx, err := startNginxProxy(tmp, upstreams)
	if err != nil {
		return err
	}
	defer stopNginx()

	var engaged *writers
	if benchWrites > 0 {
		if engaged, err = newWriters(ctx, st, front, 20); err != nil {
			return err
		}
	}
	// Warm both instances: round robin sends one of every two requests to each.
	for _, p := range pagesUnderTest {
		for i := 0; i < 4; i++ {
			if _, err := fetch(front+p.path, ""); err != nil {
				return err
			}
			if _, err := fetch(front+p.path, cookie); err != nil {
				return err
			}
		}
	}
	memberCall := apiCall{name: "member API (landing data, community feed page 1)", member: true, urls: []string{
		"/api/app/" + demo.ID + "/landing", "/api/community/" + community.ID + "/posts?limit=20&type=POST&page=1",
	}}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 256, MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256, DisableCompression: true,
	}}
	for _, u := range memberCall.urls {
		for i := 0; i < 4; i++ {
			if status, err := apiGet(client, front+u, true, cookie); err != nil || status != http.StatusOK {
				return fmt.Errorf("warm-up GET %s: %d %v", u, status, err)
			}
		}
	}

	// during runs f with the members writing, and adds the writes made and
	// the time to the totals.
	var writesMade int64
	var writing time.Duration
	during := func(writes bool, f func()) {
		if !writes || engaged == nil {
			f()
			return
		}
		before, start := engaged.done.Load()+engaged.failed.Load(), time.Now()
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { engaged.run(wctx, benchWrites); close(done) }()
		f()
		stop()
		<-done
		writesMade += engaged.done.Load() + engaged.failed.Load() - before
		writing += time.Since(start)
	}

	// What the writes cost the machine on their own (writers, nginx,
	// instances, PostgreSQL, Redis): the share of the CPU the reads lose to
	// them at best.
	var writesAlone string
	if engaged != nil {
		// The machine's own background (other services, the servers'
		// job pollers) is measured first and taken off.
		idleBusy0, idleTotal0 := machineBusy()
		time.Sleep(3 * time.Second)
		idleBusy1, idleTotal1 := machineBusy()
		background := 0.0
		if idleTotal1 > idleTotal0 {
			background = float64(idleBusy1-idleBusy0) / float64(idleTotal1-idleTotal0)
		}
		busy0, total0 := machineBusy()
		byCommand0 := cpuByCommand()
		made0 := engaged.done.Load() + engaged.failed.Load()
		wctx, stop := context.WithTimeout(ctx, 5*time.Second)
		engaged.run(wctx, benchWrites)
		stop()
		busy1, total1 := machineBusy()
		made := engaged.done.Load() + engaged.failed.Load() - made0
		if total1 > total0 && made > 0 {
			cores := float64(numCPU())
			share := float64(busy1-busy0)/float64(total1-total0) - background
			cpuSeconds := share * cores * 5
			writesAlone = fmt.Sprintf("writes alone (%d in 5 s, no reads): %.0f%% of the machine's %d cores busy beyond its background (%.0f%%), %.1f ms of CPU per write (everything on the machine)",
				made, share*100, numCPU(), background*100, cpuSeconds*1000/float64(made))
			// Where it went, per command (clock ticks are 10 ms).
			var parts []string
			byCommand := cpuByCommand()
			for name, ticks := range byCommand {
				if d := ticks - byCommand0[name]; d >= 5 {
					parts = append(parts, fmt.Sprintf("%s %.1f ms", name, float64(d)*10/float64(made)))
				}
			}
			sort.Strings(parts)
			writesAlone += "; per write: " + strings.Join(parts, ", ")
		}
	}

	fmt.Printf("\nPostgreSQL (%s) + Redis (%s), %d `bin/marquee serve` behind nginx (round robin, keepalive); wrk -t1 -c%s -d%s, Accept-Encoding: gzip\n",
		clusterDatabase, clusterRedis, instances, wrkConns, wrkFor)
	if writesAlone != "" {
		fmt.Println(writesAlone)
	}
	fmt.Printf("load average before: %s\n\n", loadAvg())
	fmt.Printf("| page | viewer | no writes req/s | at %d writes/s | ratio |\n", benchWrites)
	fmt.Println("| --- | --- | ---: | ---: | ---: |")
	var targets []func()
	for _, p := range pagesUnderTest {
		// Without and with writes in turn, BENCH_ROUNDS times, medians
		// kept: a neighbour's burst (or the kernel writing back what the
		// API part seeded) skews one run, not the ratio.
		medians, err := inTurn([]func() (figure, error){
			func() (figure, error) { return wrk(front+p.path, "") },
			func() (busy figure, err error) {
				during(true, func() { busy, err = wrk(front+p.path, "") })
				return busy, err
			},
		})
		if err != nil {
			return err
		}
		quiet, busy := medians[0], medians[1]
		ratio := 0.0
		if quiet.rps > 0 {
			ratio = busy.rps / quiet.rps
		}
		fmt.Printf("| %s | visitor | %s | %s | %.2fx |\n", p.name, quiet, busy, ratio)
		name := fmt.Sprintf("PG+Redis, %d instances: visitor %s at %d writes/s vs no writes", instances, p.name, benchWrites)
		targets = append(targets, func() { target(name, ratio, 0.8, true, "x") })
	}
	quietAPI := constantRate(client, front, memberCall, cookie, apiRate, apiDur)
	var busyAPI apiResult
	during(true, func() { busyAPI = constantRate(client, front, memberCall, cookie, apiRate, apiDur) })
	// The machine's load as the p99 was measured: a busy run (other
	// processes on the machine) is told from a slow one.
	apiLoad := loadAvg()
	fmt.Printf("\n| %s at %d req/s, %s | p50 | p99 | max | failed |\n| --- | ---: | ---: | ---: | ---: |\n", memberCall.name, apiRate, apiDur)
	fmt.Printf("| no writes | %s | %s | %s | %d |\n", ms(quietAPI.p50), ms(quietAPI.p99), ms(quietAPI.max), quietAPI.failed)
	fmt.Printf("| at %d writes/s | %s | %s | %s | %d |\n", benchWrites, ms(busyAPI.p50), ms(busyAPI.p99), ms(busyAPI.max), busyAPI.failed)
	fmt.Printf("\nload average as the member API p99 at %d writes/s was measured: %s (%d cores; above the core count the machine was busy with more than this bench)\n", benchWrites, apiLoad, numCPU())
	var rssParts []string
	for i, pid := range pids {
		rssParts = append(rssParts, fmt.Sprintf("instance %d %s (peak %s)", i+1, procStatus(pid, "VmRSS"), procStatus(pid, "VmHWM")))
	}
	fmt.Printf("\nRSS after the runs: %s; load average after: %s\n", strings.Join(rssParts, ", "), loadAvg())
	if engaged != nil {
		fmt.Printf("mixed mode: %d writes done, %s; %.0f writes/s achieved while writing (want %d)\n",
			engaged.done.Load(), engaged.failures(), float64(writesMade)/writing.Seconds(), benchWrites)
	}
	fmt.Println()
	for _, t := range targets {
		t()
	}
	target(fmt.Sprintf("PG+Redis, %d instances: member API p99 at %d writes/s (load average %s, %d cores)", instances, benchWrites, apiLoad, numCPU()),
		float64(busyAPI.p99.Microseconds())/1000, 20, false, " ms")
	return nil
}

// startNginxProxy puts nginx in front of the upstreams on a free port.
func startNginxProxy(dir string, upstreams []string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	var servers strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&servers, "    server %s;\n", u)
	}
	conf := fmt.Sprintf(`worker_processes auto;
daemon off;
pid %[1]s/nginx-proxy.pid;
error_log %[1]s/nginx-proxy-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s;
  proxy_temp_path %[1]s;
  fastcgi_temp_path %[1]s;
  uwsgi_temp_path %[1]s;
  scgi_temp_path %[1]s;
  upstream marquee {
%[3]s    keepalive 64;
  }
  server {
    listen 127.0.0.1:%[2]d;
    location / {
      proxy_pass http://marquee;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto http;
    }
  }
}
`, dir, port, servers.String())
	confFile := filepath.Join(dir, "nginx-proxy.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		return "", nil, err
	}
	cmd := exec.Command("nginx", "-p", dir, "-c", confFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start nginx: %w", err)
	}
	front := fmt.Sprintf("http://127.0.0.1:%d", port)
	stop := func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	if err := waitForURL(front+"/healthz", 10*time.Second); err != nil {
		stop()
		return "", nil, fmt.Errorf("nginx proxy: %w", err)
	}
	return front, stop, nil
}

// assembleLike opens the product as a server started with env (KEY=value
// lines, the last of a key winning) opens it: the same database, media and
// Redis namespace, so what is written here is the server's.
func assembleLike(ctx context.Context, env []string) (*assemble.App, error) {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	cfg, err := server.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		return nil, err
	}
	return assemble.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}
