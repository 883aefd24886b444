package migrations

import (
	"reflect"
	"strings"
)

func modelType(model any) reflect.Type {
	return reflect.TypeOf(model).Elem()
}

func joinCols(cols []string) string {
	return strings.Join(cols, "_")
}
