package openapi

import (
	"encoding/json"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"
)

// maxValueBytes bounds a default, example or enum value carried over.
const maxValueBytes = 2048

// jsonValue normalises v to what encoding/json decodes (maps, slices,
// strings, float64, bools, nil), or false when it has no small JSON form.
func jsonValue(v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil || len(b) > maxValueBytes {
		return nil, false
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil, false
	}
	return out, true
}

func jsonValues(vs []any) ([]any, bool) {
	out := make([]any, 0, len(vs))
	for _, v := range vs {
		x, ok := jsonValue(v)
		if !ok {
			return nil, false
		}
		out = append(out, x)
	}
	return out, true
}

// The output is built as yaml.Node trees so that keys keep a fixed order
// and guesses carry comments.

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		add(n, kv[i].(string), kv[i+1])
	}
	return n
}

// add appends key: v to mapping m; v is a *yaml.Node or a plain value.
// It returns the node that comments should go on: the value when it is a
// scalar (a line comment after it), the key otherwise (yaml.v3 would
// place a comment on a mapping value inside it).
func add(m *yaml.Node, key string, v any) *yaml.Node {
	val, ok := v.(*yaml.Node)
	if !ok {
		val = valueNode(v)
	}
	k := str(key)
	m.Content = append(m.Content, k, val)
	if val.Kind == yaml.ScalarNode || val.Style == yaml.FlowStyle {
		return val
	}
	return k
}

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	return n
}

// valueNode turns a JSON-like value into a node, maps with sorted keys.
func valueNode(v any) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case string:
		return str(x)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}
	case uint64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(x, 10)}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(x), 10)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(x, 'g', -1, 64)}
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, e := range x {
			n.Content = append(n.Content, str(e))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		flow := true
		for _, e := range x {
			c := valueNode(e)
			if c.Kind != yaml.ScalarNode {
				flow = false
			}
			n.Content = append(n.Content, c)
		}
		if flow {
			n.Style = yaml.FlowStyle
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, str(k), valueNode(x[k]))
		}
		return n
	case map[string]string:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, str(k), str(x[k]))
		}
		return n
	case *yaml.Node:
		return x
	}
	b, _ := json.Marshal(v)
	var y any
	_ = json.Unmarshal(b, &y)
	return valueNode(y)
}
