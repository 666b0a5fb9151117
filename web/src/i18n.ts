// English labels for what FastGPT-compatible data carries in Chinese: FastGPT's default node names
// (workflows made or exported by FastGPT, and Fathom's compiled simple apps keep them) and the
// status prefixes of FastGPT's error messages (Fathom answers them for compatibility) in either language.
import { useEffect } from "react";
import errorTable from "./errors.json";
import { countOf, lang } from "./lang";

const NODE_NAMES: Record<string, string> = {
  "流程开始": "Start",
  "系统配置": "System config",
  "全局变量": "Global variables",
  "AI 对话": "AI chat",
  "AI对话": "AI chat",
  "知识库搜索": "Knowledge base search",
  "知识库搜索引用合并": "Merge knowledge quotes",
  "指定回复": "Reply",
  "问题分类": "Classify question",
  "文本内容提取": "Content extract",
  "问题优化": "Query extension",
  "判断器": "If / else",
  "HTTP 请求": "HTTP request",
  "HTTP请求": "HTTP request",
  "代码运行": "Run code",
  "用户选择": "User select",
  "表单输入": "Form input",
  "变量更新": "Update variables",
  "文本拼接": "Text template",
  "工具调用": "Tool call",
  "工具调用终止": "Stop tool call",
  "自定义插件输入": "Plugin input",
  "自定义插件输出": "Plugin output",
  "插件输入": "Plugin input",
  "插件输出": "Plugin output",
  "文档解析": "Read files",
  "文件解析": "Read files",
  "批量执行": "Loop",
  "自定义反馈": "Custom feedback",
  "应用调用": "Run app",
  "Laf 函数调用": "Laf function",
  "使用说明": "Instructions",
  "注释": "Comment",
};

// The server's error table (src/fathom/server/errors.py FASTGPT_ERRORS; tests/console/test_console_error_labels.py
// keeps the two equal): statusText → the text the server's message starts with and its label per language.
type ErrorLabel = { code: number; server: string; en: string; zh: string };
const ERRORS = errorTable as Record<string, ErrorLabel>;
/** Looked up by prefix when a message comes without its statusText; longest first ("未授权应用" before "未授权"). */
const BY_PREFIX = Object.values(ERRORS).sort((a, b) => b.server.length - a.server.length);
/** FastGPT's fixed error strings outside the table. */
const OTHER_PREFIXES: [string, string][] = [
  ["您的工作流版本过低，请重新发布一次", "This workflow's version is too old: publish it again"],
];

const NODE_NAMES_ZH: Record<string, string> = {
  ...Object.fromEntries(Object.entries(NODE_NAMES).filter(([zh]) => zh !== "AI对话").map(([zh, en]) => [en, zh])),
  "Knowledge search": "知识库搜索", "Code": "代码运行", "Reply": "指定回复", "If / else": "判断器",
};

/** A FastGPT default node name in the console's language (English, or FastGPT's own Chinese name);
 *  any other name unchanged. */
export function nodeName(name: string | undefined | null): string {
  if (!name) return "";
  const trimmed = name.trim();
  if (lang() === "zh") return NODE_NAMES_ZH[trimmed] ?? trimmed;
  return NODE_NAMES[trimmed] ?? name;
}

/** A server message with its FastGPT status prefix in the console's language: "未授权应用: app 1 …" (or
 *  "No access to this app: app 1 …", as the server writes it for a browser that prefers English) is
 *  "No access to this app: app 1 …" in English and "未授权应用: app 1 …" in Chinese. `statusText` (the
 *  envelope's) picks the entry; without it a message is matched by its prefix. Any other message is
 *  unchanged. */
export function message(text: string, statusText = ""): string {
  const zh = lang() === "zh";
  const known = Object.hasOwn(ERRORS, statusText) ? ERRORS[statusText] : undefined;
  for (const entry of known ? [known] : BY_PREFIX) {
    for (const prefix of [entry.server, entry.en, entry.zh]) {
      const rest = text.slice(prefix.length);
      if (!text.startsWith(prefix) || (!known && rest && !rest.startsWith(":"))) continue;
      return (zh ? entry.zh : entry.en) + rest;
    }
  }
  if (!zh) for (const [prefix, en] of OTHER_PREFIXES) if (text.startsWith(prefix)) return en + text.slice(prefix.length);
  return text;
}

/** "1 result", "2 results". */
export function plural(n: number, one: string, many = one + "s"): string {
  return countOf(n, one, many);
}

/** Close a dialog with Esc while it is open. */
export function useEscape(onClose: () => void, open = true): void {
  useEffect(() => {
    if (!open) return;
    const handler = (e: KeyboardEvent) => { if (e.key === "Escape") onClose(); };
    window.addEventListener("keydown", handler);
    return () => window.removeEventListener("keydown", handler);
  }, [onClose, open]);
}
