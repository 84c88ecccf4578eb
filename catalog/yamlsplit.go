package catalog

import (
	"bytes"
	"io"
	"runtime"
	"sync"

	"gopkg.in/yaml.v3"
)

// A catalog of thousands of tools is mostly its top-level tools: block
// sequence, and yaml.v3 parses at one core's pace, which made the parse
// most of a large catalog's start. parseSplit parses that sequence in
// pieces on every core and splices them into the tree a whole parse makes.
//
// It only splits what it can read plainly: one "tools:" key at column 0
// with nothing after it but a comment, items that all start at the same
// indentation, no tabs at the start of a line, no document markers in the
// sequence, no directive (%TAG, %YAML) anywhere. Every piece is parsed
// on its own, and the rest of the file with the sequence's lines blanked
// (so line numbers hold), as one document. Any doubt, and any error
// anywhere, answers false: the caller parses the whole file, which gives
// the tree or the error it always did. An alias to an anchor in another
// piece is an error in its piece, so such a file is parsed whole too. FuzzParseSplit holds the result to a whole
// parse's, node for node (comments aside: the catalog reads none).

// splitMinBytes is the size below which a catalog is parsed whole: the
// pieces' goroutines are not worth it.
const splitMinBytes = 256 << 10

// parseSplit returns the document node a whole parse of data would, or
// false. parts is how many pieces to aim for.
func parseSplit(data []byte, parts int) (*yaml.Node, bool) {
	block, ok := findToolsBlock(data)
	if !ok || len(block.items) < 2 || parts < 2 {
		return nil, false
	}
	// Pieces of about equal bytes, each a run of whole items.
	var cuts []int // indices into block.items where a piece starts
	per := (block.end - block.items[0]) / parts
	next := block.items[0]
	for i, at := range block.items {
		if at >= next {
			cuts = append(cuts, i)
			next = at + per
		}
	}
	if len(cuts) < 2 {
		return nil, false
	}
	pieces := make([]*yaml.Node, len(cuts))
	var wg sync.WaitGroup
	var head *yaml.Node
	wg.Go(func() {
		// The rest of the file, the sequence's lines left empty.
		blank := bytes.Repeat([]byte{'\n'}, bytes.Count(data[block.items[0]:block.tail], []byte{'\n'}))
		head = parseOne(bytes.NewReader(data[:block.items[0]]), bytes.NewReader(blank), bytes.NewReader(data[block.tail:]))
	})
	for k, c := range cuts {
		from, last := block.items[c], k+1 == len(cuts)
		wg.Go(func() {
			// An empty value takes the position of the token after it,
			// so each piece ends where the whole file goes on: the last at
			// the next top-level key (or the end), the others with the
			// next item's dash, parsed as an item of its own and dropped.
			text, dash := data[from:block.tail], []byte(nil)
			if !last {
				text = data[from:block.items[cuts[k+1]]]
				dash = append(bytes.Repeat([]byte{' '}, block.indent), "-\n"...)
			}
			doc := parseOne(bytes.NewReader(text), bytes.NewReader(dash))
			if doc == nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
				return
			}
			seq := doc.Content[0]
			if !last {
				n := len(seq.Content)
				if n < 2 || !isNull(seq.Content[n-1]) || seq.Content[n-1].Line != bytes.Count(text, []byte{'\n'})+1 {
					return
				}
				seq.Content = seq.Content[:n-1]
			}
			if flowNull(seq, false) {
				return
			}
			shiftLines(seq, bytes.Count(data[:from], []byte{'\n'}), map[*yaml.Node]bool{})
			pieces[k] = seq
		})
	}
	wg.Wait()
	// A block sequence cannot stand in a flow mapping ("{\ntools:\n  -
	// ...\n}"), which a whole parse refuses; the head with the sequence
	// blanked out would parse.
	if head == nil || len(head.Content) != 1 || head.Content[0].Kind != yaml.MappingNode || head.Content[0].Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	seq := pieces[0]
	if seq == nil {
		return nil, false
	}
	for _, p := range pieces[1:] {
		if p == nil {
			return nil, false
		}
		seq.Content = append(seq.Content, p.Content...)
	}
	// The one tools key at column 0 is the one whose value was blanked.
	m := head.Content[0]
	spliced := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "tools" && k.Column == 1 && k.Line == block.keyLine {
			if !isNull(v) || v.Value != "" || spliced {
				return nil, false
			}
			m.Content[i+1] = seq
			spliced = true
		}
	}
	return head, spliced
}

