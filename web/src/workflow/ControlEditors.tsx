// Real controls for the structured inputs FastGPT keeps as JSON: if/else branches (ifElseList) and
// form fields (userInputForms), plus the graph check that warns when an answer is sent twice.
import type { FlowEdge, FlowNode } from "./catalogue";
import { t } from "../lang";

type Ref = { nodeId: string; outputId: string; label: string };
type Condition = { variable?: [string, string] | string[]; condition: string; value?: string };
type Branch = { condition: "AND" | "OR"; list: Condition[] };

const OPERATORS: [string, string][] = [
  ["equalTo", "equals"], ["notEqual", "does not equal"], ["include", "contains"], ["notInclude", "does not contain"],
  ["startWith", "starts with"], ["endWith", "ends with"], ["isEmpty", "is empty"], ["isNotEmpty", "is not empty"],
  ["greaterThan", ">"], ["greaterThanOrEqualTo", "≥"], ["lessThan", "<"], ["lessThanOrEqualTo", "≤"],
];
const NO_VALUE = new Set(["isEmpty", "isNotEmpty"]);

export function IfElseEditor({ value, upstream, onChange, header }: { value: Branch[]; upstream: Ref[]; onChange: (v: Branch[]) => void; header: React.ReactNode }) {
  const branches = value.length ? value : [{ condition: "AND" as const, list: [] }];
  const setBranch = (i: number, b: Branch) => onChange(branches.map((x, j) => (j === i ? b : x)));
  return (
    <div className="col" style={{ gap: 6 }} data-testid="ifelse-editor">{header}
      {branches.map((b, i) => (
        <div key={i} className="chunk col" style={{ gap: 4 }}>
          <div className="row small"><b>{i === 0 ? "IF" : `ELSE IF ${i}`}</b>
            <select value={b.condition} onChange={(e) => setBranch(i, { ...b, condition: e.target.value as Branch["condition"] })}><option value="AND">{t("all of (AND)")}</option><option value="OR">{t("any of (OR)")}</option></select>
            <div className="grow" />{branches.length > 1 && <button className="small" onClick={() => onChange(branches.filter((_, j) => j !== i))}>{t("✕ branch")}</button>}
          </div>
          {b.list.map((c, k) => {
            const setCond = (patch: Partial<Condition>) => setBranch(i, { ...b, list: b.list.map((x, m) => (m === k ? { ...x, ...patch } : x)) });
            const ref = Array.isArray(c.variable) ? `${c.variable[0]}|${c.variable[1]}` : "";
            return (
              <div key={k} className="row wrap small" data-testid="ifelse-condition">
                <select aria-label="variable" value={ref} onChange={(e) => setCond({ variable: e.target.value ? (e.target.value.split("|") as [string, string]) : undefined })}>
                  <option value="">{t("— a value —")}</option>
                  {upstream.map((r) => <option key={`${r.nodeId}|${r.outputId}`} value={`${r.nodeId}|${r.outputId}`}>{r.label}</option>)}
                </select>
                <select aria-label="operator" value={c.condition} onChange={(e) => setCond({ condition: e.target.value })}>{OPERATORS.map(([v, l]) => <option key={v} value={v}>{t(l)}</option>)}</select>
                {!NO_VALUE.has(c.condition) && <input aria-label="compared value" value={c.value ?? ""} onChange={(e) => setCond({ value: e.target.value })} style={{ flex: "1 1 80px" }} />}
                <button className="small" onClick={() => setBranch(i, { ...b, list: b.list.filter((_, m) => m !== k) })}>✕</button>
              </div>
            );
          })}
          <div><button className="small" onClick={() => setBranch(i, { ...b, list: [...b.list, { variable: upstream[0] ? [upstream[0].nodeId, upstream[0].outputId] : undefined, condition: "equalTo", value: "" }] })}>{t("+ Condition")}</button></div>
        </div>
      ))}
      <div><button className="small" onClick={() => onChange([...branches, { condition: "AND", list: [] }])}>{t("+ ELSE IF branch")}</button></div>
    </div>
  );
}

type Field = { type: string; key: string; label: string; required?: boolean; list?: { label: string; value: string }[]; [k: string]: unknown };

export function FormFieldsEditor({ value, onChange, header }: { value: Field[]; onChange: (v: Field[]) => void; header: React.ReactNode }) {
  const set = (i: number, patch: Partial<Field>) => onChange(value.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <div className="col" style={{ gap: 6 }} data-testid="form-fields-editor">{header}
      {value.map((f, i) => (
        <div key={i} className="chunk col" style={{ gap: 4 }} data-testid="form-field">
          <div className="row small">
            <input aria-label="field label" placeholder={t("label")} value={f.label} onChange={(e) => set(i, { label: e.target.value })} />
            <input aria-label="field key" placeholder={t("key")} value={f.key} onChange={(e) => set(i, { key: e.target.value })} />
            <button className="small" onClick={() => onChange(value.filter((_, j) => j !== i))}>✕</button>
          </div>
          <div className="row small">
            <select aria-label="field type" value={f.type} onChange={(e) => set(i, { type: e.target.value, valueType: e.target.value === "numberInput" ? "number" : "string" })}>
              <option value="input">{t("Text")}</option><option value="textarea">{t("Long text")}</option><option value="numberInput">{t("Number")}</option><option value="select">{t("Choice")}</option>
            </select>
            <label className="inline"><input type="checkbox" checked={!!f.required} onChange={(e) => set(i, { required: e.target.checked })} />{t("required")}</label>
          </div>
          {f.type === "select" && (
            <input aria-label="choices" placeholder={t("choices, comma-separated")} value={(f.list ?? []).map((o) => o.value).join(", ")}
              onChange={(e) => set(i, { list: e.target.value.split(",").map((x) => x.trim()).filter(Boolean).map((x) => ({ label: x, value: x })) })} />
          )}
        </div>
      ))}
      <div><button className="small" onClick={() => onChange([...value, { type: "input", key: `field${value.length + 1}`, label: `Field ${value.length + 1}`, required: false, valueType: "string" }])}>{t("+ Field")}</button></div>
    </div>
  );
}

const refersTo = (value: unknown, nodeId: string): boolean =>
  (Array.isArray(value) && value[0] === nodeId && value[1] === "answerText") ||
  (typeof value === "string" && value.includes(`{{$${nodeId}.answerText$}}`));

/** Reply nodes that send an AI chat answer the AI chat node already streamed to the user. */
export function doubleAnswers(nodes: FlowNode[], _edges: FlowEdge[]): { chat: FlowNode; reply: FlowNode }[] {
  const speaking = nodes.filter((n) => n.flowNodeType === "chatNode" && n.inputs.find((i) => i.key === "isResponseAnswerText")?.value !== false);
  const found: { chat: FlowNode; reply: FlowNode }[] = [];
  for (const reply of nodes.filter((n) => n.flowNodeType === "answerNode")) {
    const text = reply.inputs.find((i) => i.key === "text")?.value;
    for (const chat of speaking) if (refersTo(text, chat.nodeId)) found.push({ chat, reply });
  }
  return found;
}
