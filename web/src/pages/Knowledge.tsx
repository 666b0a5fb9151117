import { useCallback, useEffect, useRef, useState } from "react";
import { api, fmtTime } from "../api";
import { linkProps, navigate } from "../router";
import { SearchTest } from "./SearchTest";
import { Icon } from "../icons";
import { ModelPicker } from "../models";
import { t } from "../lang";
import { AUTO_CHUNKS, ChunkChoice, chunkFields, ChunkPreview, ChunkSettingsForm } from "./ChunkSettings";
import { plural, useEscape } from "../i18n";
import { MultilingualHint } from "./MultilingualHint";
import { CHUNK_TRAINING, TrainingChoice, trainingFields, TrainingErrors, trainingLabel, TrainingModeForm } from "./Training";
import { SourceFields, SourcePanel } from "./SourceSync";

export type Dataset = SourceFields & {
  _id: string; name: string; intro: string; vectorModel: { model: string }; updateTime: string; type?: string; parentId?: string | null;
  vectorModelAuto?: { pending: boolean; reason: string } | null;
};
export type Collection = {
  _id: string; name: string; type: string; status: string; errorMsg: string | null; chunksTotal: number;
  chunksDone: number; dataAmount: number; trainingAmount: number; hasError: boolean; updateTime: string; rawLink?: string; queuePosition?: number | null;
  trainingType?: string; autoIndexes?: boolean; imageIndex?: boolean; trainingErrorCount?: number;
  tags?: string[];
};
type Chunk = { id: string; q: string; a: string; chunkIndex: number; updateTime: string; indexes?: { type: string; text: string }[] };

export function KnowledgePage({ datasetId, tab }: { datasetId?: string; tab?: string }) {
  if (datasetId === "folder") return <DatasetList key={tab ?? ""} folderId={tab} />;
  return datasetId ? <DatasetDetail id={datasetId} tab={tab ?? "files"} /> : <DatasetList key="" />;
}

type Crumb = { parentId: string; parentName: string };
const folderPath = (id?: string | null) => (id ? `/knowledge/folder/${id}` : "/knowledge");

/** The folders from the root to ``folderId``: links back up (FastGPT's ``core/dataset/paths``). */
function Breadcrumb({ folderId }: { folderId?: string | null }) {
  const [crumbs, setCrumbs] = useState<Crumb[]>([]);
  useEffect(() => {
    if (!folderId) { setCrumbs([]); return; }
    api<Crumb[]>("GET", "/api/core/dataset/paths", undefined, { parentId: folderId }).then(setCrumbs).catch(() => setCrumbs([]));
  }, [folderId]);
  return (
    <nav className="crumbs small" aria-label={t("Folders")} data-testid="breadcrumb">
      <a {...linkProps("/knowledge")}>{t("Knowledge bases")}</a>
      {crumbs.map((c) => <span key={c.parentId}>/ <a {...linkProps(folderPath(c.parentId))}>{c.parentName}</a></span>)}
    </nav>
  );
}

