# The AssemblyScript order-summary plugin (SPEC W3): an Extism plugin built
# with the npm packages assemblyscript and @extism/as-pdk. The top Makefile
# includes this file:
#
#	include plugins/examples/order-summary-as/build.mk
#	plugins: $(WASM) $(AS_WASM)
#
# Needs node (20) and npm; the packages come from the npm registry, pinned by
# package-lock.json, into plugins/examples/order-summary-as/node_modules.

AS_DIR  := plugins/examples/order-summary-as
AS_WASM := build/plugins/order-summary-as.wasm
AS_SRC  := $(wildcard $(AS_DIR)/assembly/*.ts) $(AS_DIR)/asconfig.json $(AS_DIR)/package.json

.PHONY: plugin-as as-install

## plugin-as: the AssemblyScript order-summary plugin (asc -O3), build/plugins/order-summary-as.wasm
plugin-as: $(AS_WASM)

## as-install: npm ci in plugins/examples/order-summary-as (when package-lock.json changed)
as-install: $(AS_DIR)/node_modules/.package-lock.json

$(AS_DIR)/node_modules/.package-lock.json: $(AS_DIR)/package-lock.json
	cd $(AS_DIR) && npm ci --no-audit --no-fund

# An explicit rule: it takes precedence over the Go plugins' pattern rule.
$(AS_WASM): $(AS_SRC) $(AS_DIR)/node_modules/.package-lock.json
	@mkdir -p build/plugins
	cd $(AS_DIR) && npm run --silent build
