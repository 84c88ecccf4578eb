// Package openapi turns an OpenAPI document (3.0, 3.1 or Swagger 2.0, YAML
// or JSON) into catalog fragments, and checks a loaded catalog against a
// document.
//
// It owns reading the document ([Read]), mapping operations to tools
// ([Import]) and the static cross-check ([Check]). It leaves loading and
// validating catalogs to package catalog, and calling upstreams to proxy.
//
// Documents are operator input and often messy, or hostile: Read never
// fetches anything (a $ref to another file or a URL, or to nothing, is
// marked, and only the operations that need it are skipped), recovers from
// parser panics, and the mapping bounds recursion depth, schema nodes (per
// schema and per import), description and enum sizes, so an import never
// panics, hangs or grows without bound; what it cannot map it reports as a
// [Skipped] operation with the reason. [ReadContext] and [ImportContext]
// stop when their context ends.
package openapi
