import { useEffect, useState } from "react";
import { api, fmtTime } from "../api";
import { AppSummary, listApps } from "../apps";
import { t } from "../lang";

type Key = { _id: string; name: string; apiKey: string; appId: string | null; usagePoints: number; createTime: string; lastUsedTime: string | null };
type Totals = { inputTokens: number; outputTokens: number; totalPoints: number; records: number };
type Summary = { days: number; byApp: ({ appId: string | null; appName: string } & Totals)[]; byDay: ({ day: string } & Totals)[]; total: Totals };

export function KeysPage({ currentKeyId }: { currentKeyId?: string | null }) {
  const [keys, setKeys] = useState<Key[]>([]);
  const [apps, setApps] = useState<AppSummary[]>([]);
  const [name, setName] = useState("");
  const [appId, setAppId] = useState("");
  const [created, setCreated] = useState("");
  const [error, setError] = useState("");
  const [days, setDays] = useState(30);
  const [usage, setUsage] = useState<Summary | null>(null);

  const load = () => api<Key[]>("GET", "/api/support/openapi/list").then(setKeys).catch((e) => setError(e.message));
  useEffect(() => { load(); listApps().then(setApps).catch(() => setApps([])); }, []);
  useEffect(() => { api<Summary>("GET", "/api/support/usage/summary", undefined, { days }).then(setUsage).catch((e) => setError(e.message)); }, [days]);

  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    if (!name.trim()) { setError("Give the key a name you will recognise (e.g. website bot)."); return; }
    try {
      setCreated(await api<string>("POST", "/api/support/openapi/create", { name: name.trim(), appId: appId || undefined }));
      setName("");
      load();
    } catch (err) { setError((err as Error).message); }
  };
  const revoke = async (k: Key) => {
    if (!confirm(t("Revoke \"{name}\"? Programs using it stop working at once.", { name: k.name }))) return;
    try { await api("DELETE", "/api/support/openapi/delete", undefined, { id: k._id }); load(); }
    catch (err) { setError((err as Error).message); }
  };
  const appName = (id: string | null) => (id ? apps.find((a) => a._id === id)?.name ?? id : "");
  const maxDay = Math.max(1, ...(usage?.byDay ?? []).map((d) => d.inputTokens + d.outputTokens));

  return (
    <div className="page">
      <div className="page-head"><div><h1>{t("Keys & usage")}</h1><div className="muted">{t("API keys call every Fathom API; a key limited to one app can only chat with it.")}</div></div></div>
      {error && <div className="error" style={{ marginBottom: 12 }}>{error}</div>}
      <div className="card col" style={{ marginBottom: 16 }}>
        <h2>{t("API keys")}</h2>
        <form className="row wrap" onSubmit={create}>
          <input name="keyName" placeholder={t("Key name (e.g. website bot)")} value={name} onChange={(e) => setName(e.target.value)} style={{ flex: "1 1 220px" }} />
          <select name="keyApp" value={appId} onChange={(e) => setAppId(e.target.value)} style={{ width: 240 }}>
            <option value="">{t("Whole team (all APIs)")}</option>
            {apps.map((a) => <option key={a._id} value={a._id}>{t("Only app:")} {a.name}</option>)}
          </select>
          <button className="primary" disabled={!name.trim()} title={name.trim() ? "" : t("Name the key first")}>{t("Create key")}</button>
        </form>
        {created && (
          <div className="card col" style={{ background: "#f0fdf4", borderColor: "#bbf7d0" }} data-testid="new-key">
            <b>{t("Copy this key now — it is shown only once.")}</b>
            <div className="row"><code style={{ fontSize: 14 }}>{created}</code><button className="small" onClick={() => navigator.clipboard?.writeText(created)}>{t("Copy")}</button><div className="grow" /><button className="small" onClick={() => setCreated("")}>{t("Done")}</button></div>
          </div>
        )}
        <div className="table-wrap"><table>
          <thead><tr><th>{t("Name")}</th><th>{t("Key")}</th><th>{t("Scope")}</th><th>{t("Created")}</th><th>{t("Last used")}</th><th></th></tr></thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k._id} data-key={k.name}>
                <td>{k.name}</td><td><code>{k.apiKey}</code></td><td>{k.appId ? t("app: {name}", { name: appName(k.appId) }) : t("team")}</td>
                <td className="muted small">{fmtTime(k.createTime)}</td><td className="muted small">{fmtTime(k.lastUsedTime) || t("never")}</td>
                <td>{k._id === currentKeyId
                  ? <span className="muted small" title={t("Sign in with another owner or admin key to revoke this one")}>{t("signed in with this key")}</span>
                  : <button className="small danger" onClick={() => revoke(k)}>{t("Revoke")}</button>}</td>
              </tr>
            ))}
          </tbody>
        </table></div>
      </div>
      <div className="card col">
        <div className="row"><h2 style={{ margin: 0 }}>{t("Usage")}</h2><div className="grow" />
          <select value={days} onChange={(e) => setDays(+e.target.value)} style={{ width: 160 }}>
            {[7, 30, 90].map((d) => <option key={d} value={d}>{t("Last")} {d} {t("days")}</option>)}
          </select>
        </div>
        {usage && (
          <>
            <div className="row wrap" style={{ gap: 24 }}>
              <Stat label={t("Input tokens")} value={usage.total.inputTokens} /><Stat label={t("Output tokens")} value={usage.total.outputTokens} />
              <Stat label={t("Points")} value={usage.total.totalPoints} /><Stat label={t("Calls")} value={usage.total.records} />
            </div>
            {usage.total.totalPoints === 0 && usage.total.records > 0 && (
              <div className="muted small" data-testid="points-note">{t("Points are the models' prices: (input tokens ×")} <code>{t("input_price")}</code> {t("+ output tokens ×")} <code>{t("output_price")}</code>{t(") / 1,000, set per model in the models file (")}<code>{t("FATHOM_MODELS_FILE")}</code>{t("). No model here has a price, so every call counts 0 points.")}</div>
            )}
            <h3>{t("Per day")}</h3>
            {usage.byDay.length === 0 ? <div className="muted small">{t("No usage in this period.")}</div> : (
              <div className="row" style={{ alignItems: "flex-end", height: 120, gap: 4 }}>
                {usage.byDay.map((d) => (
                  <div key={d.day} title={`${d.day}: ${fmt(d.inputTokens)} in / ${fmt(d.outputTokens)} out`} style={{ flex: 1, maxWidth: 40, display: "flex", flexDirection: "column", alignItems: "center", gap: 4 }}>
                    <div style={{ width: "100%", background: "var(--accent)", borderRadius: 4, height: Math.max(3, (90 * (d.inputTokens + d.outputTokens)) / maxDay) }} />
                    <span className="muted" style={{ fontSize: 10 }}>{d.day.slice(5)}</span>
                  </div>
                ))}
              </div>
            )}
            <h3>{t("Per app")}</h3>
            <div className="table-wrap"><table>
              <thead><tr><th>{t("App")}</th><th>{t("Input tokens")}</th><th>{t("Output tokens")}</th><th>{t("Points")}</th><th>{t("Calls")}</th></tr></thead>
              <tbody>
                {usage.byApp.map((a) => (
                  <tr key={a.appId ?? "none"}><td>{a.appId ? a.appName || a.appId : <span className="muted">{t("knowledge bases / no app")}</span>}</td><td>{fmt(a.inputTokens)}</td><td>{fmt(a.outputTokens)}</td><td>{fmtPoints(a.totalPoints)}</td><td>{fmt(a.records)}</td></tr>
                ))}
              </tbody>
            </table></div>
          </>
        )}
      </div>
    </div>
  );
}

const fmt = (n: number) => n.toLocaleString();
const fmtPoints = (n: number) => n.toLocaleString(undefined, { maximumFractionDigits: 4 });

function Stat({ label, value }: { label: string; value: number }) {
  return <div><div className="muted small">{label}</div><div style={{ fontSize: 22, fontWeight: 600 }}>{label === "Points" ? fmtPoints(value) : fmt(value)}</div></div>;
}
