// Package aws is a stub of aws-sdk-go-v2's aws package.
package aws

func String(v string) *string { return &v }

type Config struct{ Region string }
