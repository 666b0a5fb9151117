// Chunk settings for an import (FastGPT's chunkSettings plus Fathom's overlap and Q&A pairs) and the
// preview of the first chunks (/api/core/dataset/file/getPreviewChunks) before anything is stored.
import { useState } from "react";
import { api } from "../api";
import { plural } from "../i18n";
import { t } from "../lang";

export type ChunkChoice = { mode: "auto" | "custom"; chunkSize: number; overlapPct: number; separator: string; qaPairs: boolean };
export const AUTO_CHUNKS: ChunkChoice = { mode: "auto", chunkSize: 1000, overlapPct: 15, separator: "", qaPairs: false };

/** "\n\n" typed in the separator field means two newlines. */
const unescape = (s: string) => s.replace(/\\n/g, "\n").replace(/\\t/g, "\t");

/** The request fields of a choice (create/* and getPreviewChunks take the same). */
export function chunkFields(c: ChunkChoice): Record<string, unknown> {
  if (c.mode === "auto") return c.qaPairs ? { chunkSettingMode: "auto", qaPairs: true } : { chunkSettingMode: "auto" };
  return {
    chunkSettingMode: "custom",
    chunkSize: c.chunkSize,
    chunkOverlapRatio: Math.min(Math.max(c.overlapPct, 0), 40) / 100,
    ...(c.separator ? { chunkSplitter: unescape(c.separator) } : {}),
    ...(c.qaPairs ? { qaPairs: true } : {}),
  };
}

export function ChunkSettingsForm({ value, onChange }: { value: ChunkChoice; onChange: (c: ChunkChoice) => void }) {
  const set = (patch: Partial<ChunkChoice>) => onChange({ ...value, ...patch });
  return (
    <div className="col chunk-settings" data-testid="chunk-settings" style={{ gap: 6 }}>
      <div className="row wrap small">
        <b>{t("Chunking")}</b>
        <label className="inline"><input type="radio" name="chunkMode" checked={value.mode === "auto"} onChange={() => set({ mode: "auto" })} />{t("Automatic (1,000 characters, paragraphs first)")}</label>
        <label className="inline"><input type="radio" name="chunkMode" value="custom" checked={value.mode === "custom"} onChange={() => set({ mode: "custom" })} />{t("Custom")}</label>
        <label className="inline" title={t("A CSV or text table: the first column is the question, the second the answer; one chunk per row")}><input type="checkbox" name="qaPairs" checked={value.qaPairs} onChange={(e) => set({ qaPairs: e.target.checked })} />{t("Q&A pairs (question, answer per row)")}</label>
      </div>
      {value.mode === "custom" && !value.qaPairs && (
        <div className="row wrap small">
          <label>{t("Chunk size (characters)")}<input type="number" name="chunkSize" min={64} max={30000} step={50} value={value.chunkSize} onChange={(e) => set({ chunkSize: +e.target.value })} /></label>
          <label>{t("Overlap (%)")}<input type="number" name="chunkOverlap" min={0} max={40} step={5} value={value.overlapPct} onChange={(e) => set({ overlapPct: +e.target.value })} /></label>
          <label>{t("Separator (optional, \\n for a newline)")}<input name="chunkSplitter" placeholder={t("e.g. ### or \\n\\n")} value={value.separator} onChange={(e) => set({ separator: e.target.value })} /></label>
        </div>
      )}
    </div>
  );
}

type Preview = { chunks: { q: string; a: string; chars: number }[]; total: number; chunkSize: number; overlapRatio: number; qaPairs: boolean };

/** "Preview chunks" for a text or a file, showing the first chunks the import would make. */
export function ChunkPreview({ datasetId, choice, text, file }: { datasetId: string; choice: ChunkChoice; text?: string; file?: File }) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true); setError("");
    try {
      const fields = { datasetId, ...chunkFields(choice), limit: 5 };
      let body: unknown = { ...fields, text };
      if (file) { const form = new FormData(); form.append("file", file, file.name); form.append("data", JSON.stringify(fields)); body = form; }
      setPreview(await api<Preview>("POST", "/api/core/dataset/file/getPreviewChunks", body));
    } catch (e) { setError((e as Error).message); setPreview(null); }
    finally { setBusy(false); }
  };
  return (
    <div className="col" style={{ gap: 6 }}>
      <div><button type="button" className="small" disabled={busy || (!file && !text?.trim())} onClick={run}>{busy ? t("Chunking…") : file ? t("Preview chunks of {name}", { name: file.name }) : t("Preview chunks")}</button></div>
      {error && <div className="error">{error}</div>}
      {preview && (
        <div className="col chunk-preview" data-testid="chunk-preview" style={{ gap: 6 }}>
          <div className="muted small" data-testid="chunk-preview-summary">
            {plural(preview.total, "chunk")}{preview.qaPairs ? t(" (Q&A pairs)") : t(" of up to {size} characters, {overlap}% overlap", { size: preview.chunkSize.toLocaleString(), overlap: Math.round(preview.overlapRatio * 100) })}{t("; the first")} {Math.min(preview.chunks.length, preview.total)}:
          </div>
          {preview.chunks.map((c, i) => (
            <div key={i} className="chunk small" data-testid="preview-chunk">
              <div className="muted">#{i + 1} · {c.chars.toLocaleString()} {t("characters")}</div>
              <div style={{ whiteSpace: "pre-wrap" }}>{c.q}</div>
              {c.a && <div style={{ whiteSpace: "pre-wrap", marginTop: 4 }}><b>A:</b> {c.a}</div>}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
