package store

import "errors"

// ErrNotFound is returned by loaders when the row does not exist in the app.
var ErrNotFound = errors.New("not found")
