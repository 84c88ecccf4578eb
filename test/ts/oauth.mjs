// Connects to the gateway with the official TypeScript MCP SDK and no
// token: its OAuth client support discovers the gateway's authorization
// server, registers (a Client ID Metadata Document when CIMD_URL is set,
// else dynamic registration), and asks for a browser; test/oauth_test.go
// reads {"open": url} from stdout and signs the person in with headless
// Chromium. The code comes back to this process's loopback redirect URI.
// It then lists and calls tools, refreshes, revokes, and checks that the
// gateway refuses it afterwards. Each step prints one JSON line.
//
//   GATEWAY_MCP_URL=… CALLBACK_PORT=… [CIMD_URL=https://… CIMD_KEY=… CIMD_CERT=…] node oauth.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import http from "node:http";
import https from "node:https";
import fs from "node:fs";

const out = (v) => console.log(JSON.stringify(v));
const serverUrl = new URL(process.env.GATEWAY_MCP_URL);
const redirect = `http://127.0.0.1:${process.env.CALLBACK_PORT}/callback`;
const metadata = {
  client_name: "TypeScript SDK test",
  redirect_uris: [redirect],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

// The Client ID Metadata Document, served over https on loopback.
const cimd = process.env.CIMD_URL;
if (cimd) {
  const doc = JSON.stringify({ client_id: cimd, ...metadata, client_name: "TypeScript SDK test (metadata document)" });
  const srv = https.createServer({ key: fs.readFileSync(process.env.CIMD_KEY), cert: fs.readFileSync(process.env.CIMD_CERT) }, (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(doc);
  });
  await new Promise((ok) => srv.listen(Number(new URL(cimd).port), "127.0.0.1", ok));
}

// The loopback redirect URI: the browser lands here with the code.
let gotCode;
const code = new Promise((ok) => (gotCode = ok));
const cb = http.createServer((req, res) => {
  const u = new URL(req.url, redirect);
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end(`<p id="done">${u.searchParams.get("code") ? "signed in" : "refused: " + u.searchParams.get("error")}</p>`);
  gotCode(u.searchParams.get("code") || "");
});
await new Promise((ok) => cb.listen(Number(process.env.CALLBACK_PORT), "127.0.0.1", ok));

class Provider {
  constructor() {
    this.saved = {};
  }
  get redirectUrl() {
    return redirect;
  }
  get clientMetadataUrl() {
    return cimd;
  }
  get clientMetadata() {
    return metadata;
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(c) {
    this.saved.client = c;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(t) {
    this.saved.tokens = t;
  }
  redirectToAuthorization(url) {
    this.redirected = (this.redirected || 0) + 1;
    out({ open: url.href });
  }
  saveCodeVerifier(v) {
    this.saved.verifier = v;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

const provider = new Provider();
const connect = async () => {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  return client;
};

try {
  await connect();
  out({ error: "connected without signing in" });
  process.exit(1);
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
out({ registered: provider.saved.client.client_id, asked: provider.redirected === 1 });

const c = await code;
if (!c) {
  out({ error: "no code" });
  process.exit(1);
}
// finishAuth on a fresh transport exchanges the code with the verifier.
await new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }).finishAuth(c);
let client = await connect();
const { tools } = await client.listTools();
const call = await client.callTool({ name: "list_queues", arguments: {} });
out({ tools: tools.map((t) => t.name), call: { isError: !!call.isError, text: JSON.stringify(call.structuredContent ?? call.content) } });
await client.close();

// Refresh: with a refresh token the SDK refreshes instead of redirecting.
const before = provider.saved.tokens;
const r = await auth(provider, { serverUrl });
client = await connect();
await client.listTools();
await client.close();
out({ refreshed: r === "AUTHORIZED" && provider.saved.tokens.access_token !== before.access_token && provider.saved.tokens.refresh_token !== before.refresh_token });

// Revoke (RFC 7009) at the endpoint the metadata names, then try again.
const md = await (await fetch(new URL("/.well-known/oauth-authorization-server", serverUrl))).json();
const rev = await fetch(md.revocation_endpoint, {
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams({ token: provider.saved.tokens.refresh_token, client_id: provider.saved.client.client_id }),
});
let refusal = "";
try {
  const again = await connect();
  await again.listTools();
} catch (e) {
  refusal = `${e.constructor.name}: ${e.message}`;
}
out({ revoked: rev.status, refusedAfterRevocation: refusal !== "", refusal });
process.exit(0);
