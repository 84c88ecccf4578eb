// Package openapi turns an OpenAPI document (3.0, 3.1 or Swagger 2.0, YAML
// or JSON) into catalog fragments, and checks a loaded catalog against a
// document.
//
// It owns reading the document ([Read]), mapping operations to tools
// ([Import]) and the static cross-check ([Check]). It leaves loading and
// validating catalogs to package catalog, and calling upstreams to proxy.
//
// Documents are operator input and often messy: Read refuses remote and
// file $refs (it never fetches anything), recovers from parser panics, and
// the mapping bounds recursion depth, description and enum sizes, so an
// import never panics or hangs; what it cannot map it reports as a
// [Skipped] operation with the reason.
package openapi
