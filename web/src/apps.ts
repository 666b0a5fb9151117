// App API helpers (FastGPT's /api/core/app/* paths) shared by the chat, apps and editor pages.
import { api } from "./api";

export type AppVariable = { key: string; label?: string; type?: string; required?: boolean; description?: string; defaultValue?: unknown; list?: { label: string; value: string }[]; enums?: { value: string }[] };
export type ChatConfig = { welcomeText?: string; variables?: AppVariable[]; [k: string]: unknown };
export type AppSummary = { _id: string; name: string; type: string; intro?: string; updateTime?: string };
export type AppDetail = AppSummary & { modules?: any[]; nodes?: any[]; edges?: any[]; chatConfig?: ChatConfig; [k: string]: unknown };

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

export const createApp = (body: { name: string; type: string; intro?: string; nodes: unknown[]; edges: unknown[]; chatConfig: unknown }) =>
  api<any>("POST", "/api/core/app/create", { ...body, modules: body.nodes }).then((d) => (typeof d === "string" ? d : d?._id ?? d?.id ?? d?.appId));

export const saveDraft = (appId: string, body: { nodes: unknown[]; edges: unknown[]; chatConfig: unknown; name?: string; intro?: string }) =>
  api("PUT", "/api/core/app/update", { ...body, modules: body.nodes }, { appId });

export const publishApp = (appId: string, body: { nodes: unknown[]; edges: unknown[]; chatConfig: unknown; versionName?: string }) =>
  api("POST", "/api/core/app/version/publish", { appId, ...body, isPublish: true }, { appId });

export type Version = { _id: string; versionName?: string; time?: string; isPublish?: boolean; tmbId?: string };
export const listVersions = async (appId: string): Promise<Version[]> => {
  const d = await api<any>("POST", "/api/core/app/version/list", { appId, offset: 0, pageSize: 30 });
  return (Array.isArray(d) ? d : d?.list ?? []).map((v: any) => ({ ...v, _id: v._id ?? v.id ?? v.versionId }));
};
export const getVersion = (appId: string, versionId: string) => api<any>("GET", "/api/core/app/version/detail", undefined, { appId, versionId });
export const deleteApp = (appId: string) => api("DELETE", "/api/core/app/del", undefined, { appId });
