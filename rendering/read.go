package rendering

import "io"

// ReadUpTo reads r to its end, or to limit bytes, whichever comes first;
// length, when not negative, is the length the sender declared, and sizes
// the buffer once instead of letting it double its way up (it never sizes
// it beyond limit). It is the module's one bounded read loop: upstream
// answers in proxy, request bodies in mcp. The error is r's, with the
// bytes read before it.
func ReadUpTo(r io.Reader, limit, length int64) ([]byte, error) {
	size := int64(512)
	if length >= 0 {
		size = min(length+1, limit)
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
