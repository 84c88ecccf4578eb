package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/approvalpage"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// approvalStoreEnv names where approvals live: redis://… for a
// store shared by replicas, file:PATH for the embedded one; unset, the
// file approvals.json beside audit.path, or memory without an audit path.
const approvalStoreEnv = "GATEWAY_APPROVAL_STORE"

// approvalsFor returns the approvals the cores share, made on the first
// install: the store and the sealing keys are process settings, so a
// reload keeps them (pending approvals survive it).
func (rt *runtime) approvalsFor(cat *catalog.Catalog) (*proxy.Approvals, error) {
	if rt.approvals != nil {
		return rt.approvals, nil
	}
	a := &proxy.Approvals{}
	keys := rt.env.get(approval.KeysEnv)
	var sealKeys [][]byte
	if keys == "" {
		sealKeys = [][]byte{approval.RandomKey()}
		if needsConfirm(cat) {
			rt.logger.Warn("no "+approval.KeysEnv+": confirmations are sealed with a key of this process only, so a retry served by another replica is refused", "env", approval.KeysEnv)
		}
	} else {
		var err error
		if sealKeys, err = approval.ParseKeys(keys); err != nil {
			return nil, err
		}
	}
	s, err := approval.NewSealer(sealKeys...)
	if err != nil {
		return nil, err
	}
	a.Sealer = s
	where := rt.env.get(approvalStoreEnv)
	switch {
	case strings.HasPrefix(where, "redis://"), strings.HasPrefix(where, "rediss://"), strings.HasPrefix(where, "unix://"):
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if a.Store, err = approval.OpenRedisStore(ctx, where, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", approvalStoreEnv, err)
		}
	case strings.HasPrefix(where, "file:"):
		if a.Store, err = approval.OpenFileStore(strings.TrimPrefix(where, "file:")); err != nil {
			return nil, fmt.Errorf("%s: %w", approvalStoreEnv, err)
		}
	case where != "":
		return nil, fmt.Errorf("%s: %q is neither redis://HOST:PORT/DB nor file:PATH", approvalStoreEnv, where)
	case cat.Audit.Path != "":
		if a.Store, err = approval.OpenFileStore(filepath.Join(filepath.Dir(cat.Audit.Path), "approvals.json")); err != nil {
			return nil, err
		}
	default:
		a.Store, _ = approval.OpenFileStore("")
		if needsApproval(cat) {
			rt.logger.Warn("approvals are kept in memory (no audit.path and no " + approvalStoreEnv + "): pending approvals are lost on restart")
		}
	}
	rt.approvals = a
	return a, nil
}

func needsConfirm(cat *catalog.Catalog) bool {
	for _, t := range cat.Tools {
		if t.Approval != nil && t.Approval.Confirm {
			return true
		}
	}
	return false
}

func needsApproval(cat *catalog.Catalog) bool {
	for _, t := range cat.Tools {
		if t.Approval != nil {
			return true
		}
	}
	return false
}

// approvalPage hands the mcp handler the approval page. The page uses the
// core and the core's surface serves it; wiring it here keeps the imports
// pointing one way (mcp does not import approvalpage). One page serves
// every catalog a reload installs: it caches each provider's discovery.
type approvalPage struct{ page approvalpage.Page }

func (a *approvalPage) Handles(core *proxy.Core, r *http.Request, rest string) bool {
	return approvalpage.Handles(core.Config().Approvals.Page, r, rest)
}

func (a *approvalPage) Serve(w http.ResponseWriter, r *http.Request, req *mcp.PageRequest) {
	a.page.Serve(w, r, &approvalpage.Request{Core: req.Core, Rest: req.Rest, Context: req.Context, Guard: req.Guard, Log: req.Log})
}
