// App API helpers (FastGPT's /api/core/app/* paths) shared by the chat, apps and editor pages.
import { api } from "./api";
import { t } from "./lang";

export type AppVariable = { key: string; label?: string; type?: string; required?: boolean; description?: string; defaultValue?: unknown; list?: { label: string; value: string }[]; enums?: { value: string }[] };
export type ChatConfig = { welcomeText?: string; variables?: AppVariable[]; [k: string]: unknown };
export type AppSummary = { _id: string; name: string; type: string; intro?: string; updateTime?: string; hasPublished?: boolean };
export type AppDetail = AppSummary & { modules?: any[]; nodes?: any[]; edges?: any[]; chatConfig?: ChatConfig; simpleConfig?: Record<string, any>; [k: string]: unknown };

/** The app type as the console names it: FastGPT's "advanced" (and "workflow") is a Workflow. */
export const typeLabel = (type?: string): string =>
  t(type === "simple" ? "Simple app" : type === "advanced" || type === "workflow" ? "Workflow" : type === "plugin" || type === "workflowTool" ? "Workflow tool" : type ?? "");

export const listApps = async (): Promise<AppSummary[]> => {
  const data = await api<any>("POST", "/api/core/app/list", {});
  return (Array.isArray(data) ? data : data?.list ?? []).map((a: any) => ({ ...a, _id: a._id ?? a.id ?? a.appId }));
};

export const getApp = async (appId: string): Promise<AppDetail> => {
  const a = await api<any>("GET", "/api/core/app/detail", undefined, { appId });
  return { ...a, _id: a._id ?? a.id ?? appId, nodes: a.nodes ?? a.modules ?? [], edges: a.edges ?? [] };
};

export const newChatId = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
};

/** Create an app: a simple app from its form (`simpleConfig`), a workflow from nodes/edges/chatConfig. */
export const createApp = (body: { name: string; type: string; intro?: string; [k: string]: unknown }) =>
  api<any>("POST", "/api/core/app/create", body).then((d) => (typeof d === "string" ? d : d?._id ?? d?.id ?? d?.appId));

/** Save the draft: `{simpleConfig}` for a simple app, `{nodes, edges, chatConfig}` for a workflow. */
export const saveDraft = (appId: string, body: Record<string, unknown>) => api("POST", "/api/core/app/update", { appId, ...body });

export const publishApp = (appId: string, body: Record<string, unknown>) =>
  api<{ versionId: string; versionName: string; problems?: { nodeId: string; field: string; problem: string; level: "error" | "warning" }[] }>("POST", "/api/core/app/version/publish", { appId, ...body, isPublish: true });

export type Version = { _id: string; versionName?: string; time?: string; isPublish?: boolean; tmbId?: string };
export const listVersions = async (appId: string): Promise<Version[]> => {
  const d = await api<any>("POST", "/api/core/app/version/list", { appId, offset: 0, pageSize: 30 });
  return (Array.isArray(d) ? d : d?.list ?? []).map((v: any) => ({ ...v, _id: v._id ?? v.id ?? v.versionId }));
};
export const getVersion = (appId: string, versionId: string) => api<any>("POST", "/api/core/app/version/detail", { appId, versionId });
export const deleteApp = (appId: string) => api("POST", "/api/core/app/del", { appId });
