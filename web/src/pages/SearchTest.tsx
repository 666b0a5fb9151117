import { useState } from "react";
import { api } from "../api";
import { plural } from "../i18n";
import { ModelPicker, useModels } from "../models";
import { t } from "../lang";

type Score = { type: string; value: number; index: number };
type Stage = { stage: string; score: number | null; rank: number | null; passed: boolean; detail: string | null };
type Item = { id: string; q: string; a: string; sourceName: string; collectionId: string; chunkIndex: number; score: Score[]; trace: { stages: Stage[]; cutBy: string | null } };
type Result = { list: Item[]; cutList?: Item[]; duration: string; searchMode: string; limit: number; similarity: number; usingReRank: boolean };

const MODES = [
  { value: "embedding", label: t("Semantic (vectors)") },
  { value: "fullTextRecall", label: t("Full text") },
  { value: "mixedRecall", label: t("Hybrid (RRF)") },
];

export function SearchTest({ datasetId }: { datasetId: string }) {
  const [text, setText] = useState("");
  const [searchMode, setMode] = useState("mixedRecall");
  const [embeddingWeight, setWeight] = useState(0.5);
  const [usingReRank, setReRank] = useState(false);
  const [rerankWeight, setRerankWeight] = useState(0.5);
  const [similarity, setSimilarity] = useState(0);
  const [limit, setLimit] = useState(3000);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [showCut, setShowCut] = useState(false);
  // The server answers usingReRank: false when rerank was asked for but no rerank model is configured.
  const [serverSaidNoReranker, setNoReranker] = useState(false);
  const rerankers = useModels("rerank");
  const noReranker = serverSaidNoReranker || rerankers?.length === 0;
  const [rerankModel, setRerankModel] = useState("");
  // FastGPT's rule: the minimum relevance does not apply to hybrid (RRF) scores unless they are reranked.
  const similarityIgnored = searchMode === "mixedRecall" && !(usingReRank && !noReranker);

  const run = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const found = await api<Result>("POST", "/api/core/dataset/searchTest", { datasetId, text, searchMode, embeddingWeight, usingReRank: usingReRank && !noReranker, rerankWeight, ...(rerankModel ? { rerankModel } : {}), similarity: similarityIgnored ? 0 : similarity, limit });
      if (usingReRank && !found.usingReRank) { setNoReranker(true); setReRank(false); }
      setResult(found);
    } catch (err) { setError((err as Error).message); setResult(null); }
    finally { setBusy(false); }
  };

  return (
    <div className="row top" style={{ gap: 16 }}>
      <form className="card col search-form" onSubmit={run}>
        <label>{t("Query")}<textarea name="query" rows={3} value={text} onChange={(e) => setText(e.target.value)} placeholder={t("Ask something the documents answer…")} /></label>
        <label>{t("Mode")}
          <select name="searchMode" value={searchMode} onChange={(e) => setMode(e.target.value)}>
            {MODES.map((m) => <option key={m.value} value={m.value}>{t(m.label)}</option>)}
          </select>
        </label>
        {searchMode === "mixedRecall" && (
          <label>{t("Vector weight:")} {embeddingWeight.toFixed(2)} {t("(full text")} {(1 - embeddingWeight).toFixed(2)})
            <input type="range" min={0} max={1} step={0.05} value={embeddingWeight} onChange={(e) => setWeight(+e.target.value)} />
          </label>
        )}
        <label className="inline" title={noReranker ? t("No rerank model is configured on this server") : ""}><input type="checkbox" name="usingReRank" disabled={noReranker} checked={usingReRank} onChange={(e) => setReRank(e.target.checked)} /> {t("Rerank")}</label>
        {noReranker && <div className="muted small" data-testid="rerank-note">{t("Rerank is unavailable: no rerank model is configured (add one with")} <code>type: rerank</code> {t("to the models file).")}</div>}
        {usingReRank && !noReranker && <label>{t("Rerank model")}<ModelPicker type="rerank" name="rerankModel" value={rerankModel} onChange={setRerankModel} /></label>}
        {usingReRank && (
          <label>{t("Rerank weight:")} {rerankWeight.toFixed(2)}
            <input type="range" min={0} max={1} step={0.05} value={rerankWeight} onChange={(e) => setRerankWeight(+e.target.value)} />
          </label>
        )}
        <label>{t("Minimum relevance:")} {similarityIgnored ? t("does not apply") : similarity.toFixed(2)}
          <input type="range" name="similarity" min={0} max={1} step={0.01} disabled={similarityIgnored} value={similarityIgnored ? 0 : similarity} onChange={(e) => setSimilarity(+e.target.value)} />
        </label>
        {similarityIgnored && <div className="muted small" data-testid="similarity-note">{t("Hybrid scores are rank fusions (RRF), not relevance, so a minimum relevance applies only with rerank (as in FastGPT).")}</div>}
        <label>{t("Token limit")}<input type="number" min={100} max={20000} step={100} value={limit} onChange={(e) => setLimit(+e.target.value)} /></label>
        <button className="primary" disabled={!text.trim() || busy}>{busy ? t("Searching…") : t("Search")}</button>
        {error && <div className="error">{error}</div>}
      </form>
      <div className="col grow" style={{ minWidth: 0 }}>
        {!result && <div className="card muted">{t("Results show each chunk's scores and a trace of every pipeline stage (recall, fusion, rerank, filters), so you can see why a chunk ranked where it did — or why it was cut.")}</div>}
        {result && (
          <>
            <div className="muted small" data-testid="search-summary">
              {plural(result.list.length, "result")} {t("in")} {result.duration} · {result.searchMode} {t("· limit")} {result.limit}{result.usingReRank ? " · reranked" : ""}
              {result.cutList && result.cutList.length > 0 && (
                <> · <button className="link small" onClick={() => setShowCut(!showCut)}>{showCut ? "hide" : "show"} {result.cutList.length} {t("cut")}</button></>
              )}
            </div>
            {result.list.map((item, i) => <Hit key={item.id} item={item} rank={i + 1} />)}
            {showCut && result.cutList?.map((item) => <Hit key={"cut" + item.id} item={item} rank={0} />)}
          </>
        )}
      </div>
    </div>
  );
}

export function ScoreTrace({ item }: { item: Pick<Item, "score" | "trace"> }) {
  return (
    <div className="trace" data-testid="trace">
      {item.trace?.stages?.map((s, i) => (
        <span key={i} className={"stage" + (s.passed ? "" : " cut")} title={s.detail ?? ""}>
          <b>{s.stage}</b>{s.score !== null && s.score !== undefined ? ` ${s.score.toFixed(4)}` : ""}{s.rank !== null && s.rank !== undefined ? ` #${s.rank + 1}` : ""}{s.passed ? "" : " ✕"}
        </span>
      ))}
      {item.trace?.cutBy && <span className="stage cut">{t("cut by")} <b>{item.trace.cutBy}</b></span>}
    </div>
  );
}

function Hit({ item, rank }: { item: Item; rank: number }) {
  return (
    <div className="chunk" data-testid="search-hit">
      <div className="row small">
        <b>{rank ? `#${rank}` : "cut"}</b>
        <span className="muted">{item.sourceName} {t("· chunk")} {item.chunkIndex}</span>
        <div className="grow" />
        {item.score.map((s) => <span key={s.type} className="badge">{s.type} {s.value.toFixed(4)}</span>)}
      </div>
      <pre style={{ marginTop: 6 }}>{item.q}</pre>
      {item.a && <pre className="muted">{item.a}</pre>}
      <ScoreTrace item={item} />
    </div>
  );
}