function DatasetList({ folderId }: { folderId?: string }) {
  const [items, setItems] = useState<Dataset[] | null>(null);
  const [name, setName] = useState("");
  const [intro, setIntro] = useState("");
  const [vectorModel, setVectorModel] = useState("");
  const [error, setError] = useState("");
  const load = () => api<Dataset[]>("POST", "/api/core/dataset/list", { parentId: folderId ?? "" }).then(setItems).catch((e) => setError(e.message));
  useEffect(() => { load(); }, [folderId]);
  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    try {
      const id = await api<string>("POST", "/api/core/dataset/create", { name: name.trim(), intro, parentId: folderId ?? null, ...(vectorModel ? { vectorModel } : {}) });
      navigate(`/knowledge/${id}`);
    } catch (err) { setError((err as Error).message); }
  };
  const newFolder = async () => {
    const folderName = prompt(t("Folder name"));
    if (!folderName?.trim()) return;
    setError("");
    try {
      await api<string>("POST", "/api/core/dataset/create", { name: folderName.trim(), type: "folder", parentId: folderId ?? null });
      load();
    } catch (err) { setError((err as Error).message); }
  };
  const removeFolder = async () => {
    if (!folderId) return;
    const here = await api<Dataset>("GET", "/api/core/dataset/detail", undefined, { id: folderId });
    if (!confirm(t("Delete the folder \"{name}\" and everything in it?", { name: here.name }))) return;
    try {
      await api("DELETE", "/api/core/dataset/delete", undefined, { id: folderId });
      navigate(folderPath(here.parentId));
    } catch (err) { setError((err as Error).message); }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          {folderId && <Breadcrumb folderId={folderId} />}
          <h1>{t("Knowledge bases")}</h1><div className="muted">{t("Upload documents, watch them being indexed, and test retrieval.")}</div>
        </div>
        <div className="row">
          <button onClick={newFolder}>{t("+ Folder")}</button>
          {folderId && <button className="danger" onClick={removeFolder}>{t("Delete folder")}</button>}
        </div>
      </div>
      <form className="card row wrap" onSubmit={create} style={{ marginBottom: 16 }}>
        <input name="datasetName" placeholder={t("New knowledge base name")} value={name} onChange={(e) => setName(e.target.value)} style={{ flex: "1 1 220px" }} />
        <input name="datasetIntro" placeholder={t("Description (optional)")} value={intro} onChange={(e) => setIntro(e.target.value)} style={{ flex: "2 1 300px" }} />
        <label className="inline small" style={{ flex: "1 1 220px" }}>{t("Embedding model")} <ModelPicker type="embedding" name="vectorModel" value={vectorModel} onChange={setVectorModel} /></label>
        <button className="primary" disabled={!name.trim()}>{t("Create")}</button>
      </form>
      {error && <div className="error">{error}</div>}
      {items === null ? <div className="muted">{t("Loading…")}</div> : items.length === 0 ? (
        <div className="card muted">{t("No knowledge bases yet. Create one above, then drop files into it.")}</div>
      ) : (
        <div className="grid">
          {items.map((d) => d.type === "folder" ? (
            <a key={d._id} className="card tile" data-folder={d.name} {...linkProps(folderPath(d._id))}>
              <h3>📁 {d.name}</h3>
              <div className="muted small">{d.intro || t("Folder")}</div>
            </a>
          ) : (
            <a key={d._id} className="card tile" {...linkProps(`/knowledge/${d._id}`)}>
              <h3><Icon name="book" /> {d.name}</h3>
              <div className="muted small">{d.intro || t("No description")}</div>
              <div className="muted small" style={{ marginTop: 8 }}>{d.vectorModel?.model} · {fmtTime(d.updateTime)}</div>
            </a>
          ))}
        </div>
      )}
    </div>
  );
}

function DatasetDetail({ id, tab }: { id: string; tab: string }) {
  const [dataset, setDataset] = useState<Dataset | null>(null);
  const [error, setError] = useState("");
  const reload = useCallback(() => { api<Dataset>("GET", "/api/core/dataset/detail", undefined, { id }).then(setDataset).catch((e) => setError(e.message)); }, [id]);
  useEffect(reload, [reload]);
  const [filesShown, setFilesShown] = useState(0);
  const refreshFiles = useCallback(() => setFilesShown((n) => n + 1), []);
  const remove = async () => {
    if (!confirm(t("Delete the knowledge base \"{name}\" and all its files?", { name: dataset?.name ?? "" }))) return;
    await api("DELETE", "/api/core/dataset/delete", undefined, { id });
    navigate(folderPath(dataset?.parentId));
  };
  if (error) return <div className="page"><div className="error">{error}</div></div>;
  if (!dataset) return <div className="page muted">{t("Loading…")}</div>;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          {dataset.parentId ? <Breadcrumb folderId={dataset.parentId} /> : <a className="small" {...linkProps("/knowledge")}>{t("← Knowledge bases")}</a>}
          <h1><Icon name="book" size={20} /> {dataset.name}</h1>
          <div className="muted small">{dataset.intro ? `${dataset.intro} · ` : ""}{t("embedding model")} <span data-testid="dataset-model">{dataset.vectorModel?.model}</span></div>
          {dataset.vectorModelAuto && <div className="muted small" data-testid="dataset-model-auto">{t("auto:")} {dataset.vectorModelAuto.reason}</div>}
        </div>
        <button className="danger" onClick={remove}>{t("Delete")}</button>
      </div>
      <div className="tabs">
        <a className={tab === "files" ? "active" : ""} {...linkProps(`/knowledge/${id}`)}>{t("Files & data")}</a>
        <a className={tab === "search" ? "active" : ""} {...linkProps(`/knowledge/${id}/search`)}>{t("Search test")}</a>
      </div>
      {tab !== "search" && <SourcePanel datasetId={id} dataset={dataset} onChanged={refreshFiles} />}
      {tab === "search" ? <SearchTest datasetId={id} /> : <Collections key={filesShown} datasetId={id} model={dataset.vectorModel?.model ?? ""} onModelChanged={reload} />}
    </div>
  );
}

