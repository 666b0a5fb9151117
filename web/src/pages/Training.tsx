// How an import is trained (FastGPT's trainingType and its advanced options) and the chunks the knowledge
// base's model failed on (/api/core/dataset/training/getTrainingError), retried one by one or all at once
// (/api/core/dataset/training/updateTrainingData).
import { useCallback, useEffect, useState } from "react";
import { api } from "../api";
import { useEscape } from "../i18n";
import { t } from "../lang";

export type TrainingChoice = { mode: "chunk" | "qa" | "auto"; qaPrompt: string; imageIndex?: boolean };
export const CHUNK_TRAINING: TrainingChoice = { mode: "chunk", qaPrompt: "", imageIndex: false };

/** The request fields of a choice (the create/* routes take them). */
export function trainingFields(c: TrainingChoice): Record<string, unknown> {
  if (c.mode === "qa") return { trainingType: "qa", ...(c.qaPrompt.trim() ? { qaPrompt: c.qaPrompt.trim() } : {}) };
  if (c.mode === "auto") return { trainingType: "chunk", autoIndexes: true };
  return { trainingType: "chunk", ...(c.imageIndex ? { imageIndex: true } : {}) };
}

export function TrainingModeForm({ value, onChange }: { value: TrainingChoice; onChange: (c: TrainingChoice) => void }) {
  const set = (patch: Partial<TrainingChoice>) => onChange({ ...value, ...patch });
  return (
    <div className="col" data-testid="training-mode" style={{ gap: 6 }}>
      <div className="row wrap small">
        <b>{t("Training")}</b>
        <label className="inline"><input type="radio" name="trainingMode" value="chunk" checked={value.mode === "chunk"} onChange={() => set({ mode: "chunk" })} />{t("Chunks")}</label>
        <label className="inline" title={t("The knowledge base's model writes question/answer pairs from each chunk; the pairs are stored")}><input type="radio" name="trainingMode" value="qa" checked={value.mode === "qa"} onChange={() => set({ mode: "qa" })} />{t("Q&A by the model")}</label>
        <label className="inline" title={t("The knowledge base's model writes a summary and questions for each chunk, stored as extra indexes")}><input type="radio" name="trainingMode" value="auto" checked={value.mode === "auto"} onChange={() => set({ mode: "auto" })} />{t("Chunks + auto indexes")}</label>
      </div>
      {value.mode === "chunk" && (
        <label className="inline small" title={t("Images in the document are described by the knowledge base's vision model (vlmModel); each description is an extra index of the chunk that holds the image")}><input type="checkbox" name="imageIndex" checked={!!value.imageIndex} onChange={(e) => set({ imageIndex: e.target.checked })} />{t("Image indexes")}</label>
      )}
      {value.mode === "qa" && (
        <textarea name="qaPrompt" rows={2} placeholder={t("Instructions for the model (optional; the default asks for up to 30 detailed question/answer pairs)")} value={value.qaPrompt} onChange={(e) => set({ qaPrompt: e.target.value })} />
      )}
    </div>
  );
}

/** A collection's training mode in a few words ("" for plain chunks). */
export function trainingLabel(c: { trainingType?: string; autoIndexes?: boolean; imageIndex?: boolean }): string {
  if (c.trainingType === "qa") return t("Q&A");
  if (c.trainingType === "imageParse") return t("image description");
  if (c.imageIndex) return t("image indexes");
  return c.autoIndexes ? t("auto indexes") : "";
}

type Failed = { _id: string; mode: string; q: string; chunkIndex: number; errorMsg: string };

/** The chunks of a collection the model failed on, with "Retry" for each and for all. */
export function TrainingErrors({ datasetId, collection, onClose }: { datasetId: string; collection: { _id: string; name: string }; onClose: () => void }) {
  const [items, setItems] = useState<Failed[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState("");
  useEscape(onClose);
  const load = useCallback(() => {
    api<{ list: Failed[]; total: number }>("POST", "/api/core/dataset/training/getTrainingError", { collectionId: collection._id, pageSize: 30 })
      .then((p) => { setItems(p.list); setTotal(p.total); })
      .catch((e) => setError(e.message));
  }, [collection._id]);
  useEffect(load, [load]);
  const retry = async (dataId?: string) => {
    try {
      await api("PUT", "/api/core/dataset/training/updateTrainingData", { datasetId, collectionId: collection._id, ...(dataId ? { dataId } : {}) });
      load();
    } catch (e) { setError((e as Error).message); }
  };
  return (
    <div className="modal-bg" onClick={onClose}>
      <div className="card modal col" data-testid="training-errors" onClick={(e) => e.stopPropagation()}>
        <div className="row"><h2 style={{ margin: 0 }}>{t("Failed chunks")} · {collection.name}</h2><div className="grow" /><button onClick={onClose}>{t("Close")}</button></div>
        <div className="row small"><span className="muted">{t("The model failed on {n} chunks; retrying asks it again.", { n: total })}</span><div className="grow" />{total > 0 && <button onClick={() => retry()}>{t("↻ Retry all")}</button>}</div>
        {error && <div className="error">{error}</div>}
        {items.length === 0 && <div className="muted small">{t("No failed chunks.")}</div>}
        {items.map((item) => (
          <div key={item._id} className="chunk" data-failed-chunk={item.chunkIndex}>
            <div className="row small muted"><span>#{item.chunkIndex} · {item.mode}</span><div className="grow" /><button onClick={() => retry(item._id)}>{t("↻ Retry")}</button></div>
            <div className="small" style={{ color: "var(--bad)" }}>{item.errorMsg}</div>
            <pre>{item.q}</pre>
          </div>
        ))}
      </div>
    </div>
  );
}
