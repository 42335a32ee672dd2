package extism

import "github.com/dynafold/dynafold/host/plugin"

// Config holds the options of a loaded plugin: the same limits as a raw
// module's (host/plugin.Config), applied by Load with the same defaults.
// MemoryLimitPages caps both the guest's and the Extism kernel's memory.
type Config = plugin.Config

// The defaults applied by Load to zero fields of Config.
const (
	DefaultPoolSize         = plugin.DefaultPoolSize
	DefaultMemoryLimitPages = plugin.DefaultMemoryLimitPages
	DefaultCallTimeout      = plugin.DefaultCallTimeout
)
