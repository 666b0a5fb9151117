// The console's language: English or Simplified Chinese, from the browser (navigator.language) until the
// user picks one, which is kept in this browser (localStorage "fathom.lang"). t() gives a string in the
// chosen language; strings without a translation stay in English.
export type Lang = "en" | "zh";
const STORAGE = "fathom.lang";

export function getLang(): Lang {
  const chosen = localStorage.getItem(STORAGE);
  if (chosen === "en" || chosen === "zh") return chosen;
  return (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
}

/** Keep the choice and reload, so every page renders in it. */
export function setLang(lang: Lang): void {
  localStorage.setItem(STORAGE, lang);
  location.reload();
}

const ZH: Record<string, string> = {
  "Chat": "对话", "Knowledge": "知识库", "Apps": "应用", "Keys & usage": "密钥与用量",
  "Sign in": "登录", "Sign out": "退出登录", "Checking…": "验证中…", "API key": "API 密钥", "Menu": "菜单",
  "Signed in as": "当前身份", "API docs ↗": "API 文档 ↗",
  "Knowledge bases, workflows and agents. Paste an API key to sign in; it is kept in this browser only.": "知识库、工作流与智能体。粘贴 API 密钥登录；密钥只保存在本浏览器中。",
  "Knowledge bases": "知识库", "Upload documents, watch them being indexed, and test retrieval.": "上传文档，查看索引进度，测试检索。",
  "Create": "创建", "Delete": "删除", "Files & data": "文件与数据", "Search test": "搜索测试",
  "Chunking": "分块", "Custom": "自定义", "Automatic (1,000 characters, paragraphs first)": "自动（1,000 字符，优先按段落）",
  "Q&A pairs (question, answer per row)": "问答对（每行：问题, 答案）", "Chunk size (characters)": "分块大小（字符）",
  "Overlap (%)": "重叠（%）", "Separator (optional, \\n for a newline)": "分隔符（可选，\\n 表示换行）",
  "Preview chunks": "预览分块", "Embedding model": "索引模型", "Server default": "系统默认",
  "Model": "模型", "Save draft": "保存草稿", "Save & publish": "保存并发布", "Publish": "发布", "Run": "运行",
  "Import": "导入", "Export": "导出", "Variables": "变量", "Versions": "版本", "Search": "搜索",
  "Simple apps answer from knowledge bases with one model; workflows chain nodes visually.": "简易应用用一个模型基于知识库回答；工作流以可视化方式串联节点。",
  "not configured here": "本系统未配置", "is not configured here; runs on": "在本系统未配置，将使用",
  "Run the canvas": "运行画布", "Run & debug": "运行与调试", "Close": "关闭",
};

let current: Lang | null = null;
export const lang = (): Lang => (current ??= getLang());

export function t(en: string): string {
  return lang() === "zh" ? ZH[en] ?? en : en;
}
