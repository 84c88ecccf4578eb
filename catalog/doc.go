// Package catalog owns the model of catalog.yaml: strict loading with
// file:line:column errors, ${VAR} expansion inside decoded values, defaults in
// one place, and validation into read-only values that the rest of the
// gateway shares without locks.
//
// It imports nothing from this module. Enforcement (gates, upstream calls,
// rendering) lives in authz, proxy and rendering; this package only says
// what the operator declared and whether it is coherent.
//
// # Loading
//
// [Load] and [Parse] report every problem in one *[LoadError], each as
// "FILE:LINE:COLUMN: subject: rule", in file order:
//
//	catalog.yaml:16:7: field "methd" not found in tools[0].request (catalog.Request); did you mean "method"?
//	catalog.yaml:41:13: tool "cancel_job": placeholder {job_id} names no argument
//
// Where design/catalog.md is silent, the loader decides as follows.
//
//   - A catalog is one YAML document. Aliases are followed (within a budget
//     proportional to the file, so they cannot expand without bound); merge
//     keys (<<) are refused. A key written with a null value ("key:" or
//     "key: ~") counts as absent and takes its default; write "" for an
//     empty string, as in admin_path: "".
//   - ${NAME} and ${NAME:-default} expand inside every scalar value, never in
//     keys; as in POSIX shells the default also applies when NAME is set but
//     empty, and may hold ${...} itself. $$ is a literal $; a $ before
//     anything else is kept, so a regexp may end in $. Expanded text is not
//     expanded again.
//   - Booleans accept true/false, yes/no, on/off and 1/0 in any case, so a
//     flag can come from the environment. Numbers are decimal.
//   - Strings that mean nothing when empty (listen, mcp_path, principal
//     paths, kill_switch_env, methods, render) take their default when empty
//     as well as when absent; a written zero number or size is refused
//     rather than replaced. page_size: {max: N} alone makes the default
//     min(20, N). A not_found block without status maps 404.
//   - A gate lists at least one scope: the only gate that allows every
//     authenticated caller is an undeclared view.
//   - Tool names are unique across enabled and disabled tools, and disabled
//     tools are validated in full, so flipping a flag never makes a catalog
//     fail to load. limits.rate.per_tool may name a disabled tool.
//   - Input schemas are JSON Schema 2020-12 unless $schema names another
//     draft; format is asserted; $ref outside the schema is refused.
//     Tool.Schema treats nil arguments as {} and returns *[ArgumentError].
//   - Header names are RFC 9110 tokens, compared case-insensitively; Host,
//     Content-Length, Transfer-Encoding and Connection cannot be configured.
//     An upstream base_url may not carry credentials or an "@" (use
//     headers, or credentials chosen by workspace, [Credentials]). A GET or
//     HEAD request has no body. A path or probe path holds no query or
//     fragment; a probe path may use {workspace} ([Probe.PathTemplate]).
//   - A top-level property's JSON Schema default must pass the
//     property's schema ([Tool.Defaults]); {now}, {now.unix}, {now+ARG} and
//     {now-ARG} (optionally .unix) are computed times whose ARG is a declared
//     string argument ([TimeRef], [ParseTimeOffset]), so "now" and names
//     starting "now." or "now-" cannot be arguments; request.body_format is
//     json, form (a mapping of scalars or lists of them) or text (one
//     string); an upstream's workspace may be the scalar none, and when every
//     upstream says so the catalog is tenantless
//     ([Principal.WorkspaceOptional]).
//   - Tool names outside [A-Za-z0-9_-]{1,64} load with a warning
//     ([Catalog.Warnings]); outside [A-Za-z0-9_.-]{1,128} they are refused.
package catalog
