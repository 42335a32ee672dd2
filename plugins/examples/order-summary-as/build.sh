#!/usr/bin/env bash
# Builds the AssemblyScript order-summary plugin without make:
# installs the pinned npm packages (npm ci) when needed, then runs asc -O3.
# Output: build/plugins/order-summary-as.wasm at the repository root.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund
fi
mkdir -p ../../../build/plugins
npm run --silent build
echo "built $(cd ../../.. && pwd)/build/plugins/order-summary-as.wasm"
