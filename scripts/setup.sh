#!/usr/bin/env bash
# Installs everything DeepShare needs to build and test, from Debian packages only.
# Safe to run repeatedly: packages already present are skipped quickly.
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++ clang clang-format clang-tidy
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
  time
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
