package ddblocal

import (
	"regexp"
	"testing"
)

// TestY8_HeadValueCheckAsByteByByte: the eight-bytes-at-a-time check of a
// header value agrees with the byte-by-byte one for every byte value at
// every place of values of every length up to 24, among printable bytes
// and among bytes at 0x80 and over.
func TestY8_HeadValueCheckAsByteByByte(t *testing.T) {
	for _, fill := range []byte{'a', '~', ' ', 0x80, 0xff, '\t'} {
		for n := 1; n <= 24; n++ {
			for at := range n {
				for c := range 256 {
					v := make([]byte, n)
					for i := range v {
						v[i] = fill
					}
					v[at] = byte(c)
					if got, want := plainValue(v), plainBytes(v); got != want {
						t.Fatalf("plainValue(%q) = %v, byte by byte %v", v, got, want)
					}
				}
			}
		}
	}
}

// TestY8_TableNameCharsAsTheRegexp: the table-name character check
// answers as the regexp it replaces.
func TestY8_TableNameCharsAsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)
	names := []string{"", "a", "Table_1.x-y", "a b", "a\n", "\na", "é", "a\xff", "abc$", "ab/c", "A-Z.0_9", "a\x00"}
	for c := range 256 {
		names = append(names, "ab"+string(rune(c)), "ab"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := tableNameChars(n), re.MatchString(n); got != want {
			t.Errorf("tableNameChars(%q) = %v, the regexp %v", n, got, want)
		}
	}
}
