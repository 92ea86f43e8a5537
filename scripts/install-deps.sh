#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# install-deps.sh — install the Debian 12 packages listed in
# scripts/packages.txt that are not installed yet.
#
#   scripts/install-deps.sh          install what is missing (root), or print
#                                    the apt-get command and fail (not root)
#   scripts/install-deps.sh --check  only report; exit 1 if something is missing
#   scripts/install-deps.sh --list   print the package list
#
# Nothing is fetched when every package is already installed.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
list="$here/packages.txt"

packages() {
        sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$list"
}

installed() {
        status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) || return 1
        [ "$status" = installed ]
}

missing_packages() {
        for p in $(packages); do
                installed "$p" || printf '%s\n' "$p"
        done
}

mode=install
case "${1:-}" in
        "") ;;
        --check) mode=check ;;
        --list) packages; exit 0 ;;
        -h|--help) sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-deps.sh: unknown argument '$1'" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "install-deps.sh: dpkg-query not found: glean builds on Debian 12;" >&2
        echo "install-deps.sh: install the equivalents of: $(packages | tr '\n' ' ')" >&2
        exit 1
fi

missing=$(missing_packages | tr '\n' ' ')
missing=${missing% }
if [ -z "$missing" ]; then
        echo "install-deps.sh: all build dependencies are installed"
        exit 0
fi

if [ "$mode" = check ]; then
        echo "install-deps.sh: missing: $missing" >&2
        exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps.sh: missing Debian packages: $missing" >&2
        echo "install-deps.sh: run as root:" >&2
        echo "    apt-get update && apt-get install -y $missing" >&2
        exit 1
fi

echo "install-deps.sh: installing: $missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -q $missing

still=$(missing_packages | tr '\n' ' ')
if [ -n "$still" ]; then
        echo "install-deps.sh: still missing after apt-get: $still" >&2
        exit 1
fi
echo "install-deps.sh: done"
