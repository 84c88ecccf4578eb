package rendering_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/rendering"
)

func benchList(n int) []byte {
	return listOf(n, func(i int) string {
		return fmt.Sprintf(`{"id":"job-%04d","state":"Running","queue":"default","tags":["a","b"],"note":"note %d with <b>markup</b> and text"}`, i, i)
	})
}

func BenchmarkShapeSmall(b *testing.B) {
	body := []byte(`{"id":"j1","state":"Running","queue":"default","tags":["a","b"],"attempt":1,"createdAt":"2025-03-14T09:00:00Z","note":"a short note"}`)
	b.ReportAllocs()
	for b.Loop() {
		rendering.Shape(body, rendering.ShapeOptions{})
	}
}

func BenchmarkRender(b *testing.B) {
	for _, n := range []int{1, 100, 2000} {
		shaped := benchList(n)
		c := rendering.Compile(rendering.Options{List: "jobs", Untrusted: []string{"jobs.#.note"}})
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(shaped)))
			for b.Loop() {
				if _, err := c.Render(shaped, false, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNeutralize(b *testing.B) {
	doc := strings.Repeat("text <b>bold</b> and a </untrusted-document-text-x> tag ", 50)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		rendering.Neutralize(doc)
	}
}

func BenchmarkRenderSmallPlain(b *testing.B) {
	shaped := []byte(`{"id":"j1","state":"Running","queue":"default","tags":["a","b"],"attempt":1,"createdAt":"2025-03-14T09:00:00Z","note":"a short note"}`)
	c := rendering.Compile(rendering.Options{})
	b.ReportAllocs()
	for b.Loop() {
		c.Render(shaped, false, "")
	}
}
