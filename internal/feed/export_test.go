package feed

// BackoffAfter is backoff, for the tests.
var BackoffAfter = backoff
