package ddbclient

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// NewWireTo is a DynamoDB Wire to url through client, with the SDK's
// standard retryer (or retryer) and static credentials.
func NewWireTo(url string, client aws.HTTPClient, retryer aws.Retryer) *Wire {
	if retryer == nil {
		retryer = retry.NewStandard()
	}
	return newWire(dynamoDB, url, client, "us-east-1", credentials.NewStaticCredentialsProvider("a", "b", ""), retryer)
}

// OwnConns reports whether w sends on connections of its own.
func OwnConns(w *Wire) bool { return w.own != nil }

// Dials returns the connections w dialed of its own.
func Dials(w *Wire) int64 { return w.own.dials.Load() }

// IdleConns returns w's idle connections.
func IdleConns(w *Wire) int { return w.own.idleCount() }

// OpenConns returns w's connections open, idle or in use.
func OpenConns(w *Wire) int {
	w.own.mu.Lock()
	defer w.own.mu.Unlock()
	return w.own.total
}

// IdleConnClosed reports whether w's newest idle connection shows its
// end (the server closed it), without taking it.
func IdleConnClosed(w *Wire) bool {
	w.own.mu.Lock()
	defer w.own.mu.Unlock()
	return len(w.own.idle) > 0 && !w.own.idle[len(w.own.idle)-1].open()
}
