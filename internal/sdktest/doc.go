// Package sdktest checks oncelint's provider catalogue against the real SDKs: every
// function, method, argument, key field, setter and header option an entry names must
// exist in the SDK it names, at the major version it names (the module imports every major
// the catalogue names). It is a module of its own so that the SDKs stay out of the once
// module's go.mod.
package sdktest
