package host

// NewDryStore is newDryStore for the external tests.
var NewDryStore = newDryStore
