package main

import (
	"flag"
	"fmt"
)

// plural returns n and the noun, in the plural unless n is 1: "1 row",
// "2 rows", "0 rows". A noun whose plural is not noun+"s" passes it as
// the optional third word ("1 entry", "3 entries").
func plural(n int, noun string, plur ...string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	if len(plur) > 0 {
		return fmt.Sprintf("%d %s", n, plur[0])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// setUsage makes fs's help text, then its flags.
func setUsage(fs *flag.FlagSet, text string) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), text)
		fs.PrintDefaults()
	}
}

// flagsOnly refuses the positional arguments left after fs parsed the
// command line of a command that takes flags only, which would otherwise
// be ignored silently; hint, when set, says what was probably meant.
func flagsOnly(fs *flag.FlagSet, hint string) error {
	if fs.NArg() == 0 {
		return nil
	}
	if hint == "" {
		hint = fmt.Sprintf("host %s --help lists them", fs.Name())
	}
	return fmt.Errorf("unexpected arguments %q: host %s takes flags only (%s)", fs.Args(), fs.Name(), hint)
}
