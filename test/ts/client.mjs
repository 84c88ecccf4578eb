// Drives the gateway with the official TypeScript MCP client and prints one
// JSON report on stdout; test/ts_test.go asserts on it. Inputs come from the
// environment: GATEWAY_MCP_URL, VIEWER_TOKEN, OPERATOR_TOKEN, and SMALL_MCP_URL
// (a gateway whose text bound is too small for one job).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.GATEWAY_MCP_URL);

async function session(token) {
  const client = new Client({ name: "ts-e2e", version: "1.0.0" });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

async function listAll(client) {
  const names = [];
  const annotations = {};
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const t of page.tools) {
      names.push(t.name);
      annotations[t.name] = t.annotations ?? null;
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { names: names.sort(), annotations };
}

const report = {};
try {
  const viewer = await session(process.env.VIEWER_TOKEN);
  report.protocolVersion = viewer.getServerVersion() ? "connected" : "unknown";
  report.serverName = viewer.getServerVersion()?.name;
  report.viewer = await listAll(viewer);
  const res = await viewer.callTool({ name: "search_jobs", arguments: { page_size: 3 } });
  report.search = { isError: res.isError ?? false, structured: res.structuredContent, text: res.content?.[0]?.text };
  const denied = await viewer.callTool({ name: "cancel_job", arguments: { job_id: "job-acme-0001" } });
  report.denied = { isError: denied.isError ?? false, text: denied.content?.[0]?.text };
  try {
    await viewer.callTool({ name: "no_such_tool", arguments: {} });
    report.unknown = { error: null };
  } catch (e) {
    report.unknown = { error: String(e?.message ?? e), code: e?.code ?? null };
  }
  await viewer.close();

  const operator = await session(process.env.OPERATOR_TOKEN);
  report.operator = await listAll(operator);
  const big = await operator.callTool({ name: "search_jobs", arguments: { page_size: 100 } });
  report.truncated = { isError: big.isError ?? false, marker: big.structuredContent?.transportTruncated ?? null, jobs: big.structuredContent?.jobs?.length ?? 0 };
  await operator.close();

  if (process.env.SMALL_MCP_URL) {
    const client = new Client({ name: "ts-e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(process.env.SMALL_MCP_URL), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.OPERATOR_TOKEN}` } },
    }));
    try {
      await client.callTool({ name: "get_job", arguments: { job_id: "job-acme-0031" } });
      report.tooLarge = { error: null };
    } catch (e) {
      report.tooLarge = { error: String(e?.message ?? e), code: e?.code ?? null };
    }
    await client.close();
  }
} catch (e) {
  report.fatal = String(e?.stack ?? e);
}
try {
  await session("");
  report.noToken = { error: null };
} catch (e) {
  report.noToken = { error: String(e?.message ?? e), name: e?.constructor?.name ?? null, code: e?.code ?? null };
}
process.stdout.write(JSON.stringify(report) + "\n");
