package dynamo

// MapError exposes mapError to the tests.
var MapError = mapError
