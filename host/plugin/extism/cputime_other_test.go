//go:build !unix

package extism_test

import "time"

func cpuTime() time.Duration { return 0 }
