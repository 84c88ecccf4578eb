package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/oauthserver"
)

// oauthStoreEnv names where the authorization server keeps its state
// (auth.oauth_server): redis://… for a store shared by replicas,
// file:PATH for the embedded one. Unset: the approval store's Redis when
// that is Redis, else the file oauth.json beside audit.path, else memory.
const oauthStoreEnv = "GATEWAY_OAUTH_STORE"

// oauthServerFor builds the authorization server cat describes, or nil.
// The store and the keys are process settings made on first use, so a
// reload keeps sign-ins, codes and refresh tokens, and tokens stay valid.
func (rt *runtime) oauthServerFor(cat *catalog.Catalog) (*oauthserver.Server, error) {
	if cat.Auth.OAuthServer == nil {
		return nil, nil
	}
	if rt.oauthStore == nil {
		s, err := rt.openOAuthStore(cat)
		if err != nil {
			return nil, err
		}
		rt.oauthStore = s
	}
	if rt.oauthKeys == nil {
		if keys := rt.env.get(approval.KeysEnv); keys != "" {
			k, err := approval.ParseKeys(keys)
			if err != nil {
				return nil, err
			}
			rt.oauthKeys = k
		} else {
			rt.oauthKeys = [][]byte{approval.RandomKey()}
			rt.logger.Warn("no "+approval.KeysEnv+": the authorization server signs with a key of this process only, so its tokens die with it and other replicas refuse them", "env", approval.KeysEnv)
		}
	}
	// The process's limiter: registration.per_minute then holds across
	// reloads, and across the fleet when its limits are counted in Redis.
	limits, err := rt.openFleet()
	if err != nil {
		return nil, err
	}
	return oauthserver.New(cat, &oauthserver.Options{Store: rt.oauthStore, Keys: rt.oauthKeys, Logger: rt.logger, Limits: limits})
}

func (rt *runtime) openOAuthStore(cat *catalog.Catalog) (oauthserver.Store, error) {
	where, from := rt.env.get(oauthStoreEnv), oauthStoreEnv
	if where == "" {
		if a := rt.env.get(approvalStoreEnv); strings.HasPrefix(a, "redis://") || strings.HasPrefix(a, "rediss://") || strings.HasPrefix(a, "unix://") {
			where, from = a, approvalStoreEnv
		}
	}
	switch {
	case strings.HasPrefix(where, "redis://"), strings.HasPrefix(where, "rediss://"), strings.HasPrefix(where, "unix://"):
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := oauthserver.OpenRedisStore(ctx, where)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		return s, nil
	case strings.HasPrefix(where, "file:"):
		s, err := oauthserver.OpenFileStore(strings.TrimPrefix(where, "file:"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		return s, nil
	case where != "":
		return nil, fmt.Errorf("%s: %q is neither redis://HOST:PORT/DB nor file:PATH", from, where)
	case cat.Audit.Path != "":
		return oauthserver.OpenFileStore(filepath.Join(filepath.Dir(cat.Audit.Path), "oauth.json"))
	}
	rt.logger.Warn("the authorization server keeps its state in memory (no audit.path and no " + oauthStoreEnv + "): sign-ins and refresh tokens are lost on restart and not shared by replicas")
	return oauthserver.OpenFileStore("")
}

// federated puts the authorization server's verifier beside the
// catalog's (nil when the catalog names only the authorization server).
func federated(as *oauthserver.Server, other authz.ClosableVerifier) authz.ClosableVerifier {
	return &authz.Federated{Issuer: as.Issuer(), Issued: as.Verifier(), Other: other}
}

// withOAuthServer answers the current catalog's authorization server
// endpoints and hands every other request to next.
func (rt *runtime) withOAuthServer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := rt.cur.Load(); s != nil && s.as != nil && s.as.Handles(r.URL.Path) {
			s.as.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
