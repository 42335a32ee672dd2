package dynamo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// ErrInvalidValue is matched by a conversion error: an abi.Value with no
// DynamoDB type, or an attribute value of a type this package does not know.
var ErrInvalidValue = ddbclient.ErrInvalidValue

// throttleCodes are the error codes DynamoDB answers when it throttles.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"Throttling":                             true,
	"RequestLimitExceeded":                   true,
}

// mapError turns an SDK error into one the engine can match with errors.Is /
// errors.As (store.ErrConditionFailed, *store.TxCanceledError,
// store.ErrThrottled, store.ErrConflict), keeping the original error wrapped
// as well.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("dynamo %s: %w: %w", op, store.ErrConditionFailed, err)
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		reasons := make([]string, len(tce.CancellationReasons))
		for i, r := range tce.CancellationReasons {
			reasons[i] = "None"
			if r.Code != nil {
				reasons[i] = *r.Code
			}
		}
		return fmt.Errorf("dynamo %s: %w: %w", op, &store.TxCanceledError{Reasons: reasons}, err)
	}
	var tcf *types.TransactionConflictException
	if errors.As(err, &tcf) {
		return fmt.Errorf("dynamo %s: %w: %w", op, store.ErrConflict, err)
	}
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return fmt.Errorf("dynamo %s: %w: the table does not exist at this endpoint and region (or is not active yet); create the configuration's tables with `host tables create --config FILE`, or check the table names, endpoint and region: %w", op, &store.NoTableError{Table: tableOf(op)}, err)
	}
	if ue, ok := ddbclient.Unreachable(err); ok {
		return fmt.Errorf("dynamo %s: %w", op, ue)
	}
	var api smithy.APIError
	if errors.As(err, &api) && throttleCodes[api.ErrorCode()] {
		return fmt.Errorf("dynamo %s: %w: %w", op, store.ErrThrottled, err)
	}
	return fmt.Errorf("dynamo %s: %w", op, err)
}

// tableOf is the table an operation's name ("GetItem on T", "DescribeTable
// T") names; "" for one that names none (a transaction).
func tableOf(op string) string {
	if _, t, ok := strings.Cut(op, " on "); ok {
		op = t
	} else if _, t, ok := strings.Cut(op, " "); ok {
		op = t
	} else {
		return ""
	}
	t, _, _ := strings.Cut(op, " ")
	return t
}
