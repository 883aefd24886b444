#!/usr/bin/env bash
# deadcode -test over the module: it fails listing any function that no
# program or test reaches. deadcode keeps no cache and analyses the whole
# program every time (about 30 CPU seconds, a twentieth of `make test` on
# two cores), so a clean result is remembered, as go vet and staticcheck
# remember theirs: under a hash of everything that decides it (the tool's
# version, the Go toolchain and build settings, go.mod, go.sum and every
# .go file), in ~/.cache/marquee/deadcode. A tree that changed is analysed
# again; a result with dead code is never remembered.
set -euo pipefail
go=${GO:-go}
tool=${1:?usage: deadcode.sh golang.org/x/tools/cmd/deadcode@VERSION}
key=$({
  echo "$tool"
  "$go" version
  "$go" env GOOS GOARCH GOFLAGS CGO_ENABLED
  cat go.mod go.sum
  find . -name '*.go' -not -path './node_modules/*' -print0 | sort -z | xargs -0 sha256sum
} | sha256sum | cut -d' ' -f1)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/marquee/deadcode
if [ -e "$cache/$key" ]; then
  exit 0
fi
dead=$("$go" run "$tool" -test ./...)
if [ -n "$dead" ]; then
  echo "deadcode:"
  echo "$dead"
  exit 1
fi
mkdir -p "$cache"
# Only the latest few results are worth keeping.
ls -t "$cache" | tail -n +20 | sed "s|^|$cache/|" | xargs -r rm -f
touch "$cache/$key"
