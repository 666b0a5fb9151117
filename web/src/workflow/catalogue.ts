// The node catalogue: FastGPT node templates (flowNodeType, inputs, outputs) the editor can add,
// and the builder that turns the simple-app form into a workflow. Keys and handles follow FastGPT.

import { lang } from "../lang";

export type FlowInput = { key: string; label?: string; renderTypeList: string[]; valueType?: string; value?: unknown; required?: boolean; description?: string; list?: { label: string; value: string }[]; min?: number; max?: number; [k: string]: unknown };
export type FlowOutput = { id: string; key: string; label?: string; valueType?: string; type?: string; [k: string]: unknown };
export type FlowNode = { nodeId: string; flowNodeType: string; name: string; intro?: string; avatar?: string; position?: { x: number; y: number }; inputs: FlowInput[]; outputs: FlowOutput[]; version?: string; [k: string]: unknown };
export type FlowEdge = { source: string; target: string; sourceHandle: string; targetHandle: string };
export type Template = { type: string; name: string; icon: string; intro: string; group: string; build: () => Pick<FlowNode, "inputs" | "outputs"> & Partial<FlowNode> };

const userInput = (value: unknown = ["workflowStartNodeId", "userChatInput"]): FlowInput => ({ key: "userChatInput", label: "User question", renderTypeList: ["reference", "textarea"], valueType: "string", value, required: true });
const out = (key: string, label: string, valueType = "string"): FlowOutput => ({ id: key, key, label, valueType, type: "static" });

