package ddblocal

import "github.com/dynafold/dynafold/internal/sockpeek"

// frontSupported: the front peeks at its connections (sockpeek, Linux);
// elsewhere net/http serves every connection.
const frontSupported = sockpeek.Supported
