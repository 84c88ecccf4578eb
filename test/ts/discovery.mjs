// Drives tool search with the official TypeScript MCP client against a
// gateway whose catalog has discovery on, and prints one JSON report on
// stdout; test/discovery_test.go asserts on it. Inputs: GATEWAY_MCP_URL,
// OPERATOR_TOKEN, VIEWER_TOKEN.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const report = {};

async function session(token) {
  const client = new Client({ name: "ts-discovery", version: "1.0.0" }, {});
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.GATEWAY_MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  return client;
}

const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");
const call = async (client, name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: r.isError ?? false, text: text(r), structured: r.structuredContent ?? null };
};
const found = (r) => (r.structured?.tools ?? []).map((t) => t.name);

try {
  const op = await session(process.env.OPERATOR_TOKEN);
  const listed = await op.listTools();
  report.listed = listed.tools.map((t) => t.name);
  report.listedBytes = JSON.stringify(listed).length;
  report.search = found(await call(op, "search_tools", { query: "pause a queue so no new jobs start", limit: 3 }));
  report.viaCallTool = await call(op, "call_tool", { name: "list_queues", arguments: {} });
  report.direct = await call(op, "list_queues", {});
  await op.close();

  const viewer = await session(process.env.VIEWER_TOKEN);
  report.viewerSearch = found(await call(viewer, "search_tools", { query: "cancel a workflow", limit: 20 }));
  report.viewerCallHidden = await call(viewer, "call_tool", { name: "cancel_workflow", arguments: { workflow_id: "wf-acme-0011", reason: "x" } });
  await viewer.close();
} catch (e) {
  report.fatal = String(e?.stack ?? e);
}
console.log(JSON.stringify(report));
