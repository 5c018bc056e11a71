# Sourced by the real-Slurm tests: skips (exit 77, CTest's "skipped") without root or
# without the commands a test needs, fails without the deepshare binary, and makes the
# test's cluster folder BASE under DS_SLURM_TMP (scripts/test.sh stops leftovers there).
# Usage: slurm_preflight PREFIX COMMAND...   (BIN must be set)
slurm_preflight() {
  local prefix=$1 b
  shift
  [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (Slurm daemons)"; exit 77; }
  for b in "$@"; do
    command -v "$b" >/dev/null || { echo "SKIP: $b not installed (scripts/setup-slurm.sh)"; exit 77; }
  done
  [ -x "$BIN/deepshare" ] || { echo "FAIL: no $BIN/deepshare"; exit 1; }
  BASE=$(mktemp -d "${DS_SLURM_TMP:-/tmp}/$prefix.XXXX")
  export BASE
}