export const TEMPLATES: Template[] = [
  { type: "workflowStart", name: "Start", icon: "S", group: "Basic", intro: "Entry: the user's question and files",
    build: () => ({ inputs: [{ key: "userChatInput", label: "User question", renderTypeList: ["reference", "textarea"], valueType: "string", required: true }], outputs: [out("userChatInput", "User question")] }) },
  { type: "chatNode", name: "AI chat", icon: "AI", group: "AI", intro: "Ask a chat model, optionally with knowledge quotes",
    build: () => ({ inputs: [
      { key: "model", label: "Model", renderTypeList: ["settingLLMModel", "reference"], valueType: "string", value: "" },
      { key: "temperature", label: "Temperature", renderTypeList: ["hidden"], value: 0, min: 0, max: 10 },
      { key: "maxToken", label: "Max tokens", renderTypeList: ["hidden"], value: 2000 },
      { key: "systemPrompt", label: "System prompt", renderTypeList: ["textarea", "reference"], valueType: "string", value: "" },
      { key: "history", label: "Chat history rounds", renderTypeList: ["numberInput", "reference"], valueType: "chatHistory", value: 6, min: 0, max: 50 },
      { key: "quoteQA", label: "Knowledge quotes", renderTypeList: ["settingDatasetQuotePrompt"], valueType: "datasetQuote", value: undefined },
      userInput(),
    ], outputs: [out("history", "New history", "chatHistory"), out("answerText", "AI answer")] }) },
  { type: "datasetSearchNode", name: "Knowledge search", icon: "KB", group: "AI", intro: "Search knowledge bases; outputs quotes",
    build: () => ({ inputs: [
      { key: "datasets", label: "Knowledge bases", renderTypeList: ["selectDataset", "reference"], valueType: "selectDataset", value: [], required: true },
      { key: "similarity", label: "Minimum relevance", renderTypeList: ["selectDatasetParamsModal"], valueType: "number", value: 0.4 },
      { key: "limit", label: "Token limit", renderTypeList: ["hidden"], valueType: "number", value: 5000 },
      { key: "searchMode", label: "Search mode", renderTypeList: ["hidden"], valueType: "string", value: "mixedRecall", list: [{ label: "Semantic", value: "embedding" }, { label: "Full text", value: "fullTextRecall" }, { label: "Hybrid", value: "mixedRecall" }] },
      { key: "embeddingWeight", label: "Vector weight", renderTypeList: ["hidden"], valueType: "number", value: 0.5 },
      { key: "usingReRank", label: "Rerank", renderTypeList: ["hidden"], valueType: "boolean", value: false },
      { key: "collectionFilterMatch", label: "Collection filter (JSON: tags, createTime)", renderTypeList: ["textarea", "reference"], valueType: "string", value: "" },
      userInput(),
    ], outputs: [out("quoteQA", "Quotes", "datasetQuote")] }) },
  { type: "answerNode", name: "Reply", icon: "R", group: "Basic", intro: "Send fixed or templated text to the user",
    build: () => ({ inputs: [{ key: "text", label: "Reply text", renderTypeList: ["textarea", "reference"], valueType: "any", value: "" }], outputs: [] }) },
  { type: "userSelect", name: "User select", icon: "?", group: "Interactive", intro: "Pause and let the user pick a branch",
    build: () => ({ inputs: [
      { key: "description", label: "Question", renderTypeList: ["textarea"], valueType: "string", value: "Choose one" },
      { key: "userSelectOptions", label: "Options", renderTypeList: ["custom"], valueType: "any", value: [{ key: "option1", value: "Yes" }, { key: "option2", value: "No" }] },
    ], outputs: [out("selectResult", "Chosen option")] }) },
  { type: "formInput", name: "Form input", icon: "F", group: "Interactive", intro: "Pause and ask the user to fill a form",
    build: () => ({ inputs: [
      { key: "description", label: "Description", renderTypeList: ["textarea"], valueType: "string", value: "Please fill in" },
      { key: "userInputForms", label: "Fields", renderTypeList: ["custom"], valueType: "any", value: [{ type: "input", key: "name", label: "name", required: true }] },
    ], outputs: [out("formInputResult", "Form result", "object")] }) },
  { type: "ifElseNode", name: "If / else", icon: "if", group: "Logic", intro: "Branch on conditions",
    build: () => ({ inputs: [{ key: "ifElseList", label: "Conditions", renderTypeList: ["hidden"], valueType: "any", value: [{ condition: "AND", list: [{ variable: ["workflowStartNodeId", "userChatInput"], condition: "include", value: "" }] }] }], outputs: [out("ifElseResult", "Branch taken")] }) },
  { type: "textEditor", name: "Text template", icon: "T", group: "Logic", intro: "Build text from variables",
    build: () => ({ inputs: [{ key: "system_textareaInput", label: "Template", renderTypeList: ["textarea"], valueType: "string", value: "" }], outputs: [out("system_text", "Text")] }) },
  { type: "code", name: "Code", icon: "{}", group: "Tools", intro: "Run Python or JavaScript in the sandbox",
    build: () => ({ inputs: [
      { key: "codeType", label: "Language", renderTypeList: ["hidden"], valueType: "string", value: "py", list: [{ label: "Python", value: "py" }, { label: "JavaScript", value: "js" }] },
      { key: "code", label: "Code", renderTypeList: ["custom"], valueType: "string", value: "def main(data1):\n    return {'result': data1}" },
      { key: "data1", label: "data1", renderTypeList: ["reference"], valueType: "string", value: ["workflowStartNodeId", "userChatInput"], canEdit: true },
    ], outputs: [out("rawResponse", "Full result", "object"), out("result", "result", "any")] }) },
  { type: "httpRequest468", name: "HTTP request", icon: "H", group: "Tools", intro: "Call an HTTP API (egress-guarded)",
    build: () => ({ inputs: [
      { key: "system_httpMethod", label: "Method", renderTypeList: ["custom"], valueType: "string", value: "GET", list: ["GET", "POST", "PUT", "DELETE"].map((m) => ({ label: m, value: m })) },
      { key: "system_httpReqUrl", label: "URL", renderTypeList: ["hidden"], valueType: "string", value: "" },
      { key: "system_httpHeader", label: "Headers", renderTypeList: ["custom"], valueType: "any", value: [] },
      { key: "system_httpJsonBody", label: "JSON body", renderTypeList: ["hidden"], valueType: "any", value: "" },
    ], outputs: [out("httpRawResponse", "Raw response", "any"), out("error", "Error", "object")] }) },
  { type: "classifyQuestion", name: "Classify question", icon: "C", group: "AI", intro: "Route by the question's topic",
    build: () => ({ inputs: [
      { key: "model", label: "Model", renderTypeList: ["selectLLMModel", "reference"], valueType: "string", value: "" },
      { key: "systemPrompt", label: "Background", renderTypeList: ["textarea", "reference"], valueType: "string", value: "" },
      { key: "history", label: "Chat history rounds", renderTypeList: ["numberInput", "reference"], valueType: "chatHistory", value: 6 },
      userInput(),
      { key: "agents", label: "Categories", renderTypeList: ["custom"], valueType: "any", value: [{ value: "Greeting", key: "wqre" }, { value: "Other", key: "sdfa" }] },
    ], outputs: [out("cqResult", "Category")] }) },
  { type: "variableUpdate", name: "Update variables", icon: "V", group: "Logic", intro: "Set global variables",
    build: () => ({ inputs: [{ key: "updateList", label: "Updates", renderTypeList: ["hidden"], valueType: "any", value: [] }], outputs: [] }) },
];

