package catalog

// Caps on pending four-eyes approvals (approval.max_pending): each
// pending approval keeps a call's arguments in the approval store until
// it is decided or expires, so without a cap one caller could fill the
// store (and the disk beside the audit trail) and slow every tenant.
const (
	DefaultMaxPendingPerRequester = 20
	DefaultMaxPendingPerWorkspace = 200
)

// ApprovalSettings is the catalog-wide approval section, the top-level
// approval key (a tool's own approval says whether its calls need one).
type ApprovalSettings struct {
	Meta       `yaml:"-"`
	MaxPending MaxPending `yaml:"max_pending"`
}

// MaxPending caps the approvals pending at once: per requester (a
// subject, within a workspace) and per workspace. A call beyond a cap is
// refused, and nothing is stored or sent.
type MaxPending struct {
	Meta         `yaml:"-"`
	PerRequester int `yaml:"per_requester"` // default DefaultMaxPendingPerRequester
	PerWorkspace int `yaml:"per_workspace"` // default DefaultMaxPendingPerWorkspace
}

func approvalSettingsDefaults(c *Catalog) {
	m := &c.ApprovalSettings.MaxPending
	if !m.Has("per_requester") {
		m.PerRequester = DefaultMaxPendingPerRequester
	}
	if !m.Has("per_workspace") {
		m.PerWorkspace = DefaultMaxPendingPerWorkspace
	}
}

// approvalSettings checks the caps: at least 1 each, the requester's no
// larger than the workspace's.
func (v *checker) approvalSettings() {
	m := &v.c.ApprovalSettings.MaxPending
	outer := first(v.c.ApprovalSettings.At("max_pending"), v.c.At("approval"))
	const subj = "approval.max_pending"
	if m.PerRequester < 1 {
		v.add(at(m.Meta, "per_requester", outer), subj, "per_requester must be at least 1, got %d", m.PerRequester)
	}
	if m.PerWorkspace < 1 {
		v.add(at(m.Meta, "per_workspace", outer), subj, "per_workspace must be at least 1, got %d", m.PerWorkspace)
	}
	if m.PerRequester > m.PerWorkspace && m.PerWorkspace >= 1 {
		v.add(at(m.Meta, "per_requester", outer), subj, "per_requester (%d) must not exceed per_workspace (%d)", m.PerRequester, m.PerWorkspace)
	}
}
