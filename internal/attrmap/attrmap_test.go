package attrmap

// B4: a record whose image does not decode is reported with what failed;
// the converters say which attribute.

import (
	"errors"
	"strconv"
	"testing"
)

func TestB4_ConvertNamesTheFailingAttribute(t *testing.T) {
	got, err := Convert(map[string]string{"a": "1", "b": "22"}, strconv.Atoi)
	if err != nil || len(got) != 2 || got["a"] != 1 || got["b"] != 22 {
		t.Fatalf("Convert = %v, %v", got, err)
	}
	if got, err := Convert[string, int](nil, strconv.Atoi); got != nil || err != nil {
		t.Fatalf("nil map: %v, %v", got, err)
	}
	_, err = Convert(map[string]string{"price": "x"}, strconv.Atoi)
	var ne *strconv.NumError
	if err == nil || !errors.As(err, &ne) || err.Error() != `attribute "price": strconv.Atoi: parsing "x": invalid syntax` {
		t.Fatalf("error = %v", err)
	}
}
