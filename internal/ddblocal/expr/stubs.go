package expr

import "github.com/dynafold/dynafold/abi"

// Update is a parsed UpdateExpression.
type Update struct{}

// ParseUpdate parses an UpdateExpression.
func ParseUpdate(src string, p *Params) (*Update, error) { panic("todo") }

// Apply returns the item after the update.
func (u *Update) Apply(item abi.Item) (abi.Item, error) { panic("todo") }

// Paths returns the document paths the update sets or removes.
func (u *Update) Paths() []Path { panic("todo") }

// Projection is a parsed ProjectionExpression.
type Projection struct{}

// ParseProjection parses a ProjectionExpression.
func ParseProjection(src string, p *Params) (*Projection, error) { panic("todo") }

// Apply returns the projection of item.
func (p *Projection) Apply(item abi.Item) abi.Item { panic("todo") }

// Select returns the parts of item at paths.
func Select(item abi.Item, paths []Path) abi.Item { panic("todo") }

// ItemSize is the item's size by DynamoDB's rules.
func ItemSize(item abi.Item) int { panic("todo") }

// ValidateValue checks a value from a request.
func ValidateValue(v abi.Value) error { panic("todo") }
