// An app's chat logs (/apps/<id>/logs): every conversation from every channel, filtered by channel, date
// and feedback; open one to read it with the visitors' feedback and correct an answer; export as CSV.
import { useCallback, useEffect, useState } from "react";
import { api, download, fmtTime } from "../api";
import { AppDetail, getApp } from "../apps";
import { linkProps } from "../router";
import { Markdown } from "../markdown";
import { Icon } from "../icons";
import { t } from "../lang";

type LogEntry = {
  chatId: string; title: string; customTitle: string; source: string; updateTime: string; createTime: string;
  messageCount: number; userGoodFeedbackCount: number; userBadFeedbackCount: number; markCount: number; tmbId?: string | null;
  ownerType?: "member" | "key" | "visitor"; ownerName?: string;
};
type AdminFeedback = { q: string; a?: string; datasetId?: string; collectionId?: string; feedbackDataId?: string };
type LogRecord = { dataId: string; obj: string; value: any[]; time: string; userGoodFeedback?: string; userBadFeedback?: string; adminFeedback?: AdminFeedback };

const PAGE = 20;
/** FastGPT's channel names (ChatSourceEnum) as the console shows them. */
const SOURCES: [string, string][] = [["online", "Console"], ["api", "API"], ["share", "Share link"], ["test", "Chat test"]];
const FEEDBACK: [string, string][] = [["all", "Any feedback"], ["has_feedback", "Has feedback"], ["good", "Good answers"], ["bad", "Bad answers"], ["marked", "Corrected by the owner"]];
const sourceLabel = (source: string): string => t(SOURCES.find(([s]) => s === source)?.[1] ?? source);
/** Who owns a chat (docs/security.md): a member, an API key or a share-link visitor, with their name. */
const OWNER_KINDS: Record<string, string> = { member: "Member", key: "API key", visitor: "Visitor" };
const ownerLabel = (entry: LogEntry): string =>
  `${t(OWNER_KINDS[entry.ownerType ?? "member"] ?? "Member")}${entry.ownerName ? `: ${entry.ownerName}` : ""}`;

const day = (offset: number): string => {
  const d = new Date();
  d.setDate(d.getDate() + offset);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};
/** A local date's first or last moment, as ISO 8601 for the server. */
const edge = (date: string, end: boolean): string => new Date(`${date}T${end ? "23:59:59.999" : "00:00:00"}`).toISOString();
const textOf = (record: LogRecord): string => (record.value ?? []).map((v) => (v.type === "text" ? v.text?.content ?? "" : "")).join("");

