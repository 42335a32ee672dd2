// Package selftest ships a plugin's own tests inside its Wasm module, as
// the optional self_test export of the ABI. The host runs them when it
// validates the module (`host plugin validate`) and before it hot swaps to
// it; a failing test refuses the module with the test's message, and the
// plugin that is serving keeps serving.
//
// Import it only in a module that has tests to ship: importing it adds the
// export, and a module with a self_test export is smoke-tested by it instead
// of by the fixture configured for hot swaps.
//
//	func init() {
//		guest.Register(mine.Projection)
//		selftest.Register(guesttest.SelfTests(mine.Projection, mine.Cases...)...)
//	}
package selftest

import (
	"fmt"
	"sync"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Test is one self test: Run returns nil when it passes, else what failed.
type Test struct {
	Name string
	Run  func() error
}

var (
	mu         sync.Mutex
	registered []Test
)

// Register adds tests to the module's self test, and lists self_test among
// the capabilities its describe export reports.
func Register(tests ...Test) {
	mu.Lock()
	defer mu.Unlock()
	registered = append(registered, tests...)
	guest.Declare(abi.CapSelfTest)
}

// Registered returns the tests registered so far.
func Registered() []Test {
	mu.Lock()
	defer mu.Unlock()
	return append([]Test(nil), registered...)
}

// Run runs tests and returns one message per failure ("name: what failed"),
// none when every test passed. A panicking test fails with the panic.
func Run(tests []Test) []string {
	var failures []string
	for _, t := range tests {
		if err := run(t); err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", t.Name, err))
		}
	}
	return failures
}

func run(t Test) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if t.Run == nil {
		return fmt.Errorf("no Run function")
	}
	return t.Run()
}