const FINAL = new Set(["ready", "error"]);

function Collections({ datasetId, model, onModelChanged }: { datasetId: string; model: string; onModelChanged: () => void }) {
  const [items, setItems] = useState<Collection[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState("");
  const [open, setOpen] = useState<Collection | null>(null);
  const [failed, setFailed] = useState<Collection | null>(null);
  const [folders, setFolders] = useState<Collection[]>([]);  // the collection folders opened, outermost first
  const parentId = folders.length ? folders[folders.length - 1]._id : null;
  const timer = useRef<number | undefined>(undefined);

  const load = useCallback(async () => {
    try {
      const page = await api<{ list: Collection[]; total: number }>("POST", "/api/core/dataset/collection/listV2", { datasetId, parentId, offset: 0, pageSize: 30 });
      setItems(page.list);
      setTotal(page.total);
      return page.list.some((c) => !FINAL.has(c.status));
    } catch (e) {
      setError((e as Error).message);
      return false;
    }
  }, [datasetId, parentId]);

  // Live progress: poll every second while anything is still being ingested.
  const poll = useCallback(async () => {
    window.clearTimeout(timer.current);
    if (await load()) timer.current = window.setTimeout(poll, 1000);
  }, [load]);
  useEffect(() => { poll(); return () => window.clearTimeout(timer.current); }, [poll]);

  const retry = async (c: Collection) => {
    await api("POST", "/api/core/dataset/training/updateTrainingData", { datasetId, collectionId: c._id });
    poll();
  };
  const newFolder = async () => {
    const name = prompt(t("Folder name"));
    if (!name?.trim()) return;
    setError("");
    try {
      await api("POST", "/api/core/dataset/collection/create", { datasetId, parentId, name: name.trim(), type: "folder" });
      poll();
    } catch (e) { setError((e as Error).message); }
  };
  const setTags = async (c: Collection, tags: string[]) => {
    setError("");
    try {
      await api("PUT", "/api/core/dataset/collection/update", { id: c._id, tags });
      load();
    } catch (e) { setError((e as Error).message); }
  };
  const remove = async (c: Collection) => {
    const question = c.type === "folder" ? "Delete the folder \"{name}\" and everything in it?" : "Delete \"{name}\"?";
    if (!confirm(t(question, { name: c.name }))) return;
    await api("DELETE", "/api/core/dataset/collection/delete", undefined, { id: c._id });
    poll();
  };

  return (
    <div className="col">
      <Importers datasetId={datasetId} parentId={parentId} onAdded={poll} model={total === 0 ? model : ""} onModelChanged={onModelChanged} />
      {error && <div className="error">{error}</div>}
      <div className="row small">
        <nav className="crumbs grow" data-testid="collection-path">
          <button className="link" onClick={() => setFolders([])}>{t("All files")}</button>
          {folders.map((f, i) => <span key={f._id}>/ <button className="link" onClick={() => setFolders(folders.slice(0, i + 1))}>{f.name}</button></span>)}
        </nav>
        <button onClick={newFolder}>{t("+ Folder")}</button>
      </div>
      <div className="card table-wrap" style={{ padding: 0 }}>
        <table className="collections">
          <thead><tr><th>{t("Source")}</th><th>{t("Status")}</th><th>{t("Progress")}</th><th>{t("Chunks")}</th><th>{t("Updated")}</th><th>{t("Tags")}</th><th></th></tr></thead>
          <tbody>
            {items.length === 0 && <tr><td colSpan={7} className="muted">{t("Nothing here yet: drop files above, or import a web page or text.")}</td></tr>}
            {items.map((c) => {
              const pct = c.status === "ready" ? 100 : c.chunksTotal ? Math.round((100 * c.chunksDone) / c.chunksTotal) : 0;
              return (
                <tr key={c._id} data-collection={c.name} data-status={c.status}>
                  <td>{c.type === "folder"
                    ? <button className="link" data-collection-folder={c.name} onClick={() => setFolders([...folders, c])} title={t("Open the folder")}>📁 {c.name}</button>
                    : <button className="link" onClick={() => setOpen(c)} title={t("Browse and edit chunks")}><Icon name={c.type === "link" ? "link" : c.type === "file" ? "file" : "text"} /> {c.name}</button>}{trainingLabel(c) && <span className="badge" data-training={c.trainingType} style={{ marginLeft: 6 }}>{trainingLabel(c)}</span>}</td>
                  <td>
                    <span className={`badge ${c.status}`}>{c.status === "waiting" && c.queuePosition ? t("queued (#{n})", { n: c.queuePosition }) : t(c.status)}</span>
                    {c.errorMsg && <div className="small" style={{ color: "var(--bad)", marginTop: 4, maxWidth: 320 }}>{c.errorMsg}</div>}
                    {!!c.trainingErrorCount && <div><button className="link small" style={{ color: "var(--bad)" }} onClick={() => setFailed(c)}>{t("{n} failed chunks", { n: c.trainingErrorCount })}</button></div>}
                  </td>
                  <td><div className={`progress ${c.status === "ready" ? "done" : c.status === "error" ? "bad" : ""}`}><div style={{ width: `${pct}%` }} /></div><div className="muted small">{pct}%</div></td>
                  <td>{c.chunksDone}/{c.chunksTotal || "?"}</td>
                  <td className="muted small">{fmtTime(c.updateTime)}</td>
                  <td><Tags tags={c.tags ?? []} onChange={(tags) => setTags(c, tags)} /></td>
                  <td><div className="row small">
                    {c.status === "error" && <button onClick={() => retry(c)}>{t("↻ Retry")}</button>}
                    <button className="danger" onClick={() => remove(c)}>{t("Delete")}</button>
                  </div></td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {total > items.length && <div className="muted small" style={{ padding: 10 }}>{t("Showing")} {items.length} {t("of")} {total}</div>}
      </div>
      {open && <ChunkBrowser collection={open} onClose={() => { setOpen(null); poll(); }} />}
      {failed && <TrainingErrors datasetId={datasetId} collection={failed} onClose={() => { setFailed(null); poll(); }} />}
    </div>
  );
}

/** A collection's tags: each with × to take it off, and a field that adds one (Enter). */
function Tags({ tags, onChange }: { tags: string[]; onChange: (tags: string[]) => void }) {
  const [draft, setDraft] = useState("");
  const add = (e: React.FormEvent) => {
    e.preventDefault();
    const tag = draft.trim();
    setDraft("");
    if (tag && !tags.includes(tag)) onChange([...tags, tag]);
  };
  return (
    <form className="tags" onSubmit={add}>
      {tags.map((tag) => (
        <span key={tag} className="tag" data-tag={tag}>{tag}<button type="button" aria-label={t("Remove tag {tag}", { tag })} onClick={() => onChange(tags.filter((x) => x !== tag))}>×</button></span>
      ))}
      <input className="tag-input" name="tag" placeholder={t("+ tag")} value={draft} onChange={(e) => setDraft(e.target.value)} />
    </form>
  );
}

// ``model``: the knowledge base's embedding model while it is empty ("" once it holds data: no hint then)
function Importers({ datasetId, parentId = null, onAdded, model, onModelChanged }: { datasetId: string; parentId?: string | null; onAdded: () => void; model: string; onModelChanged: () => void }) {
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState<string[]>([]);
  const [errors, setErrors] = useState<string[]>([]);
  const [link, setLink] = useState("");
  const [textName, setTextName] = useState("");
  const [text, setText] = useState("");
  const [mode, setMode] = useState<"file" | "link" | "text">("file");
  const [choice, setChoice] = useState<ChunkChoice>(AUTO_CHUNKS);
  const [training, setTraining] = useState<TrainingChoice>(CHUNK_TRAINING);
  const [staged, setStaged] = useState<File[]>([]);
  const input = useRef<HTMLInputElement>(null);
  const stage = (files: FileList | File[]) => { const list = Array.from(files); setErrors([]); setStaged((prev) => [...prev, ...list]); };

  const upload = async (files: File[]) => {
    const list = Array.from(files);
    setStaged([]);
    setErrors([]);
    setBusy(list.map((f) => f.name));
    await Promise.all(list.map(async (file) => {
      const form = new FormData();
      form.append("file", file, file.name);
      form.append("data", JSON.stringify({ datasetId, parentId, ...trainingFields(training), ...chunkFields(choice) }));
      try { await api("POST", "/api/core/dataset/collection/create/localFile", form); }
      catch (e) { setErrors((prev) => [...prev, `${file.name}: ${(e as Error).message}`]); }
      finally { setBusy((prev) => prev.filter((n) => n !== file.name)); onAdded(); }
    }));
  };
  const addLink = async (e: React.FormEvent) => {
    e.preventDefault();
    setErrors([]);
    try { await api("POST", "/api/core/dataset/collection/create/link", { datasetId, parentId, link: link.trim(), ...trainingFields(training), ...chunkFields(choice) }); setLink(""); onAdded(); }
    catch (err) { setErrors([(err as Error).message]); }
  };
  const addText = async (e: React.FormEvent) => {
    e.preventDefault();
    setErrors([]);
    try { await api("POST", "/api/core/dataset/collection/create/text", { datasetId, parentId, name: textName.trim() || "Text", text, ...trainingFields(training), ...chunkFields(choice) }); setText(""); setTextName(""); onAdded(); }
    catch (err) { setErrors([(err as Error).message]); }
  };

  return (
    <div className="card col">
      <div className="row">
        <h3 style={{ margin: 0 }}>{t("Add data")}</h3>
        <div className="row small">
          {(["file", "link", "text"] as const).map((m) => (
            <button key={m} className={mode === m ? "primary" : ""} onClick={() => setMode(m)}>{m === "file" ? t("Files") : m === "link" ? t("Web page") : t("Text")}</button>
          ))}
        </div>
      </div>
      {mode === "file" && (
        <div
          className={"dropzone" + (over ? " over" : "")}
          onClick={() => input.current?.click()}
          onDragOver={(e) => { e.preventDefault(); setOver(true); }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => { e.preventDefault(); setOver(false); if (e.dataTransfer.files.length) stage(e.dataTransfer.files); }}
        >
          <Icon name="upload" size={26} />
          <div><b>{t("Drop files here")}</b> {t("or click to choose — several at once; preview their chunks, then import.")}</div>
          <div className="small">{t("PDF, Word, Excel, Markdown, HTML, CSV, TXT…")}</div>
          <input ref={input} type="file" multiple hidden data-testid="file-input" onChange={(e) => { if (e.target.files?.length) stage(e.target.files); e.target.value = ""; }} />
        </div>
      )}
      <ChunkSettingsForm value={choice} onChange={setChoice} />
      <TrainingModeForm value={training} onChange={setTraining} />
      {mode === "file" && staged.length > 0 && (
        <div className="col" data-testid="staged-files" style={{ gap: 6 }}>
          <div className="row wrap small">
            <b>{t("Ready to import:")}</b> {staged.map((f) => f.name).join(", ")}
            <div className="grow" />
            <button type="button" className="small" onClick={() => setStaged([])}>{t("Clear")}</button>
            <button type="button" className="primary" onClick={() => upload(staged)}>{t("Import")} {plural(staged.length, "file")}</button>
          </div>
          {model && <MultilingualHint datasetId={datasetId} model={model} file={staged[0]} onSwitched={onModelChanged} />}
          <ChunkPreview key={staged[0].name + JSON.stringify(choice)} datasetId={datasetId} choice={choice} file={staged[0]} />
        </div>
      )}
      {mode === "link" && (
        <form className="row" onSubmit={addLink}>
          <input name="link" placeholder={t("https://example.com/page")} value={link} onChange={(e) => setLink(e.target.value)} />
          <button className="primary" disabled={!link.trim()}>{t("Import page")}</button>
        </form>
      )}
      {mode === "text" && (
        <form className="col" onSubmit={addText}>
          <input name="textName" placeholder={t("Name")} value={textName} onChange={(e) => setTextName(e.target.value)} />
          <textarea name="text" rows={5} placeholder={t("Paste text…")} value={text} onChange={(e) => setText(e.target.value)} />
          {model && <MultilingualHint datasetId={datasetId} model={model} text={text} onSwitched={onModelChanged} />}
          <div><button className="primary" disabled={!text.trim()}>{t("Import text")}</button></div>
          <ChunkPreview key={JSON.stringify(choice)} datasetId={datasetId} choice={choice} text={text} />
        </form>
      )}
      {busy.length > 0 && <div className="muted small">{t("Uploading")} {busy.join(", ")}…</div>}
      {errors.map((e) => <div key={e} className="error">{e}</div>)}
    </div>
  );
}

function ChunkBrowser({ collection, onClose }: { collection: Collection; onClose: () => void }) {
  const [rows, setRows] = useState<Chunk[]>([]);
  const [total, setTotal] = useState(0);
  const [search, setSearch] = useState("");
  const [offset, setOffset] = useState(0);
  const [editing, setEditing] = useState<Chunk | null>(null);
  const [error, setError] = useState("");
  const size = 20;
  useEscape(onClose);
  const load = useCallback(() => {
    api<{ list: Chunk[]; total: number }>("POST", "/api/core/dataset/data/v2/list", { collectionId: collection._id, offset, pageSize: size, searchText: search })
      .then((p) => { setRows(p.list); setTotal(p.total); })
      .catch((e) => setError(e.message));
  }, [collection._id, offset, search]);
  useEffect(load, [load]);
  const save = async () => {
    if (!editing) return;
    try {
      await api("PUT", "/api/core/dataset/data/update", { dataId: editing.id, q: editing.q, a: editing.a });
      setEditing(null);
      load();
    } catch (e) { setError((e as Error).message); }
  };
  const remove = async (row: Chunk) => {
    await api("DELETE", "/api/core/dataset/data/delete", undefined, { id: row.id });
    load();
  };
  return (
    <div className="modal-bg" onClick={onClose}>
      <div className="card modal col" onClick={(e) => e.stopPropagation()}>
        <div className="row"><h2 style={{ margin: 0 }}>{collection.name}</h2><div className="grow" /><button onClick={onClose}>{t("Close")}</button></div>
        <div className="muted small">{plural(total, "chunk")} {t("· click a chunk to edit it (it is re-embedded on save)")}</div>
        <input placeholder={t("Filter chunks…")} value={search} onChange={(e) => { setOffset(0); setSearch(e.target.value); }} />
        {error && <div className="error">{error}</div>}
        {rows.map((row) => editing?.id === row.id ? (
          <div key={row.id} className="chunk col">
            <textarea rows={6} value={editing.q} onChange={(e) => setEditing({ ...editing, q: e.target.value })} />
            <textarea rows={2} placeholder={t("Answer / supplementary text (optional)")} value={editing.a} onChange={(e) => setEditing({ ...editing, a: e.target.value })} />
            <div className="row small"><button className="primary" onClick={save}>{t("Save")}</button><button onClick={() => setEditing(null)}>{t("Cancel")}</button></div>
          </div>
        ) : (
          <div key={row.id} className="chunk" onClick={() => setEditing(row)} style={{ cursor: "text" }}>
            <div className="row small muted"><span>#{row.chunkIndex}</span><div className="grow" /><button className="danger" onClick={(e) => { e.stopPropagation(); remove(row); }}>{t("Delete")}</button></div>
            <pre>{row.q}</pre>
            {row.a && <pre className="muted" style={{ marginTop: 6 }}>{row.a}</pre>}
            {(row.indexes || []).filter((index) => index.type !== "default").map((index, i) => (
              <div key={i} className="small muted" data-index-type={index.type} style={{ marginTop: 4 }}>{index.type}: {index.text}</div>
            ))}
          </div>
        ))}
        <div className="row small">
          <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - size))}>{t("← Previous")}</button>
          <span className="muted">{total ? `${offset + 1}–${Math.min(offset + size, total)} of ${total}` : ""}</span>
          <button disabled={offset + size >= total} onClick={() => setOffset(offset + size)}>{t("Next →")}</button>
        </div>
      </div>
    </div>
  );
}
