#!/usr/bin/env bash
# Builds the real Kubernetes components of DeepShare's Kubernetes tests (docs/kubernetes.md)
# from their published Go modules, into a cache OUTSIDE the repository.
#
# Each folder under scripts/k8s/modules/ is a small Go module of ours (go.mod, go.sum,
# tools.go) plus tools.txt, which names the binaries to build from it and the module folders
# to publish. One module per set of pinned k8s.io/* libraries: with one go.mod, Go's minimal
# version selection would drag KWOK's (or later Kueue's) libraries to the control plane's.
# Adding a component (e.g. Kueue) = adding a folder; nothing here changes.
#
# Cache layout (DEEPSHARE_K8S_CACHE, default ~/.cache/deepshare-k8s):
#   <module>-<hash>/bin/NAME   one module's binaries; <hash> covers its go.mod, go.sum,
#                              tools.go, the `bin` lines of tools.txt, the Go version and the
#                              build flags, so a changed version rebuilds that module only
#   tools-<hash>/bin/NAME      links to all modules' binaries (<hash>: the modules' hashes
#                              and tools.txt files)
#   tools-<hash>/tools.env     NAME_DIR=folder and NAME_VERSION=version per `dir` line
# Go's own caches (GOCACHE, GOMODCACHE) are used as they are set; a warm re-run builds nothing.
#
# Usage: scripts/k8s/build-tools.sh            build what is missing; print the tools folder
#        scripts/k8s/build-tools.sh --check    print it only if everything is built (else exit 1)
# Progress goes to stderr; stdout gets only the tools folder (holding bin/ and tools.env).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MODULES=$HERE/modules
CACHE=${DEEPSHARE_K8S_CACHE:-$HOME/.cache/deepshare-k8s}
CHECK_ONLY=0
case "${1:-}" in
  --check) CHECK_ONLY=1 ;;
  "") ;;
  -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "build-tools.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
say() { echo "build-tools: $*" >&2; }
die() { say "error: $*"; exit 1; }

command -v go >/dev/null || die "no Go toolchain on PATH (need go >= 1.26; docs/kubernetes.md)"
GO_VERSION=$(GOTOOLCHAIN=local go env GOVERSION)
# The modules' go directives need this much; say so instead of Go's toolchain download attempt.
need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$MODULES"/*/go.mod | sort -V | tail -1)
have=${GO_VERSION#go}
[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ] ||
  die "Go $have is older than $need, which $MODULES/*/go.mod need"
export GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:-} -mod=readonly -trimpath"
LDFLAGS="-s -w"

module_hash() { # $1 = module folder
  { cat "$1/go.mod" "$1/go.sum" "$1/tools.go"; tool_lines "$1" bin
    echo "$GO_VERSION $(go env GOOS GOARCH CGO_ENABLED) $GOFLAGS $LDFLAGS"; } | sha256sum | cut -c1-12
}
tool_lines() { sed -n "s/^$2 //p" "$1/tools.txt"; } # $1 = module folder, $2 = bin | dir

build_module() { # $1 = module folder, $2 = its cache folder
  local mod=$1 out=$2 name pkg t0
  mkdir -p "$out/partial"
  while read -r name pkg; do
    [ -x "$out/partial/$name" ] && { say "[$(basename "$mod")] $name: already built"; continue; }
    say "[$(basename "$mod")] building $name ($pkg) ..."
    t0=$SECONDS
    (cd "$mod" && go build -ldflags="$LDFLAGS" -o "$out/partial/$name.tmp" "$pkg")
    mv "$out/partial/$name.tmp" "$out/partial/$name"
    say "[$(basename "$mod")] $name built in $((SECONDS - t0)) s"
  done < <(tool_lines "$mod" bin)
  mv "$out/partial" "$out/bin"
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one build at a time (parallel tests may all call this script)
start=$SECONDS
all=""
declare -a dirs=()
for mod in "$MODULES"/*/; do
  mod=${mod%/}
  [ -f "$mod/tools.txt" ] || continue
  h=$(module_hash "$mod")
  out=$CACHE/$(basename "$mod")-$h
  all="$all $(basename "$mod")-$h-$(tool_lines "$mod" dir | sha256sum | cut -c1-8)"
  dirs+=("$mod=$out")
  if [ ! -d "$out/bin" ]; then
    [ "$CHECK_ONLY" = 1 ] && { say "$(basename "$mod") is not built (run $0)"; exit 1; }
    build_module "$mod" "$out"
  fi
done
tools=$CACHE/tools-$(echo "$all" | sha256sum | cut -c1-12)
if [ ! -f "$tools/tools.env" ]; then
  mkdir -p "$tools/bin"
  {
    echo "# written by scripts/k8s/build-tools.sh; modules:$all"
    for pair in "${dirs[@]}"; do
      mod=${pair%%=*} out=${pair#*=}
      for b in "$out"/bin/*; do ln -sfn "$b" "$tools/bin/$(basename "$b")"; done
      while read -r var m; do
        (cd "$mod" && go mod download "$m")
        echo "${var}_DIR=$(cd "$mod" && go list -m -f '{{.Dir}}' "$m")"
        echo "${var}_VERSION=$(cd "$mod" && go list -m -f '{{.Version}}' "$m")"
      done < <(tool_lines "$mod" dir)
    done
  } >"$tools/tools.env.tmp"
  mv "$tools/tools.env.tmp" "$tools/tools.env"
fi
# A cleaned GOMODCACHE loses the module folders that tools.env names (Stages, CRDs).
while IFS='=' read -r var dir; do
  case $var in *_DIR) ;; *) continue ;; esac
  [ -d "$dir" ] || { rm -f "$tools/tools.env"; die "$dir ($var) is gone from GOMODCACHE; re-run $0"; }
done <"$tools/tools.env"
say "tools ready in $tools ($((SECONDS - start)) s)"
echo "$tools"
