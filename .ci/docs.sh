#!/usr/bin/env bash
# CI: build the documentation site (guides and API reference); any warning fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."

make docs
