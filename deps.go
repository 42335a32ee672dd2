//go:build tools

// Package tools pins the project's dependencies in go.mod before every one of
// them is imported by code; it is never built.
package tools

import (
	_ "github.com/aws/aws-lambda-go/events"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/credentials"
	_ "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	_ "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	_ "github.com/extism/go-sdk"
	_ "github.com/stretchr/testify/require"
	_ "github.com/tetratelabs/wazero"
	_ "go.etcd.io/bbolt"
)
