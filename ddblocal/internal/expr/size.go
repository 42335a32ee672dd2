package expr

import (
	"encoding/base64"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// ItemSize is the item's size by DynamoDB's rules (attribute names +
// values), as used for the 400 KB item limit: strings and names count their
// UTF-8 bytes, binaries their bytes, numbers 1 byte per two significant
// digits plus 1, BOOL and NULL 1 byte, lists and maps 3 bytes plus 1 byte
// per element (plus the key names of a map), sets the sum of their members.
func ItemSize(item abi.Item) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v abi.Value) int { return ddbjson.ValueSize(v, numberSize) }

func numberSize(s string) int {
	if ip, fp, ok := plainNum(s); ok {
		return (plainSize(ip, fp)+1)/2 + 1
	}
	return slowNumberSize(s)
}

// plainDigits is decimal.digits for the digits of a plainInt: its
// significant digits, trailing zeros not counted.
func plainDigits(x string) int {
	return len(strings.TrimRight(x, "0"))
}

func slowNumberSize(s string) int {
	d, ok := parseDecimal(s)
	if !ok {
		return len(s)
	}
	return (d.digits()+1)/2 + 1
}

// ValidateValue checks a value from a request, recursively: nesting at most
// 32 levels, numbers valid
// (DynamoDB's limits), sets neither empty nor with duplicates, NS members
// valid numbers. Empty strings and binaries are allowed (key attributes are
// the server's to check). It returns a ValidationException with DynamoDB's
// message.
func ValidateValue(v abi.Value) error {
	if depth(v) > maxNesting {
		return apierr.Validation("%s", msgNesting)
	}
	return validateValue(v)
}

// maxNesting is DynamoDB's limit on document nesting: the attribute itself
// is level 1, and a scalar may sit at level 32 at the deepest.
const maxNesting = 32

const msgNesting = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"

// depth is the nesting level of v: 1 for a scalar or an empty container,
// 1 more than its deepest element for a list or map.
func depth(v abi.Value) int {
	d := 0
	switch v.Kind {
	case abi.KindL:
		for _, e := range v.List {
			d = max(d, depth(e))
		}
	case abi.KindM:
		for _, e := range v.Map {
			d = max(d, depth(e))
		}
	}
	return d + 1
}

// CheckNesting returns DynamoDB's ValidationException when an attribute of
// item is nested more than 32 levels deep (for items an update produced).
func CheckNesting(item abi.Item) error {
	for _, v := range item {
		if depth(v) > maxNesting {
			return apierr.Validation("%s", msgNesting)
		}
	}
	return nil
}

func validateValue(v abi.Value) error {
	const prefix = "One or more parameter values were invalid: "
	switch v.Kind {
	case abi.KindInvalid:
		return apierr.Validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
	case abi.KindN:
		if _, ok := plainInt(v.Str); ok {
			return nil // at most 38 digits: within every limit
		}
		_, err := parseChecked(v.Str)
		return err
	case abi.KindSS:
		if len(v.Strs) == 0 {
			return apierr.Validation(prefix + "An string set  may not be empty")
		}
		seen := map[string]bool{}
		for _, s := range v.Strs {
			if seen[s] {
				return apierr.Validation(prefix+"Input collection %s contains duplicates.", listDesc(v.Strs))
			}
			seen[s] = true
		}
	case abi.KindNS:
		if len(v.Strs) == 0 {
			return apierr.Validation(prefix + "An number set  may not be empty")
		}
		seen := map[string]bool{}
		for _, s := range v.Strs {
			if _, err := parseChecked(s); err != nil {
				return err
			}
			k := numberKey(s)
			if seen[k] {
				return apierr.Validation("Input collection contains duplicates")
			}
			seen[k] = true
		}
	case abi.KindBS:
		if len(v.Blobs) == 0 {
			return apierr.Validation(prefix + "Binary sets should not be empty")
		}
		seen := map[string]bool{}
		for _, b := range v.Blobs {
			if seen[string(b)] {
				return apierr.Validation(prefix+"Input collection %sof type BS contains duplicates.", blobsDesc(v.Blobs))
			}
			seen[string(b)] = true
		}
	case abi.KindL:
		for _, e := range v.List {
			if err := validateValue(e); err != nil {
				return err
			}
		}
	case abi.KindM:
		for _, k := range sortedKeys(v.Map) {
			if err := validateValue(v.Map[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

func listDesc(s []string) string {
	out := "["
	for i, e := range s {
		if i > 0 {
			out += ", "
		}
		out += e
	}
	return out + "]"
}

func blobsDesc(bs [][]byte) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = base64Std(b)
	}
	return listDesc(s)
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
