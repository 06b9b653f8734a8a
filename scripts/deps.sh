#!/usr/bin/env bash
# Installs the Debian 12 packages OpenND needs to build and test, if missing.
# Run as root (CI runs as root); as another user it prints the apt-get line.
set -euo pipefail
pkgs=(cmake g++ make pkg-config libgtest-dev libgmock-dev iproute2 procps python3 clang libclang-rt-14-dev scdoc groff-base
      libibverbs-dev librdmacm-dev)
[ "${OPENND_DEPS_EXTRA:-}" ] && read -r -a extra <<<"$OPENND_DEPS_EXTRA" && pkgs+=("${extra[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages: ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
