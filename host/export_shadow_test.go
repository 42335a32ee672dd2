package host

// NewDryStore is newDryStore for the external tests.
var NewDryStore = newDryStore

// WithoutOutputCheck turns the check of the plugins' output off, for the
// benchmark that measures its cost.
func WithoutOutputCheck() Option { return func(o *options) { o.noOutputCheck = true } }
