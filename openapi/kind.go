package openapi

import (
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// A read needs no write gate, so a read the import decides on its own
// is published to every caller who may view. The decision goes, first
// match wins:
//
//  1. --reads: the operator said so (any method).
//  2. x-mcp-kind: write on any operation; x-mcp-kind: read on GET, HEAD
//     or POST. The document is untrusted: its word alone never turns a
//     PUT, PATCH or DELETE into an ungated read.
//  3. GET and HEAD are reads.
//  4. A POST named like a query (its last path segment or its
//     operationId ends in filter, search, query, count or list, no
//     word of either, nor of a query written into its path, is a write
//     verb, and the path ends in no parameter but one a custom method
//     follows, /v1/{parent}:search) is a read, marked as a guess.
//  5. Everything else is a write.

// queryWords end the name of a POST that only reads (POST /flow_runs/filter,
// POST /deployments/count, POST /api/v1/query).
var queryWords = []string{"filter", "search", "query", "count", "list"}

// writeVerbs in a name make a POST a write whatever its last word:
// POST /things/delete_by_filter deletes, POST /lists/createList creates,
// POST /repositories/{r}/reindex-search rebuilds an index, POST
// /answerCallbackQuery answers. A verb missing here lets a write that
// ends in a query word pass for an ungated read, so the list errs long,
// less the verbs that are as often the thing listed: block
// (ContractBlockHourFactors/query), sync (sync-jobs-list) and transfer
// (Plaid's /transfer/list).
var writeVerbs = []string{
	"abort", "accept", "acknowledge", "activate", "add", "answer", "apply", "approve", "archive", "assign",
	"attach", "cancel", "capture", "charge", "clear", "close", "configure", "confirm", "copy", "create",
	"deactivate", "decline", "delete", "deny", "deploy", "deprovision", "destroy", "detach", "disable",
	"dismiss", "downgrade", "drop", "edit", "enable", "execute", "generate", "grant", "import", "insert",
	"install", "invite", "kill", "like", "lock", "merge", "modify", "move", "patch", "pause", "provision",
	"publish", "purge", "put", "rebuild", "recalculate", "recover", "refresh", "refund", "regenerate",
	"register", "reindex", "reject", "remove", "reopen", "reorder", "replace", "reply", "rerun", "rescan", "reset",
	"resolve", "restart", "restore", "resume", "retry", "revert", "revoke", "rollback", "rotate", "run",
	"save", "send", "set", "start", "stop", "submit", "subscribe", "suspend", "terminate",
	"trigger", "unarchive", "unblock", "undo", "uninstall", "unlike", "unlock", "unpublish",
	"unregister", "unsubscribe", "update", "upgrade", "upload", "upsert", "void", "write",
}

// readPattern is one --reads pattern: a method ("*" for any) and a
// path.Match pattern over the document's path.
type readPattern struct {
	raw, method, path string
}

// parseReads checks the --reads patterns: each is "METHOD PATH".
func parseReads(raw []string) ([]readPattern, error) {
	var out []readPattern
	for _, r := range raw {
		method, p, ok := strings.Cut(strings.TrimSpace(r), " ")
		p = strings.TrimSpace(p)
		method = strings.ToUpper(method)
		if !ok || !strings.HasPrefix(p, "/") || (method != "*" && !slices.Contains(methods, method)) {
			return nil, fmt.Errorf("--reads %q: want METHOD /path, the method one of %s or *, the path a glob like /*/filter", r, strings.Join(methods, " "))
		}
		if _, err := path.Match(p, "/"); err != nil {
			return nil, fmt.Errorf("--reads %q: bad path pattern: %v", r, err)
		}
		out = append(out, readPattern{raw: strings.TrimSpace(r), method: method, path: p})
	}
	return out, nil
}

func (rp readPattern) match(method, p string) bool {
	if rp.method != "*" && rp.method != method {
		return false
	}
	ok, _ := path.Match(rp.path, p)
	return ok
}

// kindOf decides whether an operation is imported as a read or a write,
// and says why in the comment the kind line carries. p is the path as the
// document writes it, with any query or fragment in it.
func (im *importer) kindOf(method, p string, op *openapi3.Operation) (kind, why string) {
	for _, rp := range im.reads {
		if rp.match(method, p) {
			return "read", fmt.Sprintf("from --reads %q", rp.raw)
		}
	}
	ext, _ := op.Extensions["x-mcp-kind"].(string)
	switch ext = strings.ToLower(strings.TrimSpace(ext)); {
	case ext == "write":
		return "write", "from x-mcp-kind"
	case ext == "read" && (method == http.MethodGet || method == http.MethodHead || method == http.MethodPost):
		return "read", "from x-mcp-kind"
	case method == http.MethodGet || method == http.MethodHead:
		return "read", "from the method " + method
	case ext == "read":
		return "write", fmt.Sprintf("from the method %s (x-mcp-kind: read is taken only for GET, HEAD and POST)", method)
	case method == http.MethodPost:
		if _, q := cutPathQuery(p); !writeWord(q) {
			if w := queryName(p, op.OperationID); w != "" {
				return "read", "guess: a query (" + w + ")"
			}
		}
	}
	return "write", "from the method " + method
}

// cutPathQuery splits what a document wrote as a path at its first "?"
// or "#": "/search?method=photos.delete" is the path /search, sending
// method=photos.delete.
func cutPathQuery(p string) (path, query string) {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

// writeWord reports whether text holds a write verb among its words.
func writeWord(text string) bool {
	for _, part := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune("&=#?/", r) }) {
		for _, w := range strings.Split(snake(part), "_") {
			if slices.Contains(writeVerbs, w) {
				return true
			}
		}
	}
	return false
}

// queryName says why a POST reads like a query ("its path ends in
// filter"), or "" when it does not.
func queryName(p, operationID string) string {
	p, _ = cutPathQuery(p)
	segs := strings.Split(strings.Trim(p, "/"), "/")
	last := segs[len(segs)-1]
	if strings.HasPrefix(last, "{") {
		// A POST to a resource the path names changes it, whatever its
		// operationId ends in (Stripe's PostRadarValueListsValueList
		// updates a value list), unless a custom method follows the
		// parameter, as Google's APIs write it: /v1/{parent}:search.
		_, method, ok := strings.Cut(last, "}:")
		if !ok {
			return ""
		}
		last = method
	}
	pathWords := strings.Split(snake(last), "_")
	idWords := strings.Split(snake(operationID), "_")
	for _, w := range slices.Concat(pathWords, idWords) {
		if slices.Contains(writeVerbs, w) {
			return ""
		}
	}
	if w := pathWords[len(pathWords)-1]; slices.Contains(queryWords, w) {
		return "its path ends in " + w
	}
	if w := idWords[len(idWords)-1]; slices.Contains(queryWords, w) {
		return "its operationId ends in " + w
	}
	return ""
}
