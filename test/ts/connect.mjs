// Connects to the gateway with the official TypeScript MCP SDK and a bearer
// token, lists the tools and calls one:
//
//   GATEWAY_MCP_URL=http://127.0.0.1:8080/mcp GATEWAY_TOKEN=… node connect.mjs list_firing_alerts '{}'
//
// docs/clients.md shows this file whole; test/clients_test.go checks that
// the two are the same and runs it against a gateway.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [name, args = "{}"] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(process.env.GATEWAY_MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.GATEWAY_TOKEN}` } },
});
const client = new Client({ name: "my-agent", version: "1.0.0" });
await client.connect(transport); // a bad token fails here: 401

const { tools } = await client.listTools();
for (const tool of tools) console.log("tool:", tool.name);

const result = await client.callTool({ name, arguments: JSON.parse(args) });
if (result.isError) {
  // a tool error: denied, bad arguments, the upstream's reason
  console.error("tool error:", result.content[0].text);
  process.exitCode = 1;
} else {
  console.log("result:", JSON.stringify(result.structuredContent));
}
await client.close();
