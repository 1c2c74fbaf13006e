// Package catalog is oncelint's knowledge of libraries, as data keyed by identity: which
// functions and methods charge, email, message, push or call a paid model, which only
// read, which carry a request to the network, which retry, which return a value that
// differs on every call, and which frameworks call the application's code again.
//
// The built-in table is catalog.json, embedded. Functions are named by full identity as
// [go/types.Func.FullName] prints them ("(*net/http.Client).Do"), endpoints by URL.
// Nothing is guessed from a name: what the table does not name, and no declaration of the
// user names, is not an effect. [Load] adds the module root's oncelint.json and the files
// -catalog names, in the same format, where a project names its own clients. The format
// is documented in docs/catalog.md of the module's repository.
package catalog