export const templateOf = (type: string) => TEMPLATES.find((t) => t.type === type);

const templateInputs = (type: string): FlowInput[] => templateOf(type)?.build().inputs ?? [];

/** FastGPT labels are often i18n keys ("core.module.input.label.aiModel", "common:core.ai.Model"). */
const isI18nKey = (label: string) => /^([a-z_]+:)?[a-z][A-Za-z0-9_]*(\.[A-Za-z0-9_ ]+){2,}$/.test(label) || /^[a-z_]+:[A-Za-z0-9_.]+$/.test(label);

const KNOWN_LABELS: Record<string, string> = {
  aiModel: "AI model", LLM: "AI model", model: "Model", aiSystemPrompt: "System prompt", systemPrompt: "System prompt",
  chatHistory: "Chat history", history: "Chat history", userChatInput: "User question", user_question: "User question",
  quoteQA: "Knowledge quotes", datasetQuote: "Knowledge quotes", selectDataset: "Knowledge bases", datasets: "Knowledge bases",
  temperature: "Temperature", maxToken: "Max tokens", max_tokens: "Max tokens", similarity: "Minimum relevance",
  limit: "Token limit", searchMode: "Search mode", text: "Text", answerText: "AI answer", isResponseAnswerText: "Send answer to the user",
  "user question": "User question", "Ai response content": "AI answer", Prompt: "Prompt",
};

/** "aiChatReasoning" → "Ai chat reasoning", "max_tokens" → "Max tokens". */
const humanize = (word: string) => {
  const spaced = word.replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
};

const KNOWN_LABELS_ZH: Record<string, string> = {
  aiModel: "AI 模型", LLM: "AI 模型", model: "模型", aiSystemPrompt: "系统提示词", systemPrompt: "系统提示词",
  chatHistory: "聊天记录", history: "聊天记录", userChatInput: "用户问题", user_question: "用户问题",
  quoteQA: "知识库引用", datasetQuote: "知识库引用", selectDataset: "选择知识库", datasets: "知识库",
  temperature: "温度", maxToken: "回复上限", max_tokens: "回复上限", similarity: "最低相关度",
  limit: "引用上限", searchMode: "搜索模式", text: "文本", answerText: "AI 回复内容", isResponseAnswerText: "返回 AI 内容",
  "user question": "用户问题", "Ai response content": "AI 回复内容",
};

/** An input's label in the console's language: in English the console's own label for that key, else a
 *  FastGPT i18n key made readable; in Chinese FastGPT's Chinese label for the keys it names. */
const CHINESE_LABELS: Record<string, string> = {
  "用户问题": "User question", "问题": "Question", "聊天记录": "Chat history", "知识库引用": "Knowledge quotes",
  "AI 回复内容": "AI answer", "AI回复内容": "AI answer", "回复内容": "Reply text", "提示词": "Prompt", "系统提示词": "System prompt",
  "温度": "Temperature", "回复上限": "Max tokens", "选择知识库": "Knowledge bases", "文本": "Text", "结果": "Result",
};

export function inputLabel(input: FlowInput, flowNodeType: string): string {
  const raw = String(input.label ?? "");
  if (raw && lang() === "en" && CHINESE_LABELS[raw.trim()]) return CHINESE_LABELS[raw.trim()];
  if (raw && !isI18nKey(raw)) return raw;
  if (lang() === "zh") {
    const last = (raw || input.key).split(/[.:]/).pop() || input.key;
    const zh = KNOWN_LABELS_ZH[last] ?? KNOWN_LABELS_ZH[input.key];
    if (zh) return zh;
  }
  const own = templateInputs(flowNodeType).find((i) => i.key === input.key)?.label;
  if (own) return own;
  const last = (raw || input.key).split(/[.:]/).pop() || input.key;
  return KNOWN_LABELS[last] ?? KNOWN_LABELS[input.key] ?? humanize(last);
}

/** FastGPT's hidden internals (isResponseAnswerText, quoteTemplate, …): hidden inputs the console's own
 *  template for the node does not edit. The inspector keeps them behind "Advanced". */
export function isInternal(input: FlowInput, flowNodeType: string): boolean {
  const types = input.renderTypeList ?? [];
  if (!(types.length === 0 || types.every((t) => t === "hidden"))) return false;
  return !templateInputs(flowNodeType).some((i) => i.key === input.key);
}

export const newNodeId = () => Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[b % 62]).join("");

