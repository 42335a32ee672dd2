// Package orderas holds the sources of the AssemblyScript order-summary
// plugin, embedded, for `host plugin new --lang assemblyscript`, which
// starts a new AssemblyScript plugin from them.
package orderas

import "embed"

// Sources are the plugin's AssemblyScript sources (assembly/*.ts) and its
// npm project files (package.json, package-lock.json, asconfig.json).
//
//go:embed assembly/*.ts package.json package-lock.json asconfig.json
var Sources embed.FS
