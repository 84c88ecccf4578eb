package catalog_test

import (
	"fmt"
	"strings"

	"github.com/mcpgw/gateway/catalog"
)

func ExampleParse() {
	const src = `
version: 1
server: { name: jobs }
auth: { api_keys_file: keys.yaml }
upstreams:
  monitor: { base_url: "${MONITOR_URL:-http://127.0.0.1:9090}" }
tools:
  - name: get_job
    description: One job by id.
    input:
      type: object
      properties: { job_id: { type: string } }
      required: [job_id]
      additionalProperties: false
    request: { upstream: monitor, path: "/v1/jobs/{job_id}" }
`
	env := func(string) (string, bool) { return "", false }
	c, err := catalog.Parse("catalog.yaml", []byte(src), &catalog.LoadOptions{Getenv: env})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := c.Tool("get_job")
	fmt.Println(c.Upstreams["monitor"].BaseURL)
	fmt.Println(t.Kind, t.Gate, t.Request.Method, t.Request.PathTemplate.Raw)
	fmt.Println(string(t.InputJSON))
	fmt.Println(t.Schema.Validate(map[string]any{"job_id": "j-1", "ws": "other"}))

	typo := strings.Replace(src, "{job_id}", "{jobid}", 1)
	_, err = catalog.Parse("catalog.yaml", []byte(typo), &catalog.LoadOptions{Getenv: env})
	fmt.Println(err)
	// Output:
	// http://127.0.0.1:9090
	// read view GET /v1/jobs/{job_id}
	// {"additionalProperties":false,"properties":{"job_id":{"type":"string"}},"required":["job_id"],"type":"object"}
	// unexpected argument "ws"
	// catalog.yaml:15:41: tool "get_job": placeholder {jobid} names no argument (did you mean "job_id"?)
}
