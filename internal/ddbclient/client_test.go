package ddbclient_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

func TestNewClient_EndpointFromEnvironmentWithStaticCredentials(t *testing.T) {
	ep := dynamotest.Endpoint(t)
	t.Setenv(ddbclient.EndpointEnv, ep)
	// No credentials anywhere: a loopback endpoint must not need them.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	c, err := ddbclient.NewClient(context.Background(), "", "")
	require.NoError(t, err)
	assert.Equal(t, ddbclient.DefaultLocalRegion, c.Options().Region)
	_, err = c.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	require.NoError(t, err, "the client reaches the endpoint named by %s", ddbclient.EndpointEnv)
}

func TestNewClient_RejectsAnEndpointThatIsNotAURL(t *testing.T) {
	_, err := ddbclient.NewClient(context.Background(), "127.0.0.1:8000", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "http://")
}
