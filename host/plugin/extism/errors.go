package extism

import "github.com/dynafold/dynafold/host/plugin"

// The errors of both transports are host/plugin's, so callers match one set
// of sentinels (errors.Is) whichever transport loaded a module.
var (
	ErrConfig        = plugin.ErrConfig
	ErrABIVersion    = plugin.ErrABIVersion
	ErrInvalidModule = plugin.ErrInvalidModule
	ErrDescription   = plugin.ErrDescription
	ErrClosed        = plugin.ErrClosed

	ErrTimeout     = plugin.ErrTimeout
	ErrMemoryLimit = plugin.ErrMemoryLimit
	ErrTrap        = plugin.ErrTrap
	ErrBadOutput   = plugin.ErrBadOutput
	ErrGuest       = plugin.ErrGuest
	ErrCanceled    = plugin.ErrCanceled
)

// ABIVersionError is host/plugin's: a module built for an ABI major version
// the host does not implement.
type ABIVersionError = plugin.ABIVersionError

// LoadError is host/plugin's: a load that failed, naming the plugin.
type LoadError = plugin.LoadError

func newCause(kind, err error, format string, args ...any) error {
	return plugin.NewCause(kind, err, format, args...)
}
