package approvalpage

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
)

// view is what the template shows. Every value reaches the page through
// html/template, which escapes it for where it stands.
type view struct {
	Title  string
	Base   string
	Error  string
	Notice string
	Me     *authz.Principal
	CSRF   string
	Item   *item
	List   []*item
	Next   string // the cursor of the list's next page, or ""
}

// item is one approval as the page shows it.
type item struct {
	ID, Tool, Workspace, Requester, Actor, Approvers string
	Arguments                                        string // indented JSON as sent upstream, hidden text made visible (approval.Shown)
	Created, Expires, Decided                        string
	Status, Approver                                 string
	Pending, Self                                    bool
}

func (x *exchange) item(r *approval.Request, p *authz.Principal) *item {
	args := r.Arguments
	var b bytes.Buffer
	if json.Indent(&b, r.Arguments, "", "  ") == nil {
		args = b.Bytes()
	}
	// Hidden characters and long runs of spaces are shown, never applied:
	// the approver reads every character the upstream will get.
	it := &item{ID: r.ID, Tool: r.Tool, Workspace: approval.ShownText(r.Workspace), Requester: approval.ShownText(r.Requester),
		Actor: approval.ShownText(r.Actor), Approvers: r.Approvers, Arguments: approval.Shown(args),
		Created: stamp(r.Created), Expires: stamp(r.Expires), Decided: stamp(r.Decided),
		Status: string(r.StatusAt(x.now)), Approver: approval.ShownText(r.Approver), Self: approval.Decider{Subject: p.Subject, Actor: p.Actor}.Requested(r) && !r.AllowSelf}
	it.Pending = it.Status == string(approval.StatusPending)
	return it
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (pg *Page) render(w http.ResponseWriter, status int, v *view) {
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.Title}}</title>
<style>body{font:15px/1.4 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}
th{text-align:left;padding-right:1rem;vertical-align:top}pre{background:#f4f4f4;padding:.6rem;white-space:pre-wrap;overflow-wrap:anywhere}
.error{color:#a00}.notice{color:#060}button{font-size:1rem;margin-right:.6rem}</style></head>
<body>
<h1>{{.Title}}</h1>
{{with .Me}}<p id="me">Signed in as <b>{{.Subject}}</b>{{with .Workspace}} in workspace <b>{{.}}</b>{{end}}.</p>{{end}}
{{with .Error}}<p class="error" id="error">{{.}}</p>{{end}}
{{with .Notice}}<p class="notice" id="notice">Done: the approval is now {{.}}.</p>{{end}}
{{with .Item}}
<table id="call">
<tr><th>Tool</th><td id="tool">{{.Tool}}</td></tr>
{{with .Workspace}}<tr><th>Workspace</th><td id="workspace">{{.}}</td></tr>{{end}}
<tr><th>Arguments</th><td><pre id="arguments">{{.Arguments}}</pre></td></tr>
<tr><th>Requested by</th><td id="requester">{{.Requester}}{{if and .Actor (ne .Actor .Requester)}} ({{.Actor}}){{end}}</td></tr>
<tr><th>Requested at</th><td>{{.Created}}</td></tr>
<tr><th>Expires</th><td id="expires">{{.Expires}}</td></tr>
<tr><th>Approvers</th><td>whoever passes the <b>{{.Approvers}}</b> gate{{if .Workspace}} in this workspace{{end}}</td></tr>
<tr><th>Status</th><td id="status">{{.Status}}{{with .Approver}} by {{.}}{{end}}{{with .Decided}} at {{.}}{{end}}</td></tr>
</table>
{{if .Pending}}
{{if .Self}}<p class="error" id="self">You requested this call: someone else must decide it.</p>{{end}}
<p>Approving lets the requester's next call with these exact arguments run once. Nothing has been sent yet.</p>
<form method="post" action="{{$.Base}}/{{.ID}}/decide">
<input type="hidden" name="csrf" value="{{$.CSRF}}">
<button id="approve" name="decision" value="approve">Approve</button>
<button id="reject" name="decision" value="reject">Reject</button>
</form>
{{end}}
<p><a href="{{$.Base}}">All pending approvals</a></p>
{{end}}
{{if and .Me (not .Item) (not .Error)}}
{{if .List}}<ul id="list">{{range .List}}<li><a href="{{$.Base}}/{{.ID}}">{{.Tool}}</a> by {{.Requester}}, expires {{.Expires}}</li>{{end}}</ul>
{{if .Next}}<p><a id="next" href="{{$.Base}}?cursor={{.Next}}">Next page</a></p>{{end}}
{{else}}<p id="empty">Nothing awaits your approval.</p>{{end}}
{{end}}
</body></html>
`))
