#!/usr/bin/env bash
# Installs everything DeepShare needs to build and test, from Debian packages only.
# Safe to run repeatedly: packages already present are skipped quickly.
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++ clang clang-format clang-tidy
  # clang's sanitizer and libFuzzer runtimes (the ASan + UBSan build, the fuzz smoke): their
  # own package in Debian 12 today; a machine without it cannot link -fsanitize=address.
  libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
  time
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
  libcurl4-openssl-dev
  libicu-dev
)

# The HTML report's browser test drives Debian's Chromium from node (playwright-core);
# npm installs the report's chart library below. A node already installed is kept.
packages+=(chromium)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

bash "$(dirname "$0")/apt-install.sh" setup "${packages[@]}"

# The HTML report's chart library (Apache ECharts) and the browser-test driver
# (playwright-core), pinned in web/package-lock.json; reinstalled when the lock changes.
web_dir="$(cd "$(dirname "$0")/.." && pwd)/web"
if ! cmp -s "$web_dir/package-lock.json" "$web_dir/node_modules/.deepshare-installed-lock"; then
  echo "setup: installing $web_dir/node_modules (npm ci)"
  npm ci --prefix "$web_dir" --no-audit --no-fund --loglevel=error
  cp "$web_dir/package-lock.json" "$web_dir/node_modules/.deepshare-installed-lock"
fi
