package host

import "github.com/dynafold/dynafold/host/logic"

// ErrPluginOutput is matched by the error of a row whose plugin returned
// an item or an effect that DynamoDB would refuse (a number it cannot
// store, an empty or duplicated set, an empty attribute name, nesting
// deeper than 32 levels, an item over 400 KB) or whose key attributes are
// not the row's. The row fails before anything is written, and its records
// are delivered again. errors.As with *logic.OutputError gives the
// projection, the plugin version, the event, the attribute path and the
// problem.
var ErrPluginOutput = logic.ErrOutput
