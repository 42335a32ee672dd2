package calls

import (
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// ErrDescription reports a describe result that does not decode or lacks a
// required capability (host/plugin.ErrDescription).
var ErrDescription = errors.New("invalid plugin description")

// Describe decodes describe's answer and checks it against the module: the
// ABI major of dynafold_abi_version (major, minor), the required
// capabilities, every listed capability exported (exported), at least one
// source.
func Describe(body []byte, major, minor uint32, exported func(abi.Capability) bool) (*abi.Description, error) {
	d, err := abi.DecodeDescription(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDescription, err)
	}
	if d.ABIMajor != major {
		return nil, fmt.Errorf("%w: describe says ABI %d.%d but dynafold_abi_version says %d.%d", ErrDescription,
			d.ABIMajor, d.ABIMinor, major, minor)
	}
	for _, c := range []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve} {
		if !d.Has(c) {
			return nil, fmt.Errorf("%w: capabilities %v lack the required %q", ErrDescription, d.Capabilities, c)
		}
	}
	for _, c := range d.Capabilities {
		if !exported(c) {
			return nil, fmt.Errorf("%w: capability %q is listed but not exported", ErrDescription, c)
		}
	}
	if len(d.Sources) == 0 {
		return nil, fmt.Errorf("%w: no sources", ErrDescription)
	}
	return d, nil
}

// Name is how errors and logs name a plugin: configured, else described
// (else fallback), then "@version" when the plugin has one.
func Name(configured, fallback string, d *abi.Description) string {
	name := fallback
	if configured == "" && d.Name != "" {
		name = d.Name
	}
	if d.Version != "" {
		name += "@" + d.Version
	}
	return name
}
