package main

import (
	"errors"
	"flag"
	"strings"
	"time"
)

// durationFlag defines a duration flag as fs.Duration does, whose parse
// error says what a duration looks like ("5" alone is refused by
// time.ParseDuration with a bare "parse error").
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := value
	fs.Var((*durationValue)(&d), name, usage)
	return &d
}

// durationValue is a flag.Value of a time.Duration.
type durationValue time.Duration

// Set implements flag.Value.
func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		if strings.Trim(s, "0123456789.") == "" && s != "" {
			return errors.New("a duration needs its unit: " + s + "ms, " + s + "s or " + s + "m, say")
		}
		return errors.New("not a duration: want a number with its unit, such as 5ms, 2s or 1m30s")
	}
	*d = durationValue(v)
	return nil
}

// String implements flag.Value.
func (d *durationValue) String() string { return time.Duration(*d).String() }
