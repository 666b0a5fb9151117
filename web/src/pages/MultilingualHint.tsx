// A new knowledge base's first upload that is mostly Chinese, Japanese or Korean: suggest the multilingual
// local model when the knowledge base is on the English one (same rule as the server's vectorModel "auto":
// at least half of the letters are CJK; fathom/datasets/auto_model.py).
import { useEffect, useState } from "react";
import { api } from "../api";
import { t } from "../lang";
import { useModels } from "../models";

export const ENGLISH_MODEL = "local/all-MiniLM-L6-v2-int8";
export const MULTILINGUAL_MODEL = "local/multilingual-e5-small";
const CJK = /[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const LETTER = /\p{L}/u;

/** The share of the text's letters (its first 5,000) that are CJK; null without letters. */
export function cjkShare(text: string): number | null {
  let letters = 0, cjk = 0;
  for (const char of text) {
    if (!LETTER.test(char)) continue;
    letters += 1;
    if (CJK.test(char)) cjk += 1;
    if (letters >= 5000) break;
  }
  return letters ? cjk / letters : null;
}

/** The text to judge a staged file by: the server's chunk preview of it (any format it parses). */
async function fileText(datasetId: string, file: File): Promise<string> {
  const form = new FormData();
  form.append("file", file, file.name);
  form.append("data", JSON.stringify({ datasetId, limit: 5 }));
  const preview = await api<{ chunks: { q: string; a: string }[] }>("POST", "/api/core/dataset/file/getPreviewChunks", form);
  return preview.chunks.map((c) => `${c.q}\n${c.a}`).join("\n");
}

export function MultilingualHint({ datasetId, model, text, file, onSwitched }: { datasetId: string; model: string; text?: string; file?: File; onSwitched: () => void }) {
  const [share, setShare] = useState<number | null>(null);
  const [error, setError] = useState("");
  const embedding = useModels("embedding");
  useEffect(() => {
    let live = true;
    if (model !== ENGLISH_MODEL) { setShare(null); return; }
    if (file) fileText(datasetId, file).then((s) => live && setShare(cjkShare(s))).catch(() => live && setShare(null));
    else setShare(cjkShare(text ?? ""));
    return () => { live = false; };
  }, [datasetId, model, text, file]);
  if (share === null || share < 0.5 || embedding === null) return null;
  const installed = embedding.some((m) => m.model === MULTILINGUAL_MODEL);
  const use = async () => {
    setError("");
    try { await api("POST", "/api/core/dataset/update", { id: datasetId, vectorModel: MULTILINGUAL_MODEL }); onSwitched(); }
    catch (e) { setError((e as Error).message); }
  };
  return (
    <div className="warn small" data-testid="multilingual-hint">
      {t("This text is {share}% Chinese, Japanese or Korean; this knowledge base's model {model} reads English only.", { share: String(Math.round(share * 100)), model })}{" "}
      {installed
        ? <button type="button" className="small" onClick={use}>{t("Use {model}", { model: MULTILINGUAL_MODEL })}</button>
        : <>{t("Install the multilingual model:")} <code>make multilingual</code> {t("(or pip install 'fathom[multilingual]'), restart, then pick it.")}</>}
      {error && <div className="error">{error}</div>}
    </div>
  );
}
