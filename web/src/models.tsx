// The models this server can run (/api/core/ai/model/list), shared by every model picker.
// A name that is not configured here runs on the default model of its type, as FastGPT's
// getLLMModel / getEmbeddingModel / getRerankModel fall back; the picker says so instead of hiding it.
import { useEffect, useState } from "react";
import { api } from "./api";
import { t } from "./lang";

export type ModelType = "llm" | "embedding" | "rerank";
export type ModelItem = { type: ModelType; model: string; name: string; provider: string; isDefault: boolean; maxContext?: number };

let cached: Promise<ModelItem[]> | null = null;

/** The model list, fetched once per page load (an error yields an empty list and is retried next time). */
export function loadModels(): Promise<ModelItem[]> {
  if (!cached) cached = api<ModelItem[]>("GET", "/api/core/ai/model/list").catch(() => { cached = null; return []; });
  return cached;
}

export function useModels(type: ModelType): ModelItem[] | null {
  const [items, setItems] = useState<ModelItem[] | null>(null);
  useEffect(() => { let live = true; loadModels().then((all) => live && setItems(all.filter((m) => m.type === type))); return () => { live = false; }; }, [type]);
  return items;
}

const WHAT: Record<ModelType, string> = { llm: "chat", embedding: "embedding", rerank: "rerank" };

/** What a model name runs on here: itself, or the default of its type (null: none configured). */
export function resolveModel(items: ModelItem[], value: string): { known: boolean; runsOn: ModelItem | null } {
  const found = items.find((m) => m.model === value);
  return { known: !!found, runsOn: found ?? items.find((m) => m.isDefault) ?? items[0] ?? null };
}

/** A select of the configured models of one type; an unknown current value stays selectable and is flagged. */
export function ModelPicker({ type, value, onChange, name, allowDefault = true }: { type: ModelType; value: string; onChange: (v: string) => void; name?: string; allowDefault?: boolean }) {
  const items = useModels(type);
  if (items === null) return <select name={name} disabled><option>{t("Loading models…")}</option></select>;
  const { known, runsOn } = resolveModel(items, value);
  const label = (m: ModelItem) => `${m.name}${m.name !== m.model ? ` (${m.model})` : ""}${m.isDefault ? t(" · default") : ""}`;
  return (
    <span className="col" style={{ gap: 2 }}>
      <select name={name} data-testid={`model-picker-${type}`} value={value} onChange={(e) => onChange(e.target.value)}>
        {allowDefault && <option value="">{t("Server default")}{runsOn ? ` (${runsOn.name})` : ""}</option>}
        {value && !known && <option value={value}>{value} — {t("not configured here")}</option>}
        {items.map((m) => <option key={m.model} value={m.model}>{label(m)}</option>)}
      </select>
      {value && !known && (
        <span className="warn small" data-testid="model-fallback">
          {runsOn ? <><code>{value}</code> {t("is not configured here; runs on")} <b>{runsOn.name}</b>.</> : <><code>{value}</code> {t("is not configured here, and no")} {WHAT[type]} {t("model is: it cannot run.")}</>}
        </span>
      )}
      {!value && !runsOn && <span className="warn small" data-testid="model-none">{t("No")} {WHAT[type]} {t("model is configured on this server.")}</span>}
    </span>
  );
}
