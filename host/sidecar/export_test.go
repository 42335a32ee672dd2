package sidecar

// AfterStartCheck makes r call f once the check of its worker id at start
// passed, before its first lease round: tests hold two readers there.
func AfterStartCheck(r *Reader, f func()) { r.afterCheck = f }
