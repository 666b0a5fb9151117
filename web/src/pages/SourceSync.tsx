import { useCallback, useEffect, useRef, useState } from "react";
import { api, fmtTime } from "../api";
import { Icon } from "../icons";
import { t } from "../lang";

// A knowledge base's external source (docs/knowledge.md §8): the API file library's picker, "Sync now"
// and the sync history with what each run saw, changed and failed on.
export type SourceFields = {
  type?: string;
  apiServer?: { baseUrl: string } | null;
  websiteConfig?: { url: string } | null;
  autoSync?: boolean | null;
  nextSyncTime?: string | null;
};
type ApiFile = { id: string; parentId: string | null; name: string; type: string; hasChild: boolean };
type SyncRun = {
  syncId: string; trigger: string; status: string; seen: number; added: number; changed: number; unchanged: number;
  deleted: number; failed: number; failures: { source: string; error: string }[]; error: string | null; createTime: string;
};
const ACTIVE = new Set(["queued", "running"]);

export function SourcePanel({ datasetId, dataset, onChanged }: { datasetId: string; dataset: SourceFields; onChanged: () => void }) {
  const [runs, setRuns] = useState<SyncRun[]>([]);
  const [error, setError] = useState("");
  const load = useCallback(async () => {
    try {
      const list = await api<SyncRun[]>("POST", "/api/core/dataset/syncHistory", { datasetId });
      setRuns(list);
      return list.some((run) => ACTIVE.has(run.status));
    } catch (e) { setError((e as Error).message); return false; }
  }, [datasetId]);
  // Live progress: poll every second while a run is queued or running; the file list refreshes when one ends.
  const timer = useRef<number | undefined>(undefined);
  const busy = useRef(false);
  const poll = useCallback(async () => {
    window.clearTimeout(timer.current);
    const active = await load();
    if (busy.current && !active) onChanged();
    busy.current = active;
    if (active) timer.current = window.setTimeout(poll, 1000);
  }, [load, onChanged]);
  useEffect(() => { poll(); return () => window.clearTimeout(timer.current); }, [poll]);
  const syncNow = async () => {
    setError("");
    try { await api("POST", "/api/core/dataset/sync", { datasetId }); poll(); }
    catch (e) { setError((e as Error).message); }
  };
  const source = dataset.type === "apiDataset" ? dataset.apiServer?.baseUrl : dataset.type === "websiteDataset" ? dataset.websiteConfig?.url : "";
  if (!source && runs.length === 0) return null;
  return (
    <div className="card col" data-testid="source-panel">
      <div className="row">
        <h3 style={{ margin: 0 }}><Icon name="link" /> {dataset.type === "apiDataset" ? t("API file library") : dataset.type === "websiteDataset" ? t("Website") : t("Sync")}</h3>
        {source && <span className="muted small">{source}</span>}
        <div className="grow" />
        {dataset.autoSync && <span className="muted small">{t("auto-sync, next")} {fmtTime(dataset.nextSyncTime ?? "")}</span>}
        <button onClick={syncNow} disabled={runs.some((run) => ACTIVE.has(run.status))}>{t("↻ Sync now")}</button>
      </div>
      {dataset.type === "apiDataset" && <ApiFilePicker datasetId={datasetId} onAdded={() => { poll(); onChanged(); }} />}
      {error && <div className="error">{error}</div>}
      {runs.length > 0 && (
        <table className="collections" data-testid="sync-history">
          <thead><tr><th>{t("Sync")}</th><th>{t("Status")}</th><th>{t("Seen")}</th><th>{t("Added")}</th><th>{t("Changed")}</th><th>{t("Unchanged")}</th><th>{t("Deleted")}</th><th>{t("Failed")}</th></tr></thead>
          <tbody>
            {runs.slice(0, 5).map((run) => (
              <tr key={run.syncId} data-status={run.status}>
                <td className="small">{fmtTime(run.createTime)} · {t(run.trigger)}</td>
                <td>
                  <span className={`badge ${run.status === "done" ? "ready" : run.status === "failed" ? "error" : "indexing"}`}>{t(run.status)}</span>
                  {run.error && <div className="small" style={{ color: "var(--bad)" }}>{run.error}</div>}
                  {run.failures.map((f) => <div key={f.source} className="small" style={{ color: "var(--bad)" }}>{f.source}: {f.error}</div>)}
                </td>
                <td>{run.seen}</td><td>{run.added}</td><td>{run.changed}</td><td>{run.unchanged}</td><td>{run.deleted}</td><td>{run.failed}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function ApiFilePicker({ datasetId, onAdded }: { datasetId: string; onAdded: () => void }) {
  const [path, setPath] = useState<ApiFile[]>([]);
  const [files, setFiles] = useState<ApiFile[]>([]);
  const [search, setSearch] = useState("");
  const [error, setError] = useState("");
  const [added, setAdded] = useState<string[]>([]);
  const parentId = path.length ? path[path.length - 1].id : null;
  useEffect(() => {
    setError("");
    api<ApiFile[]>("POST", "/api/core/dataset/apiDataset/list", { datasetId, parentId, searchKey: search.trim() || undefined })
      .then(setFiles).catch((e) => { setFiles([]); setError((e as Error).message); });
  }, [datasetId, parentId, search]);
  const importFile = async (file: ApiFile) => {
    setError("");
    try {
      await api("POST", "/api/core/dataset/collection/create/apiCollection", { datasetId, apiFileId: file.id, name: file.name, trainingType: "chunk" });
      setAdded((prev) => [...prev, file.id]);
      onAdded();
    } catch (e) { setError((e as Error).message); }
  };
  return (
    <div className="col" data-testid="api-file-picker" style={{ gap: 6 }}>
      <div className="row small">
        <button className="link" onClick={() => setPath([])}>{t("Library")}</button>
        {path.map((folder, i) => <span key={folder.id}>/ <button className="link" onClick={() => setPath(path.slice(0, i + 1))}>{folder.name}</button></span>)}
        <div className="grow" />
        <input name="apiFileSearch" placeholder={t("Search files")} value={search} onChange={(e) => setSearch(e.target.value)} />
      </div>
      {files.length === 0 && !error && <div className="muted small">{t("No files here.")}</div>}
      {files.map((file) => (
        <div key={file.id} className="row small" data-api-file={file.name}>
          {file.type === "folder"
            ? <button className="link" onClick={() => { setSearch(""); setPath([...path, file]); }}><Icon name="book" /> {file.name}/</button>
            : <span><Icon name="file" /> {file.name}</span>}
          <div className="grow" />
          {file.type === "file" && (added.includes(file.id)
            ? <span className="muted">{t("importing…")}</span>
            : <button onClick={() => importFile(file)}>{t("Import")}</button>)}
        </div>
      ))}
      {error && <div className="error">{error}</div>}
    </div>
  );
}
