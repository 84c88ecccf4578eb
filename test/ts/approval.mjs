// Drives approvals with the official TypeScript MCP client and
// prints one JSON report on stdout; test/ts_approval_test.go asserts on it
// and on what the upstream saw. This SDK (1.32.2) speaks MCP up to
// 2025-11-25: it has no multi round-trip (input_required) support, so it
// exercises the legacy era. Inputs: GATEWAY_MCP_URL, APPROVALS_URL,
// OPERATOR_TOKEN, APPROVER_TOKEN.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const report = { elicitations: 0 };

async function session(token, elicit) {
  const client = new Client({ name: "ts-approval", version: "1.0.0" },
    elicit ? { capabilities: { elicitation: { form: {}, url: {} } } } : {});
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async () => {
      report.elicitations++;
      return { action: "accept", content: { confirm: true } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.GATEWAY_MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  return client;
}

const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");
const call = async (client, name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: r.isError ?? false, text: text(r) };
};

async function rest(method, path, token) {
  const res = await fetch(process.env.APPROVALS_URL + path, { method, headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json().catch(() => null) };
}

try {
  report.protocolVersion = null;
  const op = await session(process.env.OPERATOR_TOKEN, true);
  report.protocolVersion = op.transport?.protocolVersion ?? null;

  // Confirm: this client declares elicitation but cannot do the
  // 2026-07-28 round trip, so the call is refused, never run.
  report.confirm = await call(op, "pause_queue", { queue: "billing", reason: "ts" });

  // Four-eyes: pending, approved by someone else through the REST API,
  // the retry runs once, the next retry asks anew.
  const args = { workflow_id: "wf-acme-0011", reason: "ts" };
  report.first = await call(op, "cancel_workflow", args);
  const id = (report.first.text.match(/apr_[0-9a-f]{32}/) ?? [])[0];
  report.id = id ?? null;
  report.beforeApproval = await call(op, "cancel_workflow", args);
  report.selfApprove = await rest("POST", `/${id}/approve`, process.env.OPERATOR_TOKEN);
  report.approve = await rest("POST", `/${id}/approve`, process.env.APPROVER_TOKEN);
  report.changedArgs = await call(op, "cancel_workflow", { workflow_id: "wf-acme-0011", reason: "changed" });
  report.retry = await call(op, "cancel_workflow", args);
  report.again = await call(op, "cancel_workflow", args);
  const next = (report.again.text.match(/apr_[0-9a-f]{32}/) ?? [])[0];
  report.reject = await rest("POST", `/${next}/reject`, process.env.APPROVER_TOKEN);
  report.afterReject = await call(op, "cancel_workflow", args);
  await op.close();
} catch (e) {
  report.fatal = String(e?.stack ?? e);
}
console.log(JSON.stringify(report));
