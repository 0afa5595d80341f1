#!/usr/bin/env bash
# Installs the build and test dependencies from Debian packages. Idempotent; run as root on Debian 12.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config git python3
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-dev  # the fuzzers (tests/fuzz): libFuzzer and the sanitizers' runtimes for clang
  chromium fonts-dejavu-core  # headless browser and its fonts for the HTML report test (tests/e2e/html_report_test.py)
  libvulkan-dev glslang-tools mesa-vulkan-drivers vulkan-tools  # the Vulkan backend, its shader compiler, lavapipe (Vulkan on the CPU), vulkaninfo
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
