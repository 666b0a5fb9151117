import { useEffect, useState } from "react";
import { api, fmtTime } from "../api";
import { ShareLinks } from "./ShareLinks";
import { DatasetName } from "../datasetName";
import { AppDetail, AppSummary, createApp, deleteApp, getApp, listApps, listVersions, publishApp, saveDraft, typeLabel, Version } from "../apps";
import { linkProps, navigate } from "../router";
import { makeNode, SimpleForm, simpleConfigOf, simpleFormOf } from "../workflow/catalogue";
import type { Dataset } from "./Knowledge";
import { ModelPicker, useModels } from "../models";
import { t } from "../lang";
import { Icon } from "../icons";

export function AppsPage({ appId }: { appId?: string }) {
  return appId ? <AppDetailPage appId={appId} /> : <AppList />;
}

function AppList() {
  const [apps, setApps] = useState<AppSummary[] | null>(null);
  const [name, setName] = useState("");
  const [type, setType] = useState("simple");
  const [error, setError] = useState("");
  useEffect(() => { listApps().then(setApps).catch((e) => { setApps([]); setError(e.message); }); }, []);
  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    try {
      const body = type === "simple"
        ? { simpleConfig: simpleConfigOf(simpleFormOf({})) }
        : { nodes: [makeNode("workflowStart", { x: 0, y: 120 })], edges: [], chatConfig: {} };
      const id = await createApp({ name: name.trim(), type: type === "simple" ? "simple" : "advanced", ...body });
      navigate(type === "simple" ? `/apps/${id}` : `/apps/${id}/workflow`);
    } catch (err) { setError((err as Error).message); }
  };
  return (
    <div className="page">
      <div className="page-head"><div><h1>{t("Apps")}</h1><div className="muted">{t("Simple apps answer from knowledge bases with one model; workflows chain nodes visually.")}</div></div></div>
      <form className="card row wrap" onSubmit={create} style={{ marginBottom: 16 }}>
        <input name="appName" placeholder={t("New app name")} value={name} onChange={(e) => setName(e.target.value)} style={{ flex: "1 1 240px" }} />
        <select name="appType" value={type} onChange={(e) => setType(e.target.value)} style={{ width: 200 }}>
          <option value="simple">{t("Simple app (form)")}</option>
          <option value="workflow">{t("Workflow (visual editor)")}</option>
        </select>
        <button className="primary" disabled={!name.trim()}>{t("Create app")}</button>
      </form>
      {error && <div className="error">{error}</div>}
      {apps === null ? <div className="muted">{t("Loading…")}</div> : (
        <div className="grid">
          {apps.map((a) => (
            <div key={a._id} className="card tile col" data-app={a.name} role="link" tabIndex={0} onClick={() => navigate(`/apps/${a._id}`)} onKeyDown={(e) => { if (e.key === "Enter") navigate(`/apps/${a._id}`); }}>
              <div className="row"><h3 style={{ margin: 0 }}><Icon name="apps" /> {a.name}</h3><div className="grow" /><span className="badge">{typeLabel(a.type)}</span></div>
              <div className="muted small grow">{a.intro || t("No description")}</div>
              <div className="row small">
                <a {...linkProps(`/chat/${a._id}`)} onClick={(e) => { e.stopPropagation(); linkProps(`/chat/${a._id}`).onClick(e); }}>{t("Chat")}</a>
                {a.type !== "simple" && <a {...linkProps(`/apps/${a._id}/workflow`)} onClick={(e) => { e.stopPropagation(); linkProps(`/apps/${a._id}/workflow`).onClick(e); }}>{t("Edit workflow")}</a>}
                {a.type === "simple" && <a {...linkProps(`/apps/${a._id}`)} data-testid="edit-app" onClick={(e) => { e.stopPropagation(); linkProps(`/apps/${a._id}`).onClick(e); }}>{t("Edit")}</a>}
                <span className="grow" />
                <span className="muted">{a.updateTime ? new Date(a.updateTime).toLocaleDateString() : ""}</span>
              </div>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

function AppDetailPage({ appId }: { appId: string }) {
  const [app, setApp] = useState<AppDetail | null>(null);
  const [error, setError] = useState("");
  const [tick, setTick] = useState(0);
  useEffect(() => { getApp(appId).then(setApp).catch((e) => setError(e.message)); }, [appId]);
  if (error) return <div className="page"><div className="error">{error}</div></div>;
  if (!app) return <div className="page muted">{t("Loading…")}</div>;
  const remove = async () => {
    if (!confirm(t("Delete the app \"{name}\"?", { name: app.name }))) return;
    await deleteApp(appId);
    navigate("/apps");
  };
  return (
    <div className="page">
      <div className="page-head">
        <div><a className="small" {...linkProps("/apps")}>{t("← Apps")}</a><h1><Icon name="apps" size={20} /> {app.name}</h1><div className="muted small">{typeLabel(app.type)} · {appId}</div></div>
        <div className="row">
          <a {...linkProps(`/chat/${appId}`)}><button><Icon name="chat" /> {t("Chat")}</button></a>
          <a {...linkProps(`/apps/${appId}/logs`)}><button>{t("Logs")}</button></a>
          {app.type !== "simple" && <a {...linkProps(`/apps/${appId}/workflow`)}><button><Icon name="flow" /> {t("Workflow editor")}</button></a>}
          <button className="danger" onClick={remove}>{t("Delete")}</button>
        </div>
      </div>
      <div className="row top" style={{ gap: 16 }}>
        <div className="grow"><SimpleAppForm app={app} onPublished={() => setTick((t) => t + 1)} /></div>
        <div className="side-col"><Versions appId={appId} refresh={tick} /><ShareLinks appId={appId} /></div>
      </div>
    </div>
  );
}

function SimpleAppForm({ app, onPublished }: { app: AppDetail; onPublished: () => void }) {
  const [form, setForm] = useState<SimpleForm>(() => simpleFormOf(app.simpleConfig));
  const [datasets, setDatasets] = useState<Dataset[]>([]);
  const [note, setNote] = useState("");
  const [error, setError] = useState("");
  useEffect(() => { api<Dataset[]>("POST", "/api/core/dataset/list", {}).then(setDatasets).catch(() => setDatasets([])); }, []);
  const isSimple = app.type === "simple";
  const rerankers = useModels("rerank");
  const noReranker = rerankers?.length === 0;
  // FastGPT's rule: a minimum relevance does not apply to hybrid (RRF) scores unless they are reranked
  const hybridNoRerank = form.searchMode === "mixedRecall" && !(form.usingReRank && !noReranker);
  const save = async (publish: boolean) => {
    setError(""); setNote("");
    try {
      const body = { simpleConfig: simpleConfigOf(form) };
      await saveDraft(app._id, body);
      if (publish) { await publishApp(app._id, body); onPublished(); }
      setNote(publish ? t("Published.") : t("Draft saved."));
    } catch (e) { setError((e as Error).message); }
  };
  if (!isSimple) return <div className="card muted">{t("This app is a workflow; edit it in the")} <a {...linkProps(`/apps/${app._id}/workflow`)}>{t("workflow editor")}</a>.</div>;
  const toggle = (id: string) => setForm({ ...form, datasetIds: form.datasetIds.includes(id) ? form.datasetIds.filter((x) => x !== id) : [...form.datasetIds, id] });
  return (
    <div className="card col">
      <h2>{t("Simple app")}</h2>
      <label>{t("Model")}<ModelPicker type="llm" name="model" value={form.model} onChange={(model) => setForm({ ...form, model })} /></label>
      <label>{t("System prompt")}<textarea name="systemPrompt" rows={4} value={form.systemPrompt} onChange={(e) => setForm({ ...form, systemPrompt: e.target.value })} placeholder={t("You are a helpful assistant that answers from the company handbook.")} /></label>
      <div className="col" style={{ gap: 6 }}>
        <b className="small">{t("Knowledge bases")}</b>
        {datasets.length === 0 && <span className="muted small">{t("No knowledge bases yet.")}</span>}
        <div className="row wrap">
          {datasets.map((d) => <label key={d._id} className="inline" title={d.intro || undefined}><input type="checkbox" name={`kb-${d.name}`} data-kb-id={d._id} checked={form.datasetIds.includes(d._id)} onChange={() => toggle(d._id)} /><DatasetName dataset={d} all={datasets} /></label>)}
        </div>
      </div>
      {form.datasetIds.length > 0 && (
        <div className="row wrap">
          <label style={{ flex: 1 }}>{t("Search mode")}
            <select value={form.searchMode} onChange={(e) => setForm({ ...form, searchMode: e.target.value })}>
              <option value="embedding">{t("Semantic")}</option><option value="fullTextRecall">{t("Full text")}</option><option value="mixedRecall">{t("Hybrid")}</option>
            </select>
          </label>
          <label style={{ flex: 1 }} title={hybridNoRerank ? t("Hybrid scores are rank fusions (RRF): a minimum relevance does not apply without rerank (as in FastGPT)") : ""}>{t("Minimum relevance")}{hybridNoRerank ? t(" (not used in hybrid)") : ""}<input type="number" name="similarity" step={0.05} min={0} max={1} disabled={hybridNoRerank} value={form.similarity} onChange={(e) => setForm({ ...form, similarity: +e.target.value })} /></label>
          <label style={{ flex: 1 }}>{t("Quote token limit")}<input type="number" step={100} min={100} value={form.limit} onChange={(e) => setForm({ ...form, limit: +e.target.value })} /></label>
        </div>
      )}
      {form.datasetIds.length > 0 && (
        <div className="row wrap">
          <label className="inline" title={noReranker ? t("No rerank model is configured on this server") : ""}><input type="checkbox" name="usingReRank" disabled={noReranker} checked={form.usingReRank && !noReranker} onChange={(e) => setForm({ ...form, usingReRank: e.target.checked })} /> {t("Rerank")}</label>
          {noReranker && <span className="muted small" data-testid="app-rerank-note">{t("Rerank is unavailable: no rerank model is configured.")}</span>}
          {form.usingReRank && !noReranker && <label style={{ flex: 1 }}>{t("Rerank model")}<ModelPicker type="rerank" name="rerankModel" value={form.rerankModel} onChange={(rerankModel) => setForm({ ...form, rerankModel })} /></label>}
        </div>
      )}
      <label>{t("Welcome text")}<input value={form.welcomeText} onChange={(e) => setForm({ ...form, welcomeText: e.target.value })} /></label>
      <div className="col" style={{ gap: 6 }}>
        <b className="small">{t("Variables (asked before chatting)")}</b>
        {form.variables.map((v, i) => (
          <div key={i} className="row">
            <input placeholder={t("key")} value={v.key} onChange={(e) => setForm({ ...form, variables: form.variables.map((x, j) => (j === i ? { ...x, key: e.target.value } : x)) })} />
            <input placeholder={t("label")} value={v.label} onChange={(e) => setForm({ ...form, variables: form.variables.map((x, j) => (j === i ? { ...x, label: e.target.value } : x)) })} />
            <label className="inline"><input type="checkbox" checked={v.required} onChange={(e) => setForm({ ...form, variables: form.variables.map((x, j) => (j === i ? { ...x, required: e.target.checked } : x)) })} />{t("required")}</label>
            <button className="small" onClick={() => setForm({ ...form, variables: form.variables.filter((_, j) => j !== i) })}>✕</button>
          </div>
        ))}
        <div><button className="small" onClick={() => setForm({ ...form, variables: [...form.variables, { key: "", label: "", required: false }] })}>{t("+ Variable")}</button></div>
      </div>
      <div className="row">
        <button onClick={() => save(false)}>{t("Save draft")}</button>
        <button className="primary" onClick={() => save(true)}>{t("Save & publish")}</button>
        {note && <span className="muted small" data-testid="save-note">{note}</span>}
      </div>
      {error && <div className="error">{error}</div>}
    </div>
  );
}

export function Versions({ appId, onLoad, refresh }: { appId: string; onLoad?: (v: Version) => void; refresh?: number }) {
  const [items, setItems] = useState<Version[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => { listVersions(appId).then(setItems).catch((e) => { setItems([]); setError(e.message); }); }, [appId, refresh]);
  return (
    <div className="card col">
      <h3>{t("Versions")}</h3>
      {error && <div className="muted small">{error}</div>}
      {items?.length === 0 && !error && <div className="muted small">{t("Not published yet.")}</div>}
      {items?.map((v) => (
        <div key={v._id} className="row small">
          <span>{v.isPublish === false ? "draft · " : ""}{v.versionName || `version …${v._id.slice(-6)}`}</span>
          <div className="grow" />
          <span className="muted">{fmtTime(v.time)}</span>
          {onLoad && <button className="small" onClick={() => onLoad(v)}>{t("Load")}</button>}
        </div>
      ))}
    </div>
  );
}
