// The editor's run panel: runs the canvas as it is (chatTest, kept out of the app's chat history) and
// shows each node's response: duration, tokens, model, what it read and produced, and its error.
import { useRef, useState } from "react";
import { streamSse } from "../api";
import { newChatId } from "../apps";
import { Markdown } from "../markdown";
import { applyEvent, InteractiveView, Turn } from "../pages/Chat";
import { nodeName } from "../i18n";
import { inputLabel, type FlowNode } from "./catalogue";
import { t } from "../lang";

export type RunStatus = "running" | "done" | "failed" | "skipped" | undefined;
export type RunNode = { id: string; data: { flow: FlowNode; status?: RunStatus } };

const SHOWN = new Set(["nodeInputs", "nodeOutputs", "id", "nodeId", "moduleName", "moduleType", "moduleLogo", "runningTime", "error", "errorText", "inputTokens", "outputTokens", "totalPoints", "model", "query", "textOutput", "quoteList"]);
const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

/** A node's inputs or outputs (the chat test's nodeInputs / nodeOutputs), each under its label. */
function IoTable({ title, values, type, testId }: { title: string; values: Record<string, unknown>; type: string; testId: string }) {
  return (
    <div data-testid={testId}>
      <b>{title}</b>
      {Object.entries(values).map(([k, v]) => (
        <div key={k} className="io-row"><span className="muted">{inputLabel({ key: k, renderTypeList: [] }, type)}:</span>{" "}
          {typeof v === "object" && v !== null ? <pre className="small" style={{ maxHeight: 160, overflow: "auto", margin: 0 }}>{text(v)}</pre> : <span style={{ whiteSpace: "pre-wrap" }}>{String(v)}</span>}
        </div>
      ))}
    </div>
  );
}

/** One node's response data, the way FastGPT's run detail shows it. */
function NodeStep({ step }: { step: Record<string, any> }) {
  const error = step.error ?? step.errorText;
  const tokens = (step.inputTokens ?? 0) + (step.outputTokens ?? 0);
  const rest = Object.entries(step).filter(([k, v]) => !SHOWN.has(k) && v !== undefined && v !== null && v !== "");
  return (
    <details className={`chunk small node-step${error ? " failed" : ""}`} data-testid="node-step" open={!!error}>
      <summary>
        <b>{error ? "✕" : "✓"} {nodeName(step.moduleName) || step.nodeId}</b>
        <span className="muted"> · {step.runningTime ?? 0}s{tokens ? t(" · {total} tokens ({input} in, {output} out)", { total: tokens.toLocaleString(), input: step.inputTokens ?? 0, output: step.outputTokens ?? 0 }) : ""}{step.model ? ` · ${step.model}` : ""}</span>
      </summary>
      {error && <div className="error" data-testid="node-step-error">{text(error)}</div>}
      {step.nodeInputs && Object.keys(step.nodeInputs).length > 0 && <IoTable title={t("Inputs")} values={step.nodeInputs} type={step.moduleType} testId="node-inputs" />}
      {step.nodeOutputs && Object.keys(step.nodeOutputs).length > 0 && <IoTable title={t("Outputs")} values={step.nodeOutputs} type={step.moduleType} testId="node-outputs" />}
      {step.query !== undefined && <div><b>{t("Input:")}</b> <span style={{ whiteSpace: "pre-wrap" }}>{text(step.query)}</span></div>}
      {step.textOutput !== undefined && <div><b>{t("Output:")}</b> <span style={{ whiteSpace: "pre-wrap" }}>{text(step.textOutput)}</span></div>}
      {Array.isArray(step.quoteList) && <div><b>{t("Sources:")}</b> {step.quoteList.length} {step.quoteList.map((q: any) => q.sourceName).filter(Boolean).slice(0, 5).join(", ")}</div>}
      {rest.map(([k, v]) => (
        <div key={k}><b>{k}:</b> {typeof v === "object" ? <pre className="small" style={{ maxHeight: 160, overflow: "auto" }}>{text(v)}</pre> : String(v)}</div>
      ))}
    </details>
  );
}

