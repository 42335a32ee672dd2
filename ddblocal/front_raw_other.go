//go:build !linux

package ddblocal

import "io"

// rawIO is empty where the front does not run.
type rawIO struct{}

// connReader is what the front's buffered reader reads (the front runs
// on Linux only: elsewhere this is never called).
func (c *fastConn) connReader() io.Reader { return c.conn }

// writeAll writes b to the connection.
func (c *fastConn) writeAll(b []byte) error {
	_, err := c.conn.Write(b)
	return err
}
