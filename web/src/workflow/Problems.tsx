// The workflow checks' findings in the editor: the server answers them on save (warnings) and on a refused
// publish (errors); the nodes at fault are outlined (red: blocks publishing, amber: a warning) and the list
// says what to fix, each entry selecting its node.
import { createContext, useContext } from "react";
import { nodeName } from "../i18n";
import { lang, t } from "../lang";
import { inputLabel, type FlowNode } from "./catalogue";

export type Problem = { nodeId: string; field: string; problem: string; level: "error" | "warning" };

/** The fixed phrases of the server's workflow checks (src/fathom/workflow/check.py) in Chinese; `{label}`
 * is the field's label as the console shows it, `$1`… the names and ids the server put in. A text that
 * matches none is shown as the server wrote it. */
const ZH_PROBLEMS: [RegExp, string][] = [
  [/^not connected: no path from the start node reaches it, so it never runs; connect it to the flow or delete it$/, "未连接：从开始节点到不了这里，它永远不会运行；请把它连入流程或删除"],
  [/^not connected: the loop body never reaches its end node, so the loop collects no results$/, "未连接：循环体到不了结束节点，循环收集不到结果"],
  [/^cycle with no way out \((.+)\): each node starts the next forever; add an If\/else or a question classifier that leaves the cycle, or remove an edge$/, "没有出口的循环（$1）：节点彼此无限触发；请加一个能离开循环的判断器或问题分类，或删除一条连线"],
  [/^no form fields: add at least one field$/, "没有表单字段：请至少添加一个字段"],
  [/^no tools connected: the model answers without tools; connect one, or use AI chat$/, "未连接工具：模型将不用工具回答；请连接一个工具，或改用 AI 对话"],
  [/^no knowledge base selected: the search finds nothing until you pick one$/, "未选择知识库：选择之前搜索不到任何内容"],
  [/^.+ is required and not set: choose an upstream output$/, "{label} 为必填项，尚未设置：请选择上游输出"],
  [/^.+ is required and not set: fill it in$/, "{label} 为必填项，尚未设置：请填写"],
  [/^.+ is required: choose an upstream output$/, "{label} 为必填项：请选择上游输出"],
  [/^.+ refers to node (\S+), which does not exist: choose again$/, "{label} 引用的节点 $1 不存在：请重新选择"],
  [/^.+ refers to output '(.+)' of '(.+)', which has no such output: choose again$/, "{label} 引用了“$2”的输出“$1”，但它没有这个输出：请重新选择"],
  [/^.+ reads '(.+)', which is not upstream of this node: it may not have run yet, and the value is then empty$/, "{label} 读取的“$1”不在此节点上游：它可能还没运行，此时值为空"],
  [/^.+ expects (\S+) but '(.+)' gives (\S+): the value is converted$/, "{label} 需要 $1，但“$2”给出 $3：值会被转换"],
  [/^.+ uses (\{\{\$.+\$\}\}), but node (\S+) does not exist: insert the variable again$/, "{label} 使用了 $1，但节点 $2 不存在：请重新插入变量"],
  [/^.+ uses (\{\{\$.+\$\}\}), but '(.+)' has no output '(.+)': insert the variable again$/, "{label} 使用了 $1，但“$2”没有输出“$3”：请重新插入变量"],
  [/^model '(.+)' is not configured on this server: runs use the default chat model '(.+)'$/, "模型“$1”未在此服务器配置：运行时使用默认对话模型“$2”"],
  [/^model '(.+)' is not configured and this server has no chat model: runs fail until one is configured$/, "模型“$1”未配置，且此服务器没有对话模型：配置之前运行都会失败"],
  [/^(IF|ELSE IF \d+), condition (\d+): choose a variable and a comparison$/, "$1，条件 $2：请选择变量和比较方式"],
  [/^(IF|ELSE IF \d+), condition (\d+): enter the value to compare with$/, "$1，条件 $2：请输入比较的值"],
  [/^(IF|ELSE IF \d+), condition (\d+): the variable's node (\S+) does not exist: choose again$/, "$1，条件 $2：变量的节点 $3 不存在：请重新选择"],
];

/** A problem's text in the console's language; `label`: the field's label as shown (may be ""). */
export function problemText(problem: string, label: string): string {
  if (lang() !== "zh") return problem;
  for (const [pattern, zh] of ZH_PROBLEMS) {
    const found = problem.match(pattern);
    if (found) return zh.replace(/\$(\d)/g, (_, n) => found[Number(n)] ?? "").split("{label}").join(label);
  }
  return problem;
}

export const ProblemsContext = createContext<Problem[]>([]);

/** The outline class and the hover text of a node with problems ("" and "" without). */
export function useNodeProblems(nodeId: string): { className: string; title: string } {
  const mine = useContext(ProblemsContext).filter((p) => p.nodeId === nodeId);
  if (!mine.length) return { className: "", title: "" };
  const className = mine.some((p) => p.level === "error") ? "invalid" : "warned";
  return { className, title: mine.map((p) => `${p.level === "error" ? "✕" : "⚠"} ${p.field ? `${p.field}: ` : ""}${problemText(p.problem, p.field)}`).join("\n") };
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
              {field ? ` › ${inputLabel(field, node.flowNodeType)}` : ""}: {problemText(p.problem, field ? inputLabel(field, node.flowNodeType) : p.field)}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
