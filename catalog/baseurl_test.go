package catalog

import (
	"strings"
	"testing"
)

// A base_url that holds credentials is refused whatever its password
// holds, and the message quotes no part of it: a URL parser reading
// "app:1234/5@host" finds host "app", port 1234 and a path, and would
// otherwise send every request elsewhere.
func TestBaseURLWithCredentialsIsRefusedWithoutQuotingThem(t *testing.T) {
	for _, pass := range []string{"s3cr/et", "s3cr?et", "s3cr#et", "s3cr@et", "1234/5s3cret", "s3cret"} {
		t.Run(pass, func(t *testing.T) {
			src := strings.Replace(base, `base_url: "http://127.0.0.1:1"`, `base_url: "${SVC_URL}"`, 1)
			src += "  - { name: a, description: A., request: { upstream: svc, path: /a } }\n"
			_, err := Parse("c.yaml", []byte(src), &LoadOptions{Getenv: func(k string) (string, bool) {
				return "http://app:" + pass + "@127.0.0.1:1/", k == "SVC_URL"
			}})
			if err == nil || !strings.Contains(err.Error(), `upstream "svc": base_url`) {
				t.Fatalf("Parse = %v, want base_url refused", err)
			}
			if strings.Contains(err.Error(), "s3cr") || strings.Contains(err.Error(), "1234") {
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
}
