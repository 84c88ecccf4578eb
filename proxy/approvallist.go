package proxy

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
)

// The approver's list comes in pages, so an answer stays small however
// many approvals a workspace holds (at most approval.max_pending of it).
// A cursor names the last approval of the page before (its creation time
// and id, the list's order), so approvals that are decided or added
// between pages shift nothing: a page starts after that approval.
const (
	// DefaultApprovalPageSize is a page's length when the caller does not
	// ask for one.
	DefaultApprovalPageSize = 50
	// MaxApprovalPageSize is the longest page a caller may ask for.
	MaxApprovalPageSize = 200
)

// ErrApprovalCursor is a cursor this gateway did not issue, or a page
// size outside 1…MaxApprovalPageSize.
var ErrApprovalCursor = fmt.Errorf("invalid cursor or limit: pass back the cursor of the page before as given, and a limit from 1 to %d", MaxApprovalPageSize)

const approvalCursorTag = "a1"

// PendingApprovalsPage returns a page of what [Core.PendingApprovals]
// lists, oldest first: at most limit approvals (0: the default) after
// cursor ("" for the first page), and the cursor of the next page, ""
// on the last.
func (c *Core) PendingApprovalsPage(ctx context.Context, p *authz.Principal, cursor string, limit int) ([]*approval.Request, string, error) {
	if limit == 0 {
		limit = DefaultApprovalPageSize
	}
	if limit < 1 || limit > MaxApprovalPageSize {
		return nil, "", ErrApprovalCursor
	}
	var after *approval.Request
	if cursor != "" {
		var ok bool
		if after, ok = decodeApprovalCursor(cursor); !ok {
			return nil, "", ErrApprovalCursor
		}
	}
	all, err := c.PendingApprovals(ctx, p)
	if err != nil {
		return nil, "", err
	}
	slices.SortFunc(all, compareApprovals)
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(all, after, compareApprovals)
		if start < len(all) && compareApprovals(all[start], after) == 0 {
			start++
		}
	}
	page := all[start:]
	if len(page) <= limit {
		return page, "", nil
	}
	page = page[:limit]
	return page, encodeApprovalCursor(page[len(page)-1]), nil
}

// compareApprovals orders approvals by creation, then id.
func compareApprovals(a, b *approval.Request) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func encodeApprovalCursor(r *approval.Request) string {
	raw := approvalCursorTag + "." + strconv.FormatInt(r.Created.UnixNano(), 10) + "." + r.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeApprovalCursor(s string) (*approval.Request, bool) {
	if len(s) > 128 {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	tag, rest, _ := strings.Cut(string(raw), ".")
	nanos, id, _ := strings.Cut(rest, ".")
	n, err := strconv.ParseInt(nanos, 10, 64)
	if tag != approvalCursorTag || err != nil || !approval.ValidID(id) {
		return nil, false
	}
	return &approval.Request{ID: id, Created: time.Unix(0, n)}, true
}