export function RunPanel({ appId, current, setStatuses, nodes, onClose }: { appId: string; current: () => Record<string, unknown>; setStatuses: (fn: (n: RunNode) => RunStatus) => void; nodes: RunNode[]; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [turn, setTurn] = useState<Turn | null>(null);
  const [log, setLog] = useState<string[]>([]);
  const [steps, setSteps] = useState<any[]>([]);
  const [busy, setBusy] = useState(false);
  const chatId = useRef(newChatId());
  const byName = (name: string) => nodes.filter((n) => n.data.flow.name === name).map((n) => n.id);

  const run = async (content: string, fresh: boolean) => {
    if (fresh) { chatId.current = newChatId(); setLog([]); setSteps([]); setStatuses(() => undefined); }
    setBusy(true);
    const running = new Set<string>();
    let t: Turn = { id: "run", role: "ai", text: "", reasoning: "", tools: [], quotes: [], interactive: null, status: "", error: "", done: false, nodes: [], nodeErrors: [], indexing: [] };
    setTurn(t);
    try {
      // The chat test runs the canvas as it is now (unsaved changes included).
      await streamSse("/api/core/chat/chatTest", { appId, chatId: chatId.current, stream: true, detail: true, ...current(), messages: [{ role: "user", content }] }, ({ event, data }) => {
        t = applyEvent(t, event, data);
        setTurn(t);
        if (event === "flowNodeStatus" && data?.name) {
          for (const id of byName(data.name)) running.add(id);
          setLog((l) => [...l, `▶ ${nodeName(data.name)}`]);
          setStatuses((n) => (running.has(n.id) ? (n.data.status === "done" || n.data.status === "failed" ? n.data.status : "running") : n.data.status));
        }
        if (event === "flowNodeResponse" && data) {
          const id = data.nodeId ?? byName(data.moduleName)[0];
          const failed = !!(data.error || data.errorText);
          setLog((l) => [...l, `${failed ? "✕" : "✓"} ${nodeName(data.moduleName) || id}${data.runningTime !== undefined ? ` (${data.runningTime}s)` : ""}${failed ? `: ${typeof data.error === "string" ? data.error : JSON.stringify(data.error ?? data.errorText)}` : ""}`]);
          setStatuses((n) => (n.id === id ? (failed ? "failed" : "done") : n.data.status));
          setSteps((s) => [...s, data]);
        }
        if (event === "flowResponses" && Array.isArray(data)) {
          const done = new Set(data.map((r: any) => r.nodeId));
          setStatuses((n) => (done.has(n.id) ? (n.data.status === "failed" ? "failed" : "done") : n.data.status));
        }
      });
    } catch (e) { t = { ...t, error: (e as Error).message }; setTurn(t); }
    setStatuses((n) => (n.data.status === "running" ? "done" : n.data.status));
    setTurn({ ...t, done: true });
    setBusy(false);
  };

  return (
    <div className="wf-inspector" data-testid="run-panel">
      <div className="row"><b>{t("Run & debug")}</b><div className="grow" /><button className="small" onClick={onClose}>{t("Close")}</button></div>
      <form className="col" onSubmit={(e) => { e.preventDefault(); run(query, true); }}>
        <textarea name="runQuery" rows={2} placeholder={t("User question (Enter runs, Shift+Enter: new line)")} value={query} onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) { e.preventDefault(); if (!busy) run(query, true); } }} />
        <button className="primary" disabled={busy}>{busy ? t("Running…") : t("Run the canvas")}</button>
      </form>
      {log.length > 0 && <div className="col small" style={{ gap: 2 }} data-testid="run-log">{log.map((l, i) => <div key={i}>{l}</div>)}</div>}
      {steps.length > 0 && <div className="col" style={{ gap: 6 }} data-testid="run-steps">{steps.map((s, i) => <NodeStep key={s.id ?? i} step={s} />)}</div>}
      <div className="muted small">{t("Debug runs use the canvas as it is and are kept apart from users' chats (not in the app's chat history).")}</div>
      {turn && (
        <div className="col">
          {turn.text && <div className="chunk"><Markdown text={turn.text} /></div>}
          {turn.interactive && <InteractiveView value={turn.interactive} shownText={turn.text} enabled={!busy} onAnswer={(answer) => run(answer, false)} />}
          {turn.nodeErrors.length > 0 && <div className="error">{turn.nodeErrors.join("\n")}</div>}
          {turn.error && <div className="error">{turn.error}</div>}
        </div>
      )}
    </div>
  );
}