export function LogsPage({ appId }: { appId: string }) {
  const [app, setApp] = useState<AppDetail | null>(null);
  const [source, setSource] = useState("");
  const [feedback, setFeedback] = useState("all");
  const [from, setFrom] = useState(day(-6));
  const [to, setTo] = useState(day(0));
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(1);
  const [data, setData] = useState<{ list: LogEntry[]; total: number } | null>(null);
  const [open, setOpen] = useState<LogEntry | null>(null);
  const [error, setError] = useState("");
  useEffect(() => { getApp(appId).then(setApp).catch((e) => setError(e.message)); }, [appId]);
  const filters = useCallback(() => ({
    appId, dateStart: edge(from, false), dateEnd: edge(to, true), feedbackType: feedback,
    ...(source ? { sources: [source] } : {}), ...(search.trim() ? { chatSearch: search.trim() } : {}),
  }), [appId, from, to, feedback, source, search]);
  const load = useCallback(() => {
    setError("");
    api<{ list: LogEntry[]; total: number }>("POST", "/api/core/app/getChatLogs", { ...filters(), pageNum: page, pageSize: PAGE })
      .then(setData).catch((e) => { setData({ list: [], total: 0 }); setError(e.message); });
  }, [filters, page]);
  useEffect(() => { load(); }, [load]);
  const exportCsv = () => download("/api/core/app/exportChatLogs", { ...filters(), sourcesMap: Object.fromEntries(SOURCES.map(([s, label]) => [s, { label: t(label) }])) }, `chat-logs-${from}-${to}.csv`).catch((e) => setError(e.message));
  const pages = data ? Math.max(1, Math.ceil(data.total / PAGE)) : 1;
  const change = <T,>(set: (v: T) => void) => (v: T) => { set(v); setPage(1); };
  return (
    <div className="page">
      <div className="page-head">
        <div><a className="small" {...linkProps(`/apps/${appId}`)}>← {app?.name ?? t("App")}</a><h1><Icon name="chat" size={20} /> {t("Chat logs")}</h1><div className="muted small">{t("Every conversation with this app: console, API and share links.")}</div></div>
        <button onClick={exportCsv} data-testid="export-csv">{t("Export CSV")}</button>
      </div>
      <div className="card row wrap logs-filters" style={{ marginBottom: 12 }}>
        <label>{t("Channel")}
          <select name="source" value={source} onChange={(e) => change(setSource)(e.target.value)}>
            <option value="">{t("All channels")}</option>
            {SOURCES.map(([value, label]) => <option key={value} value={value}>{t(label)}</option>)}
          </select>
        </label>
        <label>{t("Feedback")}
          <select name="feedback" value={feedback} onChange={(e) => change(setFeedback)(e.target.value)}>
            {FEEDBACK.map(([value, label]) => <option key={value} value={value}>{t(label)}</option>)}
          </select>
        </label>
        <label>{t("From")}<input type="date" name="dateStart" value={from} max={to} onChange={(e) => e.target.value && change(setFrom)(e.target.value)} /></label>
        <label>{t("To")}<input type="date" name="dateEnd" value={to} min={from} onChange={(e) => e.target.value && change(setTo)(e.target.value)} /></label>
        <label className="grow">{t("Title")}<input name="search" placeholder={t("Search titles")} value={search} onChange={(e) => change(setSearch)(e.target.value)} /></label>
      </div>
      {error && <div className="error">{error}</div>}
      <div className="card">
        {!data ? <div className="muted">{t("Loading…")}</div> : data.list.length === 0 ? <div className="muted" data-testid="logs-empty">{t("No conversations match.")}</div> : (
          <div className="table-wrap">
            <table data-testid="logs-table">
              <thead><tr><th>{t("Last message")}</th><th>{t("Channel")}</th><th>{t("Owner")}</th><th>{t("Title")}</th><th>{t("Messages")}</th><th>{t("Feedback")}</th></tr></thead>
              <tbody>
                {data.list.map((entry) => (
                  <tr key={entry.chatId} className="log-row" data-chat={entry.chatId} tabIndex={0} onClick={() => setOpen(entry)} onKeyDown={(e) => { if (e.key === "Enter") setOpen(entry); }}>
                    <td className="small">{fmtTime(entry.updateTime)}</td>
                    <td><span className="badge">{sourceLabel(entry.source)}</span></td>
                    <td className="small" data-testid="log-owner">{ownerLabel(entry)}</td>
                    <td><a href="#" onClick={(e) => e.preventDefault()}>{entry.customTitle || entry.title || t("Untitled")}</a></td>
                    <td>{entry.messageCount}</td>
                    <td className="small nowrap">{entry.userGoodFeedbackCount > 0 && <span title={t("Good answer")} data-testid="good-count"><Icon name="up" /> {entry.userGoodFeedbackCount} </span>}{entry.userBadFeedbackCount > 0 && <span title={t("Bad answer")} className="warn" data-testid="bad-count"><Icon name="down" /> {entry.userBadFeedbackCount} </span>}{entry.markCount > 0 && <span className="badge ready">{t("corrected")} {entry.markCount}</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {data && data.total > PAGE && (
          <div className="row small" style={{ marginTop: 10 }}>
            <button className="small" disabled={page <= 1} onClick={() => setPage(page - 1)}>{t("← Newer")}</button>
            <span className="muted">{page} / {pages} · {data.total}</span>
            <button className="small" disabled={page >= pages} onClick={() => setPage(page + 1)}>{t("Older →")}</button>
          </div>
        )}
      </div>
      {open && <Conversation appId={appId} entry={open} onClose={() => { setOpen(null); load(); }} />}
    </div>
  );
}

/** One conversation: its messages, each answer's feedback, and the owner's correction. */
function Conversation({ appId, entry, onClose }: { appId: string; entry: LogEntry; onClose: () => void }) {
  const [records, setRecords] = useState<LogRecord[] | null>(null);
  const [error, setError] = useState("");
  const load = useCallback(() => {
    api<{ list: LogRecord[] }>("POST", "/api/core/chat/getPaginationRecords", { appId, chatId: entry.chatId, offset: 0, pageSize: 100 })
      .then((d) => setRecords(d.list)).catch((e) => setError(e.message));
  }, [appId, entry.chatId]);
  useEffect(() => { load(); }, [load]);
  return (
    <div className="modal-bg" onClick={onClose}>
      <div className="card modal col" role="dialog" aria-label={t("Conversation")} data-testid="log-conversation" onClick={(e) => e.stopPropagation()}>
        <div className="row"><h2 style={{ margin: 0 }} className="grow">{entry.customTitle || entry.title || t("Untitled")}</h2><button onClick={onClose}>{t("Close")}</button></div>
        <div className="muted small">{sourceLabel(entry.source)} · {fmtTime(entry.createTime)} → {fmtTime(entry.updateTime)} · {entry.chatId}</div>
        {error && <div className="error">{error}</div>}
        {!records ? <div className="muted">{t("Loading…")}</div> : records.map((record, i) => (
          <LogMessage key={record.dataId} appId={appId} chatId={entry.chatId} record={record} question={i > 0 && records[i - 1].obj === "Human" ? textOf(records[i - 1]) : ""} onSaved={load} />
        ))}
      </div>
    </div>
  );
}

function LogMessage({ appId, chatId, record, question, onSaved }: { appId: string; chatId: string; record: LogRecord; question: string; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [q, setQ] = useState(record.adminFeedback?.q ?? question);
  const [a, setA] = useState(record.adminFeedback?.a ?? textOf(record));
  const [error, setError] = useState("");
  const human = record.obj === "Human";
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      await api("POST", "/api/core/chat/feedback/adminUpdate", { appId, chatId, dataId: record.dataId, q, a });
      setEditing(false);
      onSaved();
    } catch (err) { setError((err as Error).message); }
  };
  return (
    <div className={"log-msg " + (human ? "user" : "ai")} data-role={human ? "user" : "ai"}>
      <div className="muted small">{human ? t("Visitor") : t("Answer")} · {fmtTime(record.time)}</div>
      <div className="chunk"><Markdown text={textOf(record) || "—"} /></div>
      {record.userGoodFeedback !== undefined && <div className="small" data-testid="log-good"><Icon name="up" /> {record.userGoodFeedback !== "yes" ? record.userGoodFeedback : t("Good answer")}</div>}
      {record.userBadFeedback !== undefined && <div className="small warn" data-testid="log-bad"><Icon name="down" /> {record.userBadFeedback !== "yes" ? record.userBadFeedback : t("Bad answer")}</div>}
      {record.adminFeedback && !editing && (
        <div className="small log-correction" data-testid="log-correction"><b>{t("Corrected answer:")}</b> {record.adminFeedback.a || "—"}</div>
      )}
      {!human && !editing && <div><button className="small" onClick={() => setEditing(true)}>{record.adminFeedback ? t("Edit correction") : t("Correct this answer")}</button></div>}
      {editing && (
        <form className="col" onSubmit={save}>
          <label>{t("Question")}<input name="correctionQ" value={q} onChange={(e) => setQ(e.target.value)} required /></label>
          <label>{t("Corrected answer")}<textarea name="correctionA" rows={4} value={a} onChange={(e) => setA(e.target.value)} /></label>
          <div className="row"><button className="primary small" disabled={!q.trim()}>{t("Save correction")}</button><button type="button" className="small" onClick={() => setEditing(false)}>{t("Cancel")}</button></div>
          {error && <div className="error small">{error}</div>}
        </form>
      )}
    </div>
  );
}