// flowNull reports an empty value in a flow collection ("[a: ]"):
// yaml.v3 places it at a token it reads later, which may lie past the
// piece, where the whole file goes on otherwise (FuzzParseSplitItems
// found "- [0: ]" placed at its "]" in a piece and at the end of the
// file whole). Such a piece is not spliced; the whole parse places it.
func flowNull(n *yaml.Node, inFlow bool) bool {
	if n.Kind == yaml.ScalarNode {
		return inFlow && n.Value == "" && n.Tag == "!!null"
	}
	inFlow = inFlow || n.Style&yaml.FlowStyle != 0
	for _, c := range n.Content {
		if flowNull(c, inFlow) {
			return true
		}
	}
	return false
}

// parseOne parses its readers' bytes, one after the other, as exactly one
// YAML document, or returns nil.
func parseOne(parts ...io.Reader) (doc *yaml.Node) {
	defer func() {
		if recover() != nil {
			doc = nil
		}
	}()
	dec := yaml.NewDecoder(io.MultiReader(parts...))
	var d, extra yaml.Node
	if dec.Decode(&d) != nil || dec.Decode(&extra) != io.EOF {
		return nil
	}
	return &d
}

// toolsBlock is where the top-level tools sequence lies in a file.
type toolsBlock struct {
	keyLine int   // the line of "tools:", 1-based
	indent  int   // the items' indentation
	items   []int // the offset of each item's first line
	end     int   // the offset just past the sequence's last line
	tail    int   // the offset of the next top-level line, or the end
}

// findToolsBlock finds the tools sequence, when the file is plain enough
// to split; see parseSplit.
func findToolsBlock(data []byte) (toolsBlock, bool) {
	var b toolsBlock
	if oddBreaks(data) {
		return b, false
	}
	found, in := false, false
	indent := -1
	line := 0
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		end := len(data)
		if nl >= 0 {
			end = off + nl + 1
		}
		text := bytes.TrimRight(data[off:end], "\r\n")
		line++
		if len(text) > 0 && text[0] == '\t' {
			return b, false
		}
		if len(text) > 0 && text[0] == '%' {
			// A directive: %TAG holds for the whole document, and a piece
			// parsed without it would resolve its tags otherwise. (A '%'
			// at column 0 inside a multi-line scalar declines too.)
			return b, false
		}
		if in {
			lead := len(text) - len(bytes.TrimLeft(text, " "))
			rest := text[lead:]
			switch {
			case len(rest) == 0 || rest[0] == '#':
				// blank or a comment: part of whatever came before
			case (rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')) && (indent < 0 || lead == indent):
				if indent < 0 {
					indent = lead
				}
				b.items = append(b.items, off)
				b.end = end
			case lead > indent && indent >= 0:
				b.end = end // inside an item
			case lead == 0:
				in, b.tail = false, off // the next top-level key
				if rest[0] == '-' || bytes.HasPrefix(text, []byte("...")) {
					return b, false // a marker, or an item the sequence does not use
				}
			default:
				return b, false // an indentation the sequence does not use
			}
		}
		if !in && bytes.HasPrefix(text, []byte("tools:")) {
			after := bytes.TrimLeft(text[len("tools:"):], " ")
			if found || (len(after) > 0 && after[0] != '#') {
				return b, false // a second key, or a flow or scalar value
			}
			found, in, b.keyLine = true, true, line
		}
		off = end
	}
	if in {
		b.tail = len(data)
	}
	b.indent = max(indent, 0)
	return b, found && len(b.items) > 0
}

// oddBreaks reports a line break other than LF and CRLF (a lone CR, and
// NEL, LS and PS, which yaml.v3 also breaks at) or a byte order mark past
// the start: line numbers counted by LF alone would then be wrong.
func oddBreaks(data []byte) bool {
	for i := bytes.IndexByte(data, '\r'); i >= 0; {
		if i+1 >= len(data) || data[i+1] != '\n' {
			return true
		}
		j := bytes.IndexByte(data[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	for _, s := range []string{"\u0085", "\u2028", "\u2029"} {
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return len(data) > 3 && bytes.Contains(data[3:], []byte("\ufeff"))
}

// splitParts is how many pieces a large catalog is parsed in.
func splitParts() int { return 2 * runtime.GOMAXPROCS(0) }
