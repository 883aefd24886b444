#!/usr/bin/env bash
# Makes sure the servers the tests use are installed and running on this
# machine: PostgreSQL, Redis, MinIO (for media tests), stripe-mock (card
# payment tests), Pebble (ACME) and Chromium (browser tests). Safe to run repeatedly; it only acts on what is missing.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "installing PostgreSQL"; apt_install postgresql
fi
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "starting PostgreSQL"
  version=$(ls /etc/postgresql | sort -V | tail -1)
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
# The tests connect as postgres over TCP without a password (trust auth, as on
# the CI machines). A fresh install uses peer/scram auth; allow local trust.
if ! psql "postgres://postgres@127.0.0.1:5432/postgres" -Atqc 'select 1' >/dev/null 2>&1; then
  hba=$(as_root -u postgres psql -Atqc 'show hba_file' 2>/dev/null || true)
  if [ -n "$hba" ]; then
    as_root sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/; s/^(host\s+all\s+all\s+::1\/128\s+)\S+/\1trust/' "$hba"
    as_root -u postgres psql -Atqc 'select pg_reload_conf()' >/dev/null
  fi
fi
psql "postgres://postgres@127.0.0.1:5432/postgres" -Atqc "select 1 from pg_database where datname='test'" | grep -q 1 ||
  psql "postgres://postgres@127.0.0.1:5432/postgres" -qc 'create database test'

# Redis
if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing Redis"; apt_install redis-server
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /tmp
  for _ in $(seq 1 30); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.2; done
fi

# MinIO (the S3 server the media tests run against), built from source.
if ! command -v minio >/dev/null 2>&1; then
  echo "installing MinIO (takes a few minutes the first time)"
  go install github.com/minio/minio@latest
fi

# stripe-mock (Stripe's API double, for the card payment tests), built from
# source. Like MinIO, each test starts its own on a free port
# (paymentstest.StartStripeMock); this only installs it.
if ! command -v stripe-mock >/dev/null 2>&1; then
  echo "installing stripe-mock"
  go install github.com/stripe/stripe-mock@latest
fi

# Chromium for the browser tests.
if [ ! -x /usr/bin/chromium ]; then
  echo "installing Chromium"; apt_install chromium
fi

# mailpit (a real SMTP server with an HTTP API, for the e-mail tests), built
# from source; each test starts its own on free ports.
if ! command -v mailpit >/dev/null 2>&1; then
  echo "installing mailpit"
  go install github.com/axllent/mailpit@latest
fi

# Pebble (Let's Encrypt's test ACME CA) and its challenge test server (the
# DNS server Pebble asks), built from source: the TLS_ACME test starts its
# own on free ports.
if ! command -v pebble >/dev/null 2>&1 || ! command -v pebble-challtestsrv >/dev/null 2>&1; then
  echo "installing pebble"
  go install github.com/letsencrypt/pebble/v2/cmd/pebble@latest github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv@latest
fi

# nginx, the static-file baseline scripts/bench compares against.
if ! command -v nginx >/dev/null 2>&1; then
  echo "installing nginx"; apt_install nginx
fi
