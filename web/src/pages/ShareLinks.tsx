// An app's share links (FastGPT's outLink): create one with a name and a requests-per-minute limit,
// see its public address, its iframe and script-tag snippets (the widget), edit the sites allowed to
// embed it, delete it. The limits' other settings are in the API (docs/api.md).
import { useEffect, useState } from "react";
import { api, publicOrigin } from "../api";
import { t } from "../lang";

type Link = { _id: string; shareId: string; name: string; usagePoints: number; allowedOrigins: string[]; limit: { QPM: number; expiredTime: string | null; maxUsagePoints: number } };

export const shareUrl = (shareId: string) => `${publicOrigin()}/chat/share?shareId=${shareId}`;
const iframeSnippet = (shareId: string) =>
  `<iframe src="${shareUrl(shareId)}&embed=1" style="width: 100%; height: 600px; border: 0" allow="clipboard-write"></iframe>`;
const scriptSnippet = (shareId: string) =>
  `<script src="${publicOrigin()}/js/widget.js" data-share-id="${shareId}" defer></script>`;

function Snippet({ label, text, testId }: { label: string; text: string; testId: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try { await navigator.clipboard.writeText(text); setCopied(true); setTimeout(() => setCopied(false), 1500); } catch { /* no clipboard: select it */ }
  };
  return (
    <div className="col" style={{ gap: 2 }}>
      <div className="row small"><span className="muted">{label}</span><div className="grow" /><button type="button" className="small" onClick={copy}>{copied ? t("Copied") : t("Copy")}</button></div>
      <textarea readOnly rows={2} className="small mono" value={text} onFocus={(e) => e.currentTarget.select()} data-testid={testId} />
    </div>
  );
}

function Origins({ link, onSaved }: { link: Link; onSaved: () => Promise<void> }) {
  const [text, setText] = useState(link.allowedOrigins.join("\n"));
  const [error, setError] = useState("");
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    const allowedOrigins = text.split(/[\s,]+/).filter(Boolean);
    try { await api("PUT", "/api/support/outLink/update", { _id: link._id, allowedOrigins }); await onSaved(); }
    catch (err) { setError((err as Error).message); }
  };
  return (
    <form className="col" style={{ gap: 2 }} onSubmit={save}>
      <span className="muted small">{t("Sites allowed to embed it (one origin a line, like https://example.com; none: only this console)")}</span>
      <div className="row">
        <textarea name="allowedOrigins" rows={2} className="small grow" value={text} onChange={(e) => setText(e.target.value)} placeholder="https://www.example.com" />
        <button className="small">{t("Save")}</button>
      </div>
      {error && <div className="error small" data-testid="share-origins-error">{error}</div>}
    </form>
  );
}

export function ShareLinks({ appId }: { appId: string }) {
  const [links, setLinks] = useState<Link[] | null>(null);
  const [name, setName] = useState("");
  const [qpm, setQpm] = useState(60);
  const [error, setError] = useState("");
  const load = () => api<Link[]>("GET", "/api/support/outLink/list", undefined, { appId, type: "share" }).then(setLinks).catch((e) => { setLinks([]); setError(e.message); });
  useEffect(() => { load(); }, [appId]);
  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    try {
      await api("POST", "/api/support/outLink/create", { appId, type: "share", name: name.trim(), limit: { QPM: qpm } });
      setName("");
      await load();
    } catch (err) { setError((err as Error).message); }
  };
  const remove = async (link: Link) => {
    if (!confirm(t("Delete the share link \"{name}\"?", { name: link.name }))) return;
    try { await api("DELETE", "/api/support/outLink/delete", undefined, { id: link._id }); await load(); }
    catch (err) { setError((err as Error).message); }
  };
  return (
    <div className="card col" data-testid="share-links">
      <h3>{t("Share links")}</h3>
      <span className="muted small">{t("Anyone with the link chats with the published version, without an account.")}</span>
      {links?.length === 0 && !error && <span className="muted small">{t("No share links yet.")}</span>}
      {links?.map((link) => (
        <div key={link._id} className="col share-link" style={{ gap: 4 }} data-testid="share-link">
          <div className="row small"><b>{link.name}</b><span className="muted">{t("{n} requests/min per visitor", { n: link.limit.QPM })}</span><div className="grow" /><button className="small danger" onClick={() => remove(link)}>{t("Delete")}</button></div>
          <input readOnly className="small" value={shareUrl(link.shareId)} onFocus={(e) => e.currentTarget.select()} data-testid="share-link-url" />
          <Snippet label={t("Chat bubble on your site (script tag)")} text={scriptSnippet(link.shareId)} testId="share-script-snippet" />
          <Snippet label={t("Chat in your page (iframe)")} text={iframeSnippet(link.shareId)} testId="share-iframe-snippet" />
          <Origins key={link.allowedOrigins.join(" ")} link={link} onSaved={load} />
        </div>
      ))}
      <form className="row wrap" onSubmit={create}>
        <input name="shareName" placeholder={t("Link name")} value={name} onChange={(e) => setName(e.target.value)} style={{ flex: "1 1 100%", minWidth: 0 }} />
        <label className="inline small" style={{ flex: "1 1 auto" }} title={t("Requests a minute per visitor (0: no limit)")}>{t("QPM")}<input name="shareQpm" type="number" min={0} value={qpm} onChange={(e) => setQpm(+e.target.value)} style={{ width: 80 }} /></label>
        <button className="primary small" disabled={!name.trim()}>{t("Create link")}</button>
      </form>
      {error && <div className="error small">{error}</div>}
    </div>
  );
}
