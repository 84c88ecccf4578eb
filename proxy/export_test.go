package proxy

// Healthy reports whether the trail's last record was written. Only
// tests ask; the gateway learns it through AuditObserver.AuditHealthy.
func (t *AuditTrail) Healthy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.failing
}