export function makeNode(type: string, position: { x: number; y: number }, nodeId = type === "workflowStart" ? "workflowStartNodeId" : newNodeId()): FlowNode {
  const t = templateOf(type)!;
  const built = t.build();
  return { nodeId, flowNodeType: type, name: t.name, intro: t.intro, position, version: "481", ...built } as FlowNode;
}

/** Source handles of a node: branch nodes have one per branch, others one "right" handle. */
export function sourceHandles(node: FlowNode): { id: string; label: string }[] {
  const input = (k: string) => node.inputs.find((i) => i.key === k)?.value as any;
  if (node.flowNodeType === "userSelect") return (input("userSelectOptions") ?? []).map((o: any) => ({ id: `${node.nodeId}-source-${o.key}`, label: o.value }));
  if (node.flowNodeType === "classifyQuestion") return (input("agents") ?? []).map((o: any) => ({ id: `${node.nodeId}-source-${o.key}`, label: o.value }));
  if (node.flowNodeType === "ifElseNode") {
    const list = input("ifElseList") ?? [];
    return [...list.map((_: unknown, i: number) => (i === 0 ? "IF" : `ELSE IF ${i}`)), "ELSE"].map((k) => ({ id: `${node.nodeId}-source-${k}`, label: k }));
  }
  return [{ id: `${node.nodeId}-source-right`, label: "" }];
}

export type SimpleForm = { model: string; systemPrompt: string; datasetIds: string[]; similarity: number; limit: number; searchMode: string; usingReRank: boolean; rerankModel: string; welcomeText: string; variables: { key: string; label: string; required: boolean }[] };

/** The simple-app form as the API's `simpleConfig` (the server compiles it to start → search → AI chat). */
export function simpleConfigOf(form: SimpleForm): Record<string, unknown> {
  const variables = form.variables.filter((v) => v.key.trim()).map((v) => ({ key: v.key.trim(), label: v.label || v.key, type: "input", required: v.required, valueType: "string" }));
  return {
    model: form.model.trim(),
    systemPrompt: form.systemPrompt,
    datasets: form.datasetIds.map((datasetId) => ({ datasetId })),
    datasetSearchSetting: { similarity: form.similarity, limit: form.limit, searchMode: form.searchMode, usingReRank: form.usingReRank, ...(form.usingReRank && form.rerankModel ? { rerankModel: form.rerankModel } : {}) },
    welcomeText: form.welcomeText,
    variables,
  };
}

/** Read the simple-app form back from a stored `simpleConfig`. */
export function simpleFormOf(config: Record<string, any> | undefined): SimpleForm {
  const c = config ?? {};
  const search = c.datasetSearchSetting ?? {};
  return {
    model: String(c.model ?? ""),
    systemPrompt: String(c.systemPrompt ?? ""),
    datasetIds: (c.datasets ?? []).map((d: any) => (typeof d === "string" ? d : d.datasetId)),
    similarity: Number(search.similarity ?? 0.4),
    limit: Number(search.limit ?? 3000),
    searchMode: String(search.searchMode ?? "mixedRecall"),
    usingReRank: !!search.usingReRank,
    rerankModel: String(search.rerankModel ?? ""),
    welcomeText: String(c.welcomeText ?? ""),
    variables: (c.variables ?? []).map((v: any) => ({ key: v.key, label: v.label ?? v.key, required: !!v.required })),
  };
}

/** The model picker an input needs: FastGPT's model render types, or the keys that name a model. */
export function modelTypeOf(input: FlowInput): "llm" | "embedding" | "rerank" | null {
  const types = input.renderTypeList ?? [];
  if (types.includes("settingLLMModel") || types.includes("selectLLMModel")) return "llm";
  if (input.key === "rerankModel" || types.includes("selectRerankModel")) return "rerank";
  if (input.key === "datasetSearchExtensionModel") return "llm";
  if (input.key === "embeddingModel" || types.includes("selectEmbeddingModel")) return "embedding";
  return input.key === "model" ? "llm" : null;
}

/** Some FastGPT template files carry render types as unresolved enum names ("FlowNodeInputTypeEnum.hidden");
 *  they mean "hidden", "reference", … like the plain values. */
export function normalizeNode(node: FlowNode): FlowNode {
  const plain = (t: string) => (typeof t === "string" ? t.replace(/^FlowNodeInputTypeEnum\./, "") : t);
  if (!node.inputs?.some((i) => i.renderTypeList?.some((t) => typeof t === "string" && t.startsWith("FlowNodeInputTypeEnum.")))) return node;
  return { ...node, inputs: node.inputs.map((i) => (i.renderTypeList ? { ...i, renderTypeList: i.renderTypeList.map(plain) } : i)) };
}
