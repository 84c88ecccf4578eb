package catalog

import (
	"reflect"

	"gopkg.in/yaml.v3"
)

var workspaceBindingType = reflect.TypeFor[WorkspaceBinding]()

// decodeWorkspaceNone decodes an upstream's workspace written as a scalar:
// only "none" is one; the mapping form is decoded as any struct.
func (d *decoder) decodeWorkspaceNone(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a mapping {header: NAME} or {query: NAME}, or none")
	if !ok {
		return
	}
	if s != WorkspaceNone {
		d.p.add(nodePos(n), "%s: want a mapping {header: NAME} or {query: NAME}, or none, got %s", d.where(path), d.shown(n, s))
		return
	}
	w := v.Addr().Interface().(*WorkspaceBinding)
	w.Meta = Meta{Pos: nodePos(n), Keys: map[string]Pos{}}
	w.None = true
}
