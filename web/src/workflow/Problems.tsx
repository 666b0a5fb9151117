// The workflow checks' findings in the editor: the server answers them on save (warnings) and on a refused
// publish (errors); the nodes at fault are outlined (red: blocks publishing, amber: a warning) and the list
// says what to fix, each entry selecting its node.
import { createContext, useContext } from "react";
import { nodeName } from "../i18n";
import { t } from "../lang";
import { inputLabel, type FlowNode } from "./catalogue";

export type Problem = { nodeId: string; field: string; problem: string; level: "error" | "warning" };

export const ProblemsContext = createContext<Problem[]>([]);

/** The outline class and the hover text of a node with problems ("" and "" without). */
export function useNodeProblems(nodeId: string): { className: string; title: string } {
  const mine = useContext(ProblemsContext).filter((p) => p.nodeId === nodeId);
  if (!mine.length) return { className: "", title: "" };
  const className = mine.some((p) => p.level === "error") ? "invalid" : "warned";
  return { className, title: mine.map((p) => `${p.level === "error" ? "✕" : "⚠"} ${p.field ? `${p.field}: ` : ""}${p.problem}`).join("\n") };
}

/** The problems as a list under the toolbar; `onPick` selects the node. */
export function ProblemList({ problems, nodes, onPick, onClose }: { problems: Problem[]; nodes: FlowNode[]; onPick: (nodeId: string) => void; onClose: () => void }) {
  const present = problems.filter((p) => nodes.some((n) => n.nodeId === p.nodeId));
  if (!present.length) return null;
  const errors = present.filter((p) => p.level === "error").length;
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  return (
    <div className={errors ? "error small" : "warn small"} data-testid="problem-list" style={{ margin: "4px 8px" }}>
      <div className="row">
        <b>{errors
          ? t("Publishing needs {count} fix(es): the nodes outlined in red.", { count: String(errors) })
          : t("Saved with warnings: the workflow runs, but check the nodes outlined in amber.")}</b>
        <div className="grow" />
        <button className="small" aria-label={t("Close")} onClick={onClose}>✕</button>
      </div>
      <ul style={{ margin: "4px 0 0", paddingLeft: 18 }}>
        {present.map((p, i) => {
          const node = byId.get(p.nodeId)!;
          const field = p.field ? node.inputs.find((input) => input.key === p.field) : undefined;
          return (
            <li key={i} data-testid="problem" data-node-id={p.nodeId} data-level={p.level}>
              <button className="link small" onClick={() => onPick(p.nodeId)}>{nodeName(node.name)}</button>
              {field ? ` › ${inputLabel(field, node.flowNodeType)}` : ""}: {p.problem}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
